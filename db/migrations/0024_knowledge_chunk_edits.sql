-- Chunks edited over the public API: a chunk can be disabled (left out of searches without being
-- deleted). Chunks of ingestion start enabled; reprocessing a document makes all-new chunks.
alter table knowledge_chunks add column enabled boolean not null default true;
