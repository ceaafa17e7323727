-- A workflow deleted through DELETE /api/v1/workflows/{id} is archived, not removed: its executions,
-- logs and versions stay readable by id, while lists, the v1 routes and deployments no longer see it.
alter table workflows add column archived_at timestamptz;
