// Executions: the state machine queued → processing → completed | failed (or cancelled: see
// execution-cancels.ts), fenced by `attempt` so a runner that lost its job (expiry, crash) can never
// overwrite the result of the one that took over.
// Finishing notifies EXECUTION_DONE_CHANNEL in the same statement, so a waiter that hears it always
// finds the final row.
import type { Queryable, Row, Statement } from './client.ts';
import { chargeUsageCte } from './usage.ts';

export const EXECUTION_DONE_CHANNEL = 'execution_done';

/** What a paused execution waits for (runner/executor/park.ts PauseDetails, as stored). */
export interface StoredPause {
  blockId: string;
  contextId: string;
  message: string;
  fields: Record<string, { type: string; required: boolean; default?: unknown; description?: string }>;
  pausedAt: string;
  expiresAt: string | null;
}

export type ExecutionStatus = 'queued' | 'processing' | 'paused' | 'completed' | 'failed' | 'cancelled';

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
  /** Where the Job record is POSTed when it ends (runner/callback-jobs.ts); null: no callback. */
  callback_url: string | null;
  callback_status: 'pending' | 'delivered' | 'given_up' | null;
  /** Set with status `cancelled` (db/execution-cancels.ts). */
  cancelled_at: Date | null;
  cancelled_by: string | null;
  /** Set while the execution is parked (db/execution-parks.ts): when it is due to go on. */
  resume_at?: Date | null;
  /** Set while `paused` (db/execution-pauses.ts): what the approval waits for. */
  pause?: StoredPause | null;
  /** Streamed: the selected outputs ([] for all); null: not streamed (db/execution-events.ts). */
  stream_outputs: string[] | null;
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
  /** The completion callback's URL (async executions only), checked by the caller. */
  callbackUrl?: string | null;
  /** Its workflow's concurrency limit and the group it counts in (db/execution-concurrency.ts). */
  concurrency?: { limit: number; group: string } | null;
  /** Streamed (db/execution-events.ts): the `selectedOutputs` asked for, [] for all; null: not streamed. */
  streamOutputs?: string[] | null;
}

