// Schedules: a deployed workflow run on a cron expression in a time zone, with fixed inputs. This is
// the record operators create, pause, resume, delete and list, with the outcome of its latest
// firing; pg-boss's scheduler, which does the firing, mirrors it (jobs/schedules.ts). The
// recurrence itself is checked by the caller (it is pg-boss's parser that evaluates it), and so are
// the inputs: the caller hands in the workflow format's own check (runner/executor/inputs.ts).
import { conflict, type FieldIssue, forbidden, notFound, ServiceError } from '../errors.ts';
import { type Actor, recordAudit } from './audit-logs.ts';
import type { Queryable } from './client.ts';
import { isUuid } from './ids.ts';
import type { StoredInputSpec } from './workflows.ts';

/** Checks given inputs against a deployed version's declared ones: the problems found, if any. */
export type InputsCheck = (
  declared: Record<string, StoredInputSpec>,
  given: Record<string, unknown>,
) => { issues: FieldIssue[] };

/** What the latest firing did: started an execution, was refused by a limit (402/429), or failed. */
export type FiringStatus = 'started' | 'refused' | 'failed';

export interface Schedule {
  id: string;
  workspaceId: string;
  workflowId: string;
  cron: string;
  timezone: string;
  inputs: Record<string, unknown>;
  paused: boolean;
  createdAt: string;
  updatedAt: string;
  lastFiredAt: string | null;
  lastStatus: FiringStatus | null;
  lastExecutionId: string | null;
  /** Why the latest firing started nothing (the limit's message, or the refusal's). */
  lastError: string | null;
}

type ScheduleRow = {
  id: string;
  workspace_id: string;
  workflow_id: string;
  cron: string;
  timezone: string;
  inputs: Record<string, unknown>;
  paused: boolean;
  created_at: Date;
  updated_at: Date;
  last_fired_at: Date | null;
  last_status: FiringStatus | null;
  last_execution_id: string | null;
  last_error: string | null;
};

const toSchedule = (r: ScheduleRow): Schedule => ({
  id: r.id,
  workspaceId: r.workspace_id,
  workflowId: r.workflow_id,
  cron: r.cron,
  timezone: r.timezone,
  inputs: r.inputs,
  paused: r.paused,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
  lastFiredAt: r.last_fired_at?.toISOString() ?? null,
  lastStatus: r.last_status,
  lastExecutionId: r.last_execution_id,
  lastError: r.last_error,
});

export interface CreateScheduleInput {
  workflowId: string;
  /** When given, the workflow must be in this workspace (404 otherwise). */
  workspaceId?: string;
  /** Already checked by the caller, in the form to store. */
  cron: string;
  timezone: string;
  inputs: Record<string, unknown>;
}

/**
 * Creates a schedule of a deployed workflow, recording schedule.created. Its inputs are checked
 * against the deployed version now, so a mistake is a 400 here rather than a failure at every
 * firing (a later deployment may still change what they must be: each firing checks again).
 */
export async function createSchedule(
  db: Queryable,
  actor: Actor,
  input: CreateScheduleInput,
  checkInputs: InputsCheck,
): Promise<Schedule> {
  return db.transaction(async (tx) => {
    const [wf] = await tx.query<{
      workspace_id: string;
      organization_id: string;
      archived: boolean;
      deployed_version: number | null;
      inputs: Record<string, StoredInputSpec> | null;
    }>(
      `select w.workspace_id, s.organization_id, s.archived_at is not null as archived, w.deployed_version,
              v.definition -> 'inputs' as inputs
         from workflows w join workspaces s on s.id = w.workspace_id
         left join workflow_versions v on v.workflow_id = w.id and v.version = w.deployed_version
        where w.id = $1`,
      [input.workflowId],
    );
    // Another workspace's workflow reads as missing: the caller learns nothing about it.
    if (!wf || (input.workspaceId !== undefined && wf.workspace_id !== input.workspaceId))
      throw notFound('Workflow');
    if (wf.archived) throw forbidden('The workspace is archived');
    if (wf.deployed_version === null)
      throw new ServiceError(400, 'Workflow is not deployed: deploy it before scheduling it');
    const checked = checkInputs(wf.inputs ?? {}, input.inputs);
    if (checked.issues.length)
      throw new ServiceError(400, 'Invalid workflow inputs', { details: checked.issues });
    const [row] = await tx.query<ScheduleRow>(
      `insert into schedules (workspace_id, workflow_id, cron, timezone, inputs)
       values ($1, $2, $3, $4, $5::jsonb) returning *`,
      [wf.workspace_id, input.workflowId, input.cron, input.timezone, JSON.stringify(input.inputs)],
    );
    const schedule = row as ScheduleRow;
    await recordAudit(tx, actor, {
      organizationId: wf.organization_id,
      workspaceId: wf.workspace_id,
      action: 'schedule.created',
      resourceType: 'schedule',
      resourceId: schedule.id,
      metadata: { workflowId: input.workflowId, cron: input.cron, timezone: input.timezone },
    });
    return toSchedule(schedule);
  });
}

