-- Completion callbacks: an async execution may name a URL that the runner POSTs its Job record to
-- when it ends, signed with its workspace's callback secret, retried with backoff
-- (db/callbacks.ts, runner/callback-jobs.ts).

-- Where to deliver the record; null: no callback. Set once, when the execution is queued.
alter table executions add column callback_url text;
-- 'pending' until an attempt is answered with a 2xx ('delivered') or the last retry failed
-- ('given_up'); null when there is no callback.
alter table executions add column callback_status text
  check (callback_status in ('pending', 'delivered', 'given_up'));

-- One row per delivery attempt, successful or not: what operators read to see why a receiver
-- never got its callback.
create table callback_deliveries (
  id uuid primary key default gen_random_uuid(),
  execution_id uuid not null references executions (id) on delete cascade,
  -- 1 for the first attempt, then one more per retry.
  attempt integer not null,
  url text not null,
  -- The receiver's HTTP status; null when no answer came (refused destination, timeout, network).
  status_code smallint,
  error text,
  duration_ms integer not null,
  delivered boolean not null,
  -- True on the failed attempt after which no retry is left.
  gave_up boolean not null default false,
  attempted_at timestamptz not null default now()
);
create index callback_deliveries_execution_idx on callback_deliveries (execution_id, attempt);

-- The HMAC-SHA256 key callbacks of a workspace are signed with, sealed with AES-256-GCM
-- (iv ‖ tag ‖ data) like workspace secrets: recoverable, because each delivery signs with it and
-- operators hand it to the receivers. Made on first use; rotation replaces it.
create table workspace_callback_secrets (
  workspace_id uuid primary key references workspaces (id) on delete cascade,
  secret_ciphertext bytea not null,
  created_at timestamptz not null default now(),
  rotated_at timestamptz
);
