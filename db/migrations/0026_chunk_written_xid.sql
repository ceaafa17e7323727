-- Searches of lexical (sparse) embeddings are answered from each process's in-memory postings of a
-- knowledge base's chunk vectors (db/knowledge/vector-memory.ts), kept fresh by reading only the
-- chunks written since the process last looked. written_xid is the transaction that last wrote a
-- chunk's vector: a reader that remembers its snapshot's xmin reads `written_xid >= xmin` next time
-- and so misses no commit, however transactions interleave (any transaction it could not see then
-- has an xid at or above that xmin).
alter table knowledge_chunks add column written_xid xid8 not null default pg_current_xact_id();

create function knowledge_chunks_written_xid() returns trigger language plpgsql as $$
begin
  new.written_xid := pg_current_xact_id();
  return new;
end $$;
create trigger knowledge_chunks_written_xid before update of embedding on knowledge_chunks
  for each row execute function knowledge_chunks_written_xid();

create index knowledge_chunks_written_idx on knowledge_chunks (knowledge_base_id, written_xid);
-- Loading a base's vectors reads its chunks in id order, a page at a time.
drop index knowledge_chunks_base_idx;
create index knowledge_chunks_base_idx on knowledge_chunks (knowledge_base_id, id);
