-- Knowledge bases: documents uploaded to a workspace's knowledge base, parsed, chunked and
-- embedded by the runners, and searched by vector similarity, full text and typed tags.

create table knowledge_bases (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  name text not null,
  description text not null default '',
  -- Tokens per chunk at most, characters per chunk at least, tokens shared by neighbouring chunks.
  chunk_max_tokens integer not null default 1024 check (chunk_max_tokens between 100 and 4000),
  chunk_min_chars integer not null default 100 check (chunk_min_chars between 1 and 2000),
  chunk_overlap_tokens integer not null default 200 check (chunk_overlap_tokens between 0 and 500),
  -- The model every chunk and query of this knowledge base is embedded with (vectors of two
  -- models are not comparable, so it never changes).
  embedding_model text not null,
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check (chunk_overlap_tokens < chunk_max_tokens)
);
create index knowledge_bases_workspace_idx on knowledge_bases (workspace_id, created_at);

-- A knowledge base's tag definitions: each name holds one typed slot of its documents
-- (text1..text7, number1..number5, date1..date2, boolean1..boolean3).
create table knowledge_tags (
  knowledge_base_id uuid not null references knowledge_bases (id) on delete cascade,
  slot text not null check (slot ~ '^(text[1-7]|number[1-5]|date[1-2]|boolean[1-3])$'),
  name text not null,
  type text not null check (type in ('text', 'number', 'date', 'boolean')),
  created_at timestamptz not null default now(),
  primary key (knowledge_base_id, slot),
  unique (knowledge_base_id, name),
  check (slot like type || '%')
);

create table knowledge_documents (
  id uuid primary key default gen_random_uuid(),
  knowledge_base_id uuid not null references knowledge_bases (id) on delete cascade,
  -- The workspace of the knowledge base, kept here for the storage quota and access checks.
  workspace_id uuid not null references workspaces (id) on delete cascade,
  filename text not null,
  file_size bigint not null check (file_size >= 0),
  mime_type text not null,
  storage_key text not null unique,
  processing_status text not null default 'pending'
    check (processing_status in ('pending', 'processing', 'completed', 'failed')),
  processing_error text,
  chunk_count integer not null default 0,
  token_count integer not null default 0,
  enabled boolean not null default true,
  -- Every (re-)processing asks for a new generation of chunks; the job that carries an older one is
  -- stale. Search reads the live generation only, so old chunks answer until new ones replace them.
  target_generation integer not null default 1,
  live_generation integer,
  -- Attempts at the target generation: a failure short of the last one is retried.
  attempts integer not null default 0,
  tag_text1 text, tag_text2 text, tag_text3 text, tag_text4 text, tag_text5 text, tag_text6 text,
  tag_text7 text,
  tag_number1 double precision, tag_number2 double precision, tag_number3 double precision,
  tag_number4 double precision, tag_number5 double precision,
  tag_date1 timestamptz, tag_date2 timestamptz,
  tag_boolean1 boolean, tag_boolean2 boolean, tag_boolean3 boolean,
  uploaded_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  processing_started_at timestamptz,
  processed_at timestamptz
);
create index knowledge_documents_base_created_idx on knowledge_documents (knowledge_base_id, created_at desc);
create index knowledge_documents_workspace_idx on knowledge_documents (workspace_id);

create table knowledge_chunks (
  id bigint generated always as identity primary key,
  knowledge_base_id uuid not null references knowledge_bases (id) on delete cascade,
  document_id uuid not null references knowledge_documents (id) on delete cascade,
  generation integer not null,
  chunk_index integer not null,
  content text not null,
  token_count integer not null,
  embedding vector(1536) not null,
  content_tsv tsvector generated always as (to_tsvector('english', content)) stored
);
create index knowledge_chunks_document_idx on knowledge_chunks (document_id, generation, chunk_index);
create index knowledge_chunks_base_idx on knowledge_chunks (knowledge_base_id);
-- A denser graph than pgvector's defaults (m 16, ef_construction 64): lexical embeddings put many
-- chunks at nearly one distance from a query, and the default graph then finds about half of the
-- true nearest ten (bench/knowledge.ts); this one, searched at ef_search 800, finds 0.96 of them at
-- 100,000 chunks. Inserts cost more for it; searches are what users wait for.
create index knowledge_chunks_embedding_idx on knowledge_chunks
  using hnsw (embedding vector_cosine_ops) with (m = 32, ef_construction = 200);
create index knowledge_chunks_tsv_idx on knowledge_chunks using gin (content_tsv);
