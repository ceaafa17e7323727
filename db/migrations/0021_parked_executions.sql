-- Parked executions (DESIGN.md "Run control", runner/executor/park.ts): a processing execution whose
-- `wait` or retry delay is long holds no runner, job or concurrency slot; `resume_at` is when it is
-- due. The runner's sweeper clears it and enqueues the execution in one transaction (the row lock
-- decides which runner takes it). The Job record shows it as `metadata.resumeAt`.
alter table executions add column resume_at timestamptz;
create index executions_resume_at_idx on executions (resume_at) where resume_at is not null;
