-- The SHA-256 of a knowledge document's bytes, taken while the upload streams in, so the same
-- content uploaded twice to one knowledge base is refused (409) unless the upload asks for it
-- (db/knowledge-documents.ts). Null for documents uploaded before this column: they match nothing.
alter table knowledge_documents add column content_sha256 text
  check (content_sha256 ~ '^[0-9a-f]{64}$');
-- The look-up at each upload; the check runs under a lock on (knowledge base, hash), so two racing
-- uploads of one content cannot both pass it.
create index knowledge_documents_base_content_idx on knowledge_documents (knowledge_base_id, content_sha256)
  where content_sha256 is not null;
