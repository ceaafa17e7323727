-- Tables: user-defined tables of typed columns in a workspace, their rows, and the slots that make
-- unique columns unique.

-- One row per table. Every write to a table's rows first locks this row: that serialises the
-- writers of one table, so row_count stays exact, the plan's row cap (never stored here: it follows
-- the organization's current plan) holds under races, and positions are handed out in order.
create table user_tables (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  name text not null,
  description text not null default '',
  -- [{name, type, required, unique}], validated by db/table-values.ts before it is stored.
  columns jsonb not null,
  row_count integer not null default 0 check (row_count >= 0),
  -- The position of the last row inserted: positions are 1-based and only grow, gaps stay.
  next_position bigint not null default 0,
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (workspace_id, name)
);

create table table_rows (
  id uuid primary key default gen_random_uuid(),
  table_id uuid not null references user_tables (id) on delete cascade,
  position bigint not null,
  -- Column name to value; a column without a value is absent, never null.
  data jsonb not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index table_rows_position_idx on table_rows (table_id, position);

-- One slot per value of a unique column: the database itself refuses a second row with that value,
-- whatever the application checked before. value_key is the value's canonical text (strings as
-- they are, numbers as JavaScript prints them, booleans 'true'/'false', dates as the normalised
-- ISO instant); a row without a value takes no slot. Deleting a row frees its slots.
create table table_unique_values (
  table_id uuid not null references user_tables (id) on delete cascade,
  column_name text not null,
  value_key text not null,
  row_id uuid not null references table_rows (id) on delete cascade,
  primary key (table_id, column_name, value_key)
);
create index table_unique_values_row_idx on table_unique_values (row_id);
