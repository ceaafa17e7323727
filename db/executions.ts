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
  /** Whom the run's cost is added to ('user:<id>' or 'org:<id>'); null when billing is off. */
  billingSubject: string | null;
  inputs: Record<string, unknown>;
}

/** Inserts queued executions, all in one statement; returns each one's creation time by id. */
export async function insertExecutions(tx: Queryable, rows: NewExecution[]): Promise<Map<string, Date>> {
  const col = <K extends keyof NewExecution>(k: K) => rows.map((r) => r[k]);
  const created = await tx.query<{ id: string; created_at: Date }>(
    `insert into executions (id, organization_id, workspace_id, workflow_id, version, mode, trigger, api_key_id,
       billed_user_id, billing_subject, inputs)
     select id, organization_id, workspace_id, workflow_id, version, mode, trigger, api_key_id, billed_user_id,
            billing_subject, inputs::jsonb
       from unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::int[], $6::text[], $7::text[], $8::uuid[],
         $9::uuid[], $10::text[], $11::text[])
         as t(id, organization_id, workspace_id, workflow_id, version, mode, trigger, api_key_id, billed_user_id,
           billing_subject, inputs)
     returning id, created_at`,
    [
      col('id'),
      col('organizationId'),
      col('workspaceId'),
      col('workflowId'),
      col('version'),
      col('mode'),
      col('trigger'),
      col('apiKeyId'),
      col('billedUserId'),
      col('billingSubject'),
      rows.map((r) => JSON.stringify(r.inputs)),
    ],
  );
  return new Map(created.map((r) => [r.id, r.created_at]));
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
 * Takes executions for running: marks each processing under a new attempt number. An id missing
 * from the answer finished already (a duplicate delivery of its job), which the caller just
 * acknowledges. One statement for the whole batch.
 */
export async function claimExecutions(db: Queryable, ids: string[]): Promise<Map<string, Claim>> {
  const rows = await db.query<Claim & { id: string }>(
    `update executions set status = 'processing', attempt = attempt + 1, started_at = coalesce(started_at, now())
      where id = any($1::uuid[]) and status in ('queued', 'processing')
      returning id, attempt, workspace_id, workflow_id, version, inputs, depth, started_at`,
    [ids],
  );
  return new Map(rows.map((r) => [r.id, r]));
}

/** An execution's cost in US dollars, as its log entry shows it. */
export interface ExecutionCost {
  total: number;
  /** The flat charge per execution. */
  base: number;
  tokens: { prompt: number; completion: number; total: number };
  models: Record<
    string,
    {
      input: number;
      output: number;
      total: number;
      tokens: { prompt: number; completion: number; total: number };
    }
  >;
}

export interface ExecutionOutcome {
  status: 'completed' | 'failed';
  output?: unknown;
  error?: string;
  trace?: unknown;
  /** Added to the billed subject's spend, in the statement that records the outcome. */
  cost?: ExecutionCost;
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
 * Records results whose `attempt` still holds its execution, adds their cost to their billed
 * subjects' spend for the period they ended in, and notifies waiters: one statement for the whole
 * batch, so spend never misses nor double-counts a run. Returns the ids recorded; an id missing
 * lost its execution to another attempt.
 */
export async function finishExecutions(
  db: Queryable,
  results: { id: string; attempt: number; outcome: ExecutionOutcome }[],
): Promise<Set<string>> {
  const cols = {
    id: [] as string[],
    attempt: [] as number[],
    status: [] as string[],
    output: [] as (string | null)[],
    error: [] as (string | null)[],
    trace: [] as (string | null)[],
    cost: [] as (string | null)[],
    costTotal: [] as number[],
    endedAt: [] as string[],
    notice: [] as string[],
  };
  for (const { id, attempt, outcome } of results) {
    const output = outcome.status === 'completed' ? JSON.stringify(outcome.output ?? null) : null;
    cols.id.push(id);
    cols.attempt.push(attempt);
    cols.status.push(outcome.status);
    cols.output.push(output);
    cols.error.push(outcome.error ?? null);
    cols.trace.push(outcome.trace === undefined ? null : JSON.stringify(outcome.trace));
    cols.cost.push(outcome.cost === undefined ? null : JSON.stringify(outcome.cost));
    cols.costTotal.push(outcome.cost?.total ?? 0);
    cols.endedAt.push(outcome.endedAt.toISOString());
    cols.notice.push(notice(id, outcome, output));
  }
  const rows = await db.query<{ id: string }>(
    `with input as (
       select * from unnest($1::uuid[], $2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
         $8::timestamptz[], $9::text[], $11::numeric[])
         as t(id, attempt, status, output, error, trace, cost, ended_at, notice, cost_total)),
     done as (
       update executions e set status = i.status, output = i.output::jsonb, error = i.error, trace = i.trace::jsonb,
         cost = i.cost::jsonb, ended_at = i.ended_at
       from input i where e.id = i.id and e.attempt = i.attempt and e.status = 'processing'
       returning e.id, e.billing_subject, i.notice, i.cost_total, i.ended_at),
     spent as (
       insert into usage_periods as u (subject, period_start, cost, executions)
       select billing_subject, date_trunc('month', ended_at at time zone 'UTC')::date, sum(cost_total), count(*)
         from done where billing_subject is not null
        group by 1, 2 order by 1, 2
       on conflict (subject, period_start) do update
         set cost = u.cost + excluded.cost, executions = u.executions + excluded.executions, updated_at = now())
     select id, pg_notify($10, notice) from done`,
    [
      cols.id,
      cols.attempt,
      cols.status,
      cols.output,
      cols.error,
      cols.trace,
      cols.cost,
      cols.endedAt,
      cols.notice,
      EXECUTION_DONE_CHANNEL,
      cols.costTotal,
    ],
  );
  return new Set(rows.map((r) => r.id));
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
