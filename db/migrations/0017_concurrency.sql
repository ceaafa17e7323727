-- Per-workflow concurrency limits (definition field `concurrency`, DESIGN.md "Run control"): an
-- execution of a limited workflow carries its group (the resolved key; '' for "no key") and the
-- limit of the version it runs, fixed when it is enqueued. Unlimited executions leave both null and
-- never touch the columns again. `concurrency_waiting`: its job found the group full and was
-- completed; the end of a running execution of the group sends it a new job (db/execution-concurrency.ts).
alter table executions
  add column concurrency_group text,
  add column concurrency_limit int check (concurrency_limit between 1 and 1000),
  add column concurrency_waiting boolean not null default false;
-- The count of a group's processing executions and its queue in FIFO order, at each claim and end.
create index executions_concurrency_idx on executions (workflow_id, concurrency_group, created_at, id)
  where concurrency_group is not null and status in ('queued', 'processing');
