-- Paused executions (an `approval` block, runner/blocks/approval.ts): an execution waiting for a person
-- is `paused`: held by no runner, no job and no concurrency slot, like a parked one
-- (db/execution-parks.ts), with `resume_at` its timeout (null: none) and `pause` what the Job record
-- shows as metadata.pause. A resume (db/execution-pauses.ts) turns it back to `processing` once.
alter table executions drop constraint executions_status_check;
alter table executions add constraint executions_status_check
  check (status in ('queued', 'processing', 'paused', 'completed', 'failed', 'cancelled'));
-- {blockId, contextId, message, fields, pausedAt, expiresAt}, set with status `paused`, never otherwise.
alter table executions add column pause jsonb;
create index executions_paused_idx on executions (workflow_id, created_at) where status = 'paused';
