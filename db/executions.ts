// Executions: the state machine queued → processing → completed | failed, fenced by `attempt` so a
// runner that lost its job (expiry, crash) can never overwrite the result of the one that took over.
// Finishing notifies EXECUTION_DONE_CHANNEL in the same statement, so a waiter that hears it always
// finds the final row.
import type { Queryable } from './client.ts';

export const EXECUTION_DONE_CHANNEL = 'execution_done';

export type ExecutionStatus = 'queued' | 'processing' | 'completed' | 'failed';

export interface ExecutionRow {
  id: string;
  organization_id: string;
  workspace_id: string;
  workflow_id: string;
  version: number;
  status: ExecutionStatus;
  mode: 'sync' | 'async';
  trigger: string;
  api_key_id: string | null;
  billed_user_id: string | null;
  inputs: Record<string, unknown>;
  output: unknown;
  error: string | null;
  trace: unknown;
  cost: unknown;
  attempt: number;
  depth: number;
  created_at: Date;
  started_at: Date | null;
  ended_at: Date | null;
}

export interface NewExecution {
  id: string;
  organizationId: string;
  workspaceId: string;
  workflowId: string;
  version: number;
  mode: 'sync' | 'async';
  trigger: string;
  apiKeyId: string | null;
  billedUserId: string | null;
  inputs: Record<string, unknown>;
}

export async function insertExecution(tx: Queryable, e: NewExecution): Promise<{ createdAt: Date }> {
  const [row] = await tx.query<{ created_at: Date }>(
    `insert into executions (id, organization_id, workspace_id, workflow_id, version, mode, trigger, api_key_id,
       billed_user_id, inputs)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb) returning created_at`,
    [
      e.id,
      e.organizationId,
      e.workspaceId,
      e.workflowId,
      e.version,
      e.mode,
      e.trigger,
      e.apiKeyId,
      e.billedUserId,
      JSON.stringify(e.inputs),
    ],
  );
  return { createdAt: (row as { created_at: Date }).created_at };
}

export async function getExecution(db: Queryable, id: string): Promise<ExecutionRow | null> {
  const [row] = await db.query<ExecutionRow>('select * from executions where id = $1', [id]);
  return row ?? null;
}

export type Claim = Pick<
  ExecutionRow,
  'attempt' | 'workspace_id' | 'workflow_id' | 'version' | 'inputs' | 'depth'
> & {
  started_at: Date;
};

/**
 * Takes an execution for running: marks it processing under a new attempt number. Null when it
 * already finished (a duplicate delivery of its job), which the caller then just acknowledges.
 */
export async function claimExecution(db: Queryable, id: string): Promise<Claim | null> {
  const [row] = await db.query<Claim>(
    `update executions set status = 'processing', attempt = attempt + 1, started_at = coalesce(started_at, now())
      where id = $1 and status in ('queued', 'processing')
      returning attempt, workspace_id, workflow_id, version, inputs, depth, started_at`,
    [id],
  );
  return row ?? null;
}

export interface ExecutionOutcome {
  status: 'completed' | 'failed';
  output?: unknown;
  error?: string;
  trace?: unknown;
  cost?: unknown;
  /** When this attempt's execution started (from the claim). */
  startedAt: Date;
  endedAt: Date;
}

/** What a finished execution's notice carries, so a waiting API can answer without reading the row. */
export interface DoneNotice {
  id: string;
  status: 'completed' | 'failed';
  /** Absent when it would not fit a notification: the waiter then reads the row. */
  output?: unknown;
  error?: string | null;
  startedAt: string;
  endedAt: string;
}

// Postgres caps a NOTIFY payload at 8000 bytes.
const MAX_NOTICE_BYTES = 7900;

/**
 * Records the result if `attempt` still holds the execution, and notifies waiters, in one statement.
 * False when another attempt took over.
 */
export async function finishExecution(
  db: Queryable,
  id: string,
  attempt: number,
  outcome: ExecutionOutcome,
): Promise<boolean> {
  const output = outcome.status === 'completed' ? JSON.stringify(outcome.output ?? null) : null;
  const rows = await db.query(
    `with done as (
       update executions set status = $3, output = $4::jsonb, error = $5, trace = $6::jsonb, cost = $7::jsonb,
         ended_at = $8
       where id = $1 and attempt = $2 and status = 'processing' returning id)
     select pg_notify($9, $10) from done`,
    [
      id,
      attempt,
      outcome.status,
      output,
      outcome.error ?? null,
      outcome.trace === undefined ? null : JSON.stringify(outcome.trace),
      outcome.cost === undefined ? null : JSON.stringify(outcome.cost),
      outcome.endedAt.toISOString(),
      EXECUTION_DONE_CHANNEL,
      notice(id, outcome, output),
    ],
  );
  return rows.length > 0;
}

function notice(id: string, outcome: ExecutionOutcome, output: string | null): string {
  const base: Omit<DoneNotice, 'output'> = {
    id,
    status: outcome.status,
    error: outcome.error ?? null,
    startedAt: outcome.startedAt.toISOString(),
    endedAt: outcome.endedAt.toISOString(),
  };
  const text = JSON.stringify(base);
  // The output is spliced in as the JSON text already made for the row, when it fits.
  return output !== null && text.length + output.length + 12 < MAX_NOTICE_BYTES
    ? `${text.slice(0, -1)},"output":${output}}`
    : text;
}

/** Fails an execution whatever attempt holds it: its job ran out of retries (a runner kept dying). */
export async function abandonExecution(db: Queryable, id: string, error: string): Promise<boolean> {
  const rows = await db.query(
    `with done as (
       update executions set status = 'failed', error = $2, ended_at = now(), started_at = coalesce(started_at, now())
        where id = $1 and status in ('queued', 'processing') returning id)
     select pg_notify($3, json_build_object('id', id)::text) from done`,
    [id, error, EXECUTION_DONE_CHANNEL],
  );
  return rows.length > 0;
}
