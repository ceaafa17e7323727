-- Foundation: organizations and their people, workspaces, API keys, audit logs, plan overrides.
create extension if not exists vector;

create table organizations (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  slug text not null unique,
  plan text not null default 'free' check (plan in ('free', 'pro', 'team', 'enterprise')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table users (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  email text not null,
  created_at timestamptz not null default now()
);
create unique index users_email_key on users (lower(email));

-- One row per (organization, user); leaving sets departed_at, rejoining clears it, so an
-- audit entry keeps pointing at a membership whose history we can still judge.
create table members (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references organizations (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  role text not null check (role in ('owner', 'admin', 'member')),
  joined_at timestamptz not null default now(),
  departed_at timestamptz,
  unique (organization_id, user_id)
);
create index members_user_idx on members (user_id);

create table workspaces (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references organizations (id) on delete cascade,
  name text not null,
  slug text not null,
  color text not null check (color ~ '^#[0-9A-Fa-f]{6}$'),
  owner_id uuid not null references users (id),
  billed_account_user_id uuid not null references users (id),
  allow_personal_api_keys boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  archived_at timestamptz,
  unique (organization_id, slug)
);

create table workspace_permissions (
  workspace_id uuid not null references workspaces (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  permission text not null check (permission in ('admin', 'write', 'read')),
  created_at timestamptz not null default now(),
  primary key (workspace_id, user_id)
);
create index workspace_permissions_user_idx on workspace_permissions (user_id);

create table api_keys (
  id uuid primary key default gen_random_uuid(),
  type text not null check (type in ('personal', 'workspace')),
  user_id uuid references users (id) on delete cascade,
  workspace_id uuid references workspaces (id) on delete cascade,
  name text not null,
  -- SHA-256 of the whole key: the lookup on every request. The ciphertext (AES-256-GCM,
  -- iv ‖ tag ‖ data) keeps the key recoverable by the service only, never shown again.
  key_hash bytea not null unique,
  key_ciphertext bytea not null,
  key_last4 text not null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz,
  check ((type = 'personal' and user_id is not null and workspace_id is null)
      or (type = 'workspace' and workspace_id is not null and user_id is null))
);
create index api_keys_user_idx on api_keys (user_id);
create index api_keys_workspace_idx on api_keys (workspace_id);

-- Written in the same transaction as the action it records. The actor's name and e-mail are
-- kept as they were at that moment; actor_id is null for the admin plane, which has no user.
create table audit_logs (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references organizations (id) on delete cascade,
  workspace_id uuid references workspaces (id) on delete set null,
  actor_id uuid references users (id) on delete set null,
  actor_name text,
  actor_email text,
  action text not null check (action ~ '^[a-z_]+\.[a-z_]+$'),
  resource_type text not null,
  resource_id text,
  metadata jsonb not null default '{}'::jsonb,
  -- Millisecond precision, as clients see it: a createdAt echoed back as endDate includes its entry.
  created_at timestamptz not null default date_trunc('milliseconds', clock_timestamp())
);
create index audit_logs_page_idx on audit_logs (organization_id, created_at desc, id desc);
create index audit_logs_actor_idx on audit_logs (actor_id);

-- Per-organization overrides of the plan's limits; absent keys fall back to the plan.
create table quota_overrides (
  organization_id uuid primary key references organizations (id) on delete cascade,
  overrides jsonb not null default '{}'::jsonb,
  updated_at timestamptz not null default now()
);

-- Workflows are created here so a new workspace can carry its default workflow; the
-- Workflows issue adds versions and deployments.
create table workflows (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  name text not null,
  description text not null default '',
  definition jsonb not null,
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index workflows_workspace_idx on workflows (workspace_id);

-- Service-wide settings, such as the SHA-256 of a generated admin token.
create table service_settings (
  name text primary key,
  value text not null,
  updated_at timestamptz not null default now()
);
