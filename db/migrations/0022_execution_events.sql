-- Streaming executions (issue 29): an execution started with `stream: true` has `stream_outputs`
-- set (the `selectedOutputs` it asked for, `[]` for all); its runner appends the events an SSE client
-- reads to execution_events, in order (`seq` from 1), and NOTIFYs `execution_events` so listening
-- API processes read them at once. Executions that did not ask to stream write nothing here.
-- The terminal event is not stored: readers derive it from the execution's row once it has ended.
alter table executions add column stream_outputs jsonb;

create table execution_events (
  execution_id uuid not null references executions (id) on delete cascade,
  seq integer not null,
  event text not null,
  data jsonb not null,
  created_at timestamptz not null default now(),
  primary key (execution_id, seq)
);
-- The sweep drops events past their retention (db/execution-events.ts sweepExecutionEvents).
create index execution_events_created_idx on execution_events (created_at);
