-- Checkpoints: the durable record of a finished block with side effects (its output, spans and cost),
-- so an execution taken over by another runner after a crash continues after it instead of running
-- it again (runner/executor/checkpoints.ts). `key` is the block's id, prefixed inside loops and
-- parallels by the iteration path and inside child workflows by the calling block. Written only by
-- the attempt that holds the execution; read when a later attempt claims it.
create table execution_checkpoints (
  execution_id uuid not null references executions (id) on delete cascade,
  key text not null,
  attempt int not null,
  record jsonb not null,
  created_at timestamptz not null default now(),
  primary key (execution_id, key)
);
