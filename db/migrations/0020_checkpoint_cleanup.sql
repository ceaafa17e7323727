-- An execution's checkpoints (0019) serve only a later attempt of that execution: once it is
-- finished (completed, failed or cancelled) no attempt will read them, so they go in the transaction
-- that finishes it. A trigger rather than each finishing statement, because several paths finish an
-- execution (a runner's results, the dead-letter abandon, a cancel) and a new one must not forget it.
-- Parked or queued executions are not finished: their checkpoints stay.
create function delete_finished_checkpoints() returns trigger
language plpgsql as $$
begin
  delete from execution_checkpoints where execution_id = new.id;
  return null;
end;
$$;

create trigger executions_finished_checkpoints
  after update of status on executions
  for each row
  when (new.status in ('completed', 'failed', 'cancelled') and old.status is distinct from new.status)
  execute function delete_finished_checkpoints();

-- Executions finished before this migration: their checkpoints are of no further use.
delete from execution_checkpoints c
 using executions e
 where e.id = c.execution_id and e.status in ('completed', 'failed', 'cancelled');
