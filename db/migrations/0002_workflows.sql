-- Workflows: immutable deployed versions, encrypted workspace secrets, and executions.
alter table workflows add column deployed_version integer;
alter table workflows add column deployed_at timestamptz;

-- A deployment snapshots the definition: executions run a version, never the editable draft.
create table workflow_versions (
  workflow_id uuid not null references workflows (id) on delete cascade,
  version integer not null,
  definition jsonb not null,
  deployed_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  primary key (workflow_id, version)
);

create table workspace_secrets (
  workspace_id uuid not null references workspaces (id) on delete cascade,
  name text not null check (name ~ '^[A-Za-z_][A-Za-z0-9_]*$'),
  value_ciphertext bytea not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (workspace_id, name)
);

-- One row per execution: its state machine (queued → processing → completed | failed), what it
-- ran on, and what came out. `attempt` fences a runner that lost its job to expiry: only the
-- holder of the current attempt may write the result.
create table executions (
  id uuid primary key,
  organization_id uuid not null references organizations (id) on delete cascade,
  workspace_id uuid not null references workspaces (id) on delete cascade,
  workflow_id uuid not null references workflows (id) on delete cascade,
  version integer not null,
  status text not null default 'queued' check (status in ('queued', 'processing', 'completed', 'failed')),
  mode text not null check (mode in ('sync', 'async')),
  trigger text not null default 'api',
  api_key_id uuid references api_keys (id) on delete set null,
  billed_user_id uuid references users (id) on delete set null,
  parent_execution_id uuid references executions (id) on delete set null,
  depth integer not null default 0,
  inputs jsonb not null default '{}'::jsonb,
  output jsonb,
  error text,
  trace jsonb,
  cost jsonb,
  attempt integer not null default 0,
  created_at timestamptz not null default now(),
  started_at timestamptz,
  ended_at timestamptz
);
create index executions_workspace_idx on executions (workspace_id, created_at desc);
create index executions_workflow_idx on executions (workflow_id, created_at desc);
create index executions_status_idx on executions (status) where status in ('queued', 'processing');
