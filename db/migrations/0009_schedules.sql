-- Schedules: a workflow run on a cron expression (db/schedules.ts). pg-boss's own scheduler fires
-- them (runner/schedule-jobs.ts): its schedule row is keyed by our id and mirrors this one while it
-- is not paused. This table is the record operators list; pg-boss's is only the trigger.

create table schedules (
  id uuid primary key default gen_random_uuid(),
  -- The workflow's workspace when the schedule was made: firings are billed to it, and a schedule
  -- never starts a workflow of another workspace.
  workspace_id uuid not null references workspaces (id) on delete cascade,
  workflow_id uuid not null references workflows (id) on delete cascade,
  -- 5 fields, or 6 with a leading seconds field; evaluated in `timezone` (an IANA name).
  cron text not null,
  timezone text not null default 'UTC',
  inputs jsonb not null default '{}'::jsonb,
  paused boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- The latest firing: when, what it started (null when refused or failed), and why not.
  last_fired_at timestamptz,
  last_status text check (last_status in ('started', 'refused', 'failed')),
  last_execution_id uuid references executions (id) on delete set null,
  last_error text
);
create index schedules_workspace_idx on schedules (workspace_id, created_at, id);
create index schedules_workflow_idx on schedules (workflow_id);
