-- Inbound webhooks: a secret URL (POST /api/webhooks/{token}) that starts an execution of one
-- workflow with the request body as its inputs (db/webhooks.ts, api/routes/webhooks.ts).

create table webhooks (
  id uuid primary key default gen_random_uuid(),
  -- The workflow's workspace when the webhook was made: executions are billed to it, and a
  -- webhook never starts a workflow of another workspace.
  workspace_id uuid not null references workspaces (id) on delete cascade,
  workflow_id uuid not null references workflows (id) on delete cascade,
  -- async: answer 202 with a job to poll; sync: wait for the result, as a sync execute does.
  mode text not null check (mode in ('async', 'sync')),
  -- SHA-256 of the URL's token (32 random bytes, base64url): the lookup on every call. The token
  -- itself is shown once, at creation, and never stored, so a copy of the database calls nothing.
  token_hash bytea not null unique,
  token_last4 text not null,
  -- The HMAC-SHA256 key callers sign bodies with, sealed with AES-256-GCM (iv ‖ tag ‖ data); kept
  -- recoverable because verifying a signature needs it. Null: calls need no signature.
  secret_ciphertext bytea,
  created_at timestamptz not null default now(),
  token_rotated_at timestamptz
);
create index webhooks_workspace_idx on webhooks (workspace_id);
create index webhooks_workflow_idx on webhooks (workflow_id);
