-- Workflow folders. As in the original service (one folder table typed by resource), a folder
-- holds either files (docs) or workflows, never both: each kind has its own tree and its own names.
-- Existing folders hold files.
alter table folders add column kind text not null default 'file' check (kind in ('file', 'workflow'));
-- The target of the typed keys below: a parent, or a workflow's folder, of the same workspace and kind.
alter table folders add constraint folders_workspace_id_kind_key unique (workspace_id, id, kind);
alter table folders drop constraint folders_workspace_id_parent_id_fkey;
alter table folders add constraint folders_parent_fkey
  foreign key (workspace_id, parent_id, kind) references folders (workspace_id, id, kind) on delete cascade;
-- Names are unique beside siblings of the same kind: a workflow folder may share a file folder's name.
drop index folders_workspace_parent_name_key;
create unique index folders_workspace_parent_name_key
  on folders (workspace_id, kind, coalesce(parent_id, '00000000-0000-0000-0000-000000000000'::uuid), name);

-- A workflow sits at the top of its workspace (folder_id null) or in a workflow folder of that
-- workspace. folder_kind is always 'workflow': it lets the key require the folder's kind.
-- Deleting a folder moves its workflows to the top of the workspace: they stay, deployed as they were.
alter table workflows add column folder_id uuid;
alter table workflows add column folder_kind text not null default 'workflow' check (folder_kind = 'workflow');
alter table workflows add constraint workflows_folder_fkey
  foreign key (workspace_id, folder_id, folder_kind) references folders (workspace_id, id, kind)
  on delete set null (folder_id);
create index workflows_folder_idx on workflows (folder_id) where folder_id is not null;