/** Inserts queued executions, all in one statement; returns each one's creation time by id. */
export async function insertExecutions(tx: Queryable, rows: NewExecution[]): Promise<Map<string, Date>> {
  const col = <K extends keyof NewExecution>(k: K) => rows.map((r) => r[k]);
  const created = await tx.query<{ id: string; created_at: Date }>(
    `insert into executions (id, organization_id, workspace_id, workflow_id, version, mode, trigger, api_key_id,
       billed_user_id, billing_subject, inputs, callback_url, callback_status, concurrency_group, concurrency_limit,
       stream_outputs)
     select id, organization_id, workspace_id, workflow_id, version, mode, trigger, api_key_id, billed_user_id,
            billing_subject, inputs::jsonb, callback_url, case when callback_url is null then null else 'pending' end,
            concurrency_group, concurrency_limit, stream_outputs::jsonb
       from unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::int[], $6::text[], $7::text[], $8::uuid[],
         $9::uuid[], $10::text[], $11::text[], $12::text[], $13::text[], $14::int[], $15::text[])
         as t(id, organization_id, workspace_id, workflow_id, version, mode, trigger, api_key_id, billed_user_id,
           billing_subject, inputs, callback_url, concurrency_group, concurrency_limit, stream_outputs)
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
      rows.map((r) => r.callbackUrl ?? null),
      rows.map((r) => r.concurrency?.group ?? null),
      rows.map((r) => r.concurrency?.limit ?? null),
      rows.map((r) => (r.streamOutputs ? JSON.stringify(r.streamOutputs) : null)),
    ],
  );
  return new Map(created.map((r) => [r.id, r.created_at]));
}

export async function getExecution(db: Queryable, id: string): Promise<ExecutionRow | null> {
  const [row] = await db.query<ExecutionRow>('select * from executions where id = $1', [id]);
  return row ?? null;
}

/**
 * Reads an execution as getExecution does, and answers only once everything committed before is on
 * disk: a sync execution's enqueueing commits without waiting for the disk (COMMIT_WITHOUT_FLUSH),
 * so a caller about to be told of it while it runs on reads it here. The row's key-share lock is a
 * write to the WAL, which makes this statement's own commit a durable one, and a durable commit
 * flushes all the WAL before it. (It blocks no update of the row, which never changes its key.)
 */
export async function getExecutionDurably(db: Queryable, id: string): Promise<ExecutionRow | null> {
  const [row] = await db.query<ExecutionRow>('select * from executions where id = $1 for key share', [id]);
  return row ?? null;
}

export type Claim = Pick<
  ExecutionRow,
  'attempt' | 'workspace_id' | 'workflow_id' | 'version' | 'inputs' | 'depth'
> & {
  started_at: Date;
  /** Its end must enqueue a callback delivery, in the transaction that records it. */
  has_callback: boolean;
  /** Set when the caller streams its events: the selected outputs ([] for all). */
  stream_outputs: string[] | null;
};

/**
 * Takes executions for running: marks each processing under a new attempt number. An id missing
 * from the answer finished already (a duplicate delivery of its job), which the caller just
 * acknowledges. One statement for the whole batch.
 */
export async function claimExecutions(db: Queryable, ids: string[]): Promise<Map<string, Claim>> {
  const rows = await db.query<Claim & { id: string }>(
    `update executions set status = 'processing', attempt = attempt + 1, started_at = coalesce(started_at, now())
      where id = any($1::uuid[]) and status in ('queued', 'processing') and resume_at is null
      returning id, attempt, workspace_id, workflow_id, version, inputs, depth, started_at,
        callback_url is not null as has_callback, stream_outputs`,
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
  /** `parked` (db/execution-parks.ts): not an end; the waiter hands the caller the job. */
  status: 'completed' | 'failed' | 'cancelled' | 'parked';
  /** Absent when it would not fit a notification: the waiter then reads the row. */
  output?: unknown;
  error?: string | null;
  startedAt: string;
  endedAt: string;
}

// Postgres caps a NOTIFY payload at 8000 bytes.
const MAX_NOTICE_BYTES = 7900;

/** A result to record: the execution, the attempt that produced it, and its outcome. */
export interface FinishedExecution {
  id: string;
  attempt: number;
  outcome: ExecutionOutcome;
}

/**
 * Records results whose `attempt` still holds its execution, adds their cost to their billed
 * subjects' spend for the period they ended in, and notifies waiters: one statement for the whole
 * batch, so spend never misses nor double-counts a run. Returns the ids recorded; an id missing
 * lost its execution to another attempt.
 */
export async function finishExecutions(db: Queryable, results: FinishedExecution[]): Promise<Set<string>> {
  const { text, params } = finishStatement(results);
  return recordedIds(await db.query(text, params));
}

/** The ids a finishStatement's rows say were recorded. */
export function recordedIds(rows: Row[]): Set<string> {
  return new Set(rows.map((r) => r.id as string));
}

/** finishExecutions as a statement, to run in a list with others (Db.atomically). */
export function finishStatement(results: FinishedExecution[]): Statement {
  // The batch goes as one JSON document: a trace is JSON already, and as an element of a text array
  // each one would be escaped character by character on the way out and unescaped on the way in.
  const batch = results.map(({ id, attempt, outcome }) => {
    // JSON text, not a value: the notice splices the same text in.
    const output = outcome.status === 'completed' ? JSON.stringify(outcome.output ?? null) : null;
    return {
      id,
      attempt,
      status: outcome.status,
      output,
      error: outcome.error ?? null,
      trace: outcome.trace ?? null,
      cost: outcome.cost ?? null,
      cost_total: outcome.cost?.total ?? 0,
      ended_at: outcome.endedAt.toISOString(),
      notice: notice(id, outcome, output),
    };
  });
  return {
    text: `with input as (
       select * from jsonb_to_recordset($1::jsonb)
         as t(id uuid, attempt int, status text, output text, error text, trace jsonb, cost jsonb,
           cost_total numeric, ended_at timestamptz, notice text)),
     done as (
       update executions e set status = i.status, output = i.output::jsonb, error = i.error, trace = i.trace,
         cost = i.cost, ended_at = i.ended_at
       from input i where e.id = i.id and e.attempt = i.attempt and e.status = 'processing'
       returning e.id, e.billing_subject, i.notice, i.cost_total, i.ended_at),
     ${chargeUsageCte('done')}
     select id, pg_notify($2, notice) from done`,
    params: [JSON.stringify(batch), EXECUTION_DONE_CHANNEL],
  };
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

/**
 * Fails an execution whatever attempt holds it: its job ran out of retries (a runner kept dying).
 * Null when it had ended already; else whether it has a completion callback to enqueue.
 */
export async function abandonExecution(
  db: Queryable,
  id: string,
  error: string,
): Promise<{ hasCallback: boolean } | null> {
  const [row] = await db.query<{ has_callback: boolean }>(
    `with done as (
       update executions set status = 'failed', error = $2, ended_at = now(), started_at = coalesce(started_at, now())
        where id = $1 and status in ('queued', 'processing') returning id, callback_url)
     select pg_notify($3, json_build_object('id', id)::text), callback_url is not null as has_callback from done`,
    [id, error, EXECUTION_DONE_CHANNEL],
  );
  return row ? { hasCallback: row.has_callback } : null;
}

/**
 * The Job record of an execution: what GET /api/jobs/{id} answers (with `success`, see jobAnswer)
 * and what a completion callback delivers. `output` only when completed; a failed job carries its
 * error. A missing row is a job not yet recorded: queued.
 */
export function jobRecord(row: ExecutionRow | null, id: string, link?: PauseLink) {
  return row ? recordedJob(row, link) : { taskId: id, status: 'queued' as const };
}

/** Makes the signed approval link of a pause (jobs/approval-links.ts); absent: the record has none. */
export type PauseLink = (executionId: string, pause: StoredPause) => string;

/** The Job record of a recorded execution: always with its metadata (typed so, for the answers). */
function recordedJob(row: ExecutionRow, link?: PauseLink) {
  return {
    taskId: row.id,
    status: row.status,
    ...(row.status === 'completed' ? { output: row.output } : {}),
    ...(row.status === 'failed' || row.status === 'cancelled' ? { error: row.error } : {}),
    metadata: {
      // A job not yet started reports when it was queued.
      startTime: (row.started_at ?? row.created_at).toISOString(),
      ...(row.ended_at ? { endTime: row.ended_at.toISOString() } : {}),
      ...(row.started_at && row.ended_at
        ? { duration: row.ended_at.getTime() - row.started_at.getTime() }
        : {}),
      createdAt: row.created_at.toISOString(),
      workflowId: row.workflow_id,
      mode: row.mode,
      trigger: row.trigger,
      ...(row.resume_at && row.status === 'processing' ? { resumeAt: row.resume_at.toISOString() } : {}),
      ...(row.status === 'paused' && row.pause
        ? { pause: pauseRecord(row.workflow_id, row.id, row.pause, link) }
        : {}),
      ...(row.cancelled_at
        ? { cancelledAt: row.cancelled_at.toISOString(), cancelledBy: row.cancelled_by ?? 'unknown' }
        : {}),
    },
  };
}

/** The body of GET /api/jobs/{id} for a recorded execution, which a completion callback also carries. */
export function jobAnswer(row: ExecutionRow, link?: PauseLink) {
  return { success: row.status !== 'failed' && row.status !== 'cancelled', ...recordedJob(row, link) };
}

/** A paused execution's `metadata.pause`: what it waits for, and where a resume goes. */
export function pauseRecord(workflowId: string, executionId: string, pause: StoredPause, link?: PauseLink) {
  return {
    blockId: pause.blockId,
    contextId: pause.contextId,
    message: pause.message,
    fields: pause.fields,
    resumeUrl: `/api/resume/${workflowId}/${executionId}/${pause.contextId}`,
    ...(link ? { approvalUrl: link(executionId, pause) } : {}),
    pausedAt: pause.pausedAt,
    expiresAt: pause.expiresAt,
  };
}