export async function getSchedule(db: Queryable, id: string): Promise<Schedule | null> {
  if (!isUuid(id)) return null;
  const [row] = await db.query<ScheduleRow>('select * from schedules where id = $1', [id]);
  return row ? toSchedule(row) : null;
}

/** A schedule as a firing needs it: with whether its workspace is archived (which runs nothing). */
export async function getScheduleToFire(
  db: Queryable,
  id: string,
): Promise<(Schedule & { workspaceArchived: boolean }) | null> {
  if (!isUuid(id)) return null;
  const [row] = await db.query<ScheduleRow & { archived: boolean }>(
    `select c.*, s.archived_at is not null as archived
       from schedules c join workspaces s on s.id = c.workspace_id where c.id = $1`,
    [id],
  );
  return row ? { ...toSchedule(row), workspaceArchived: row.archived } : null;
}

/** A workspace's or a workflow's schedules, oldest first. */
export async function listSchedules(
  db: Queryable,
  filter: { workspaceId?: string; workflowId?: string },
): Promise<Schedule[]> {
  const rows = await db.query<ScheduleRow>(
    `select * from schedules where ($1::uuid is null or workspace_id = $1) and ($2::uuid is null or workflow_id = $2)
      order by created_at, id`,
    [filter.workspaceId ?? null, filter.workflowId ?? null],
  );
  return rows.map(toSchedule);
}

/** The schedules that should be firing (not paused), for reconciling pg-boss's copy with ours. */
export async function listActiveSchedules(
  db: Queryable,
): Promise<Pick<Schedule, 'id' | 'cron' | 'timezone'>[]> {
  return db.query('select id, cron, timezone from schedules where not paused');
}

/** Pauses or resumes a schedule, recording schedule.paused or schedule.resumed; 409 when it already is. */
export async function setSchedulePaused(
  db: Queryable,
  actor: Actor,
  id: string,
  paused: boolean,
): Promise<Schedule> {
  if (!isUuid(id)) throw notFound('Schedule');
  return db.transaction(async (tx) => {
    // The row lock orders a pause and a resume of one schedule: each sees the other's outcome.
    const [old] = await tx.query<{ paused: boolean }>(
      'select paused from schedules where id = $1 for update',
      [id],
    );
    if (!old) throw notFound('Schedule');
    if (old.paused === paused)
      throw conflict(paused ? 'The schedule is already paused' : 'The schedule is not paused');
    const [row] = await tx.query<ScheduleRow & { organization_id: string }>(
      `update schedules c set paused = $2, updated_at = now() from workspaces s
        where c.id = $1 and s.id = c.workspace_id returning c.*, s.organization_id`,
      [id, paused],
    );
    if (!row) throw notFound('Schedule');
    await recordAudit(tx, actor, {
      organizationId: row.organization_id,
      workspaceId: row.workspace_id,
      action: paused ? 'schedule.paused' : 'schedule.resumed',
      resourceType: 'schedule',
      resourceId: id,
      metadata: { workflowId: row.workflow_id },
    });
    return toSchedule(row);
  });
}

/** Deletes a schedule, recording schedule.deleted. */
export async function deleteSchedule(db: Queryable, actor: Actor, id: string): Promise<{ deleted: true }> {
  if (!isUuid(id)) throw notFound('Schedule');
  return db.transaction(async (tx) => {
    const [row] = await tx.query<ScheduleRow & { organization_id: string }>(
      `delete from schedules c using workspaces s where c.id = $1 and s.id = c.workspace_id
       returning c.*, s.organization_id`,
      [id],
    );
    if (!row) throw notFound('Schedule');
    await recordAudit(tx, actor, {
      organizationId: row.organization_id,
      workspaceId: row.workspace_id,
      action: 'schedule.deleted',
      resourceType: 'schedule',
      resourceId: id,
      metadata: { workflowId: row.workflow_id, cron: row.cron, timezone: row.timezone },
    });
    return { deleted: true };
  });
}

/** Records what a firing did, so a listing shows it. */
export async function recordFiring(
  db: Queryable,
  id: string,
  firing: { status: FiringStatus; executionId: string | null; error: string | null },
): Promise<void> {
  await db.query(
    `update schedules set last_fired_at = now(), last_status = $2, last_execution_id = $3, last_error = $4
      where id = $1`,
    [id, firing.status, firing.executionId, firing.error],
  );
}
