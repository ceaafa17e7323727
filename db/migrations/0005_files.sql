-- Files: a workspace's uploaded files (their bytes live in storage under storage_key), and the
-- folders that group them as docs. A file's name is unique in its workspace; an archived file
-- keeps its name reserved, so restoring it can never clash.

create table folders (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  parent_id uuid,
  name text not null,
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  -- The target of the composite keys below: a parent or a file's folder is in the same workspace.
  unique (workspace_id, id),
  foreign key (workspace_id, parent_id) references folders (workspace_id, id) on delete cascade
);
-- One name per parent; top-level folders (no parent) share the nil uuid, since nulls never clash.
create unique index folders_workspace_parent_name_key
  on folders (workspace_id, coalesce(parent_id, '00000000-0000-0000-0000-000000000000'::uuid), name);

create table files (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  folder_id uuid,
  name text not null,
  size bigint not null check (size >= 0),
  media_type text not null,
  -- Made by the service (never from the file's name); the driver's object key.
  storage_key text not null unique,
  uploaded_by uuid references users (id) on delete set null,
  uploaded_at timestamptz not null default now(),
  archived_at timestamptz,
  unique (workspace_id, name),
  -- Deleting a folder leaves its files at the top of the workspace.
  foreign key (workspace_id, folder_id) references folders (workspace_id, id) on delete set null (folder_id)
);
create index files_workspace_uploaded_idx on files (workspace_id, uploaded_at desc);
create index files_folder_idx on files (folder_id) where folder_id is not null;

-- Storage used per billed user sums the files of the workspaces billed to them.
create index workspaces_billed_account_user_idx on workspaces (billed_account_user_id);
