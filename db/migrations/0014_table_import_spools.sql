-- The CSV files of table imports while they sit in storage (api/routes/tables/import-spools.ts): each
-- is recorded before its first byte is stored, and held by its process through a lease it renews
-- while it uploads and imports. A process that dies leaves the record behind, its lease runs out,
-- and a sweep (any API process) removes the file and then the record. A lease that ran out is never
-- renewed, so once a sweep may remove a file, the process that stored it can no longer claim it.
create table table_import_spools (
  storage_key text primary key,
  held_until timestamptz not null,
  created_at timestamptz not null default now()
);
create index table_import_spools_held_until_idx on table_import_spools (held_until);
