-- Indexes for the figures a metrics scrape reads every few seconds (db/backlog.ts): without them
-- each scrape would scan every execution and every document ever recorded.

-- Executions that ended in the last hour, by status.
create index executions_ended_idx on executions (ended_at) where ended_at is not null;

-- Documents still to ingest: a handful at any moment, however many have been ingested.
create index knowledge_documents_backlog_idx on knowledge_documents (processing_status)
  where processing_status in ('pending', 'processing');
