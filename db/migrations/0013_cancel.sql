-- Cancel: a queued or processing execution may end `cancelled` (POST
-- /api/workflows/{id}/executions/{executionId}/cancel, admin `executions.cancel`). The API records
-- the end; the runner holding it hears of it (db/execution-cancels.ts) and stops, then adds the trace
-- and the cost of what ran.
alter table executions drop constraint executions_status_check;
alter table executions add constraint executions_status_check
  check (status in ('queued', 'processing', 'completed', 'failed', 'cancelled'));
-- When it was cancelled, and by whom: `user:<id>` (a personal key), `key:<id>` (a workspace key) or
-- `admin` (the admin plane). Set together with status `cancelled`, never otherwise.
alter table executions add column cancelled_at timestamptz;
alter table executions add column cancelled_by text;
