-- Idempotency-Key records: a request sent with an Idempotency-Key claims the key for its caller's
-- API key, and its answer is kept so that a retry of the same request, within 24 hours, gets that
-- answer instead of doing the work again (api/middleware/idempotency.ts, db/idempotency-keys.ts).

create table idempotency_keys (
  -- Keys are the caller's: another API key using the same key value never sees this record.
  api_key_id uuid not null references api_keys (id) on delete cascade,
  key text not null,
  -- 'pending' while the first request is in flight (until lease_until: a process that died
  -- mid-request blocks retries only that long); 'completed' once its answer is stored.
  state text not null check (state in ('pending', 'completed')),
  -- Which claim is current: only its holder may complete or release the record.
  claim_token uuid not null,
  lease_until timestamptz not null,
  method text not null,
  path text not null,
  -- SHA-256 of the request (its steering headers, then its body with multipart boundaries blanked)
  -- and the bytes hashed; null while pending, or when a 2xx answer came before the body was read
  -- to its end.
  body_sha256 bytea,
  body_length bigint,
  -- The answer: status, the headers that describe it, and its body (null when it was over the
  -- size kept for replays, or not JSON; body_size then says how large it was, when known).
  status smallint,
  headers jsonb,
  body bytea,
  body_size bigint,
  -- Times from the service's clock (tests move it), not the database's.
  created_at timestamptz not null,
  expires_at timestamptz not null,
  primary key (api_key_id, key),
  check (state = 'pending' or (status is not null and headers is not null))
);
-- The purge of expired records.
create index idempotency_keys_expires_idx on idempotency_keys (expires_at);
