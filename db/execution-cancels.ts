// Cancelling executions (queued, processing or paused). The cancel is recorded at once, by whoever asks (API or admin plane): the
// row turns `cancelled` in one statement that also notifies the sync caller waiting on
// EXECUTION_DONE_CHANNEL and the runners on EXECUTION_CANCEL_CHANNEL (both delivered at commit).
// A queued execution is then never claimed (claimExecutions takes queued and processing rows only);
// the runner holding a processing one aborts it and afterwards adds the trace and the cost of the
// blocks that finished (settleCancelledStatement): a cancelled run is charged for what ran, no more.
import type { Queryable, Statement } from './client.ts';
import { EXECUTION_DONE_CHANNEL, type ExecutionCost } from './executions.ts';
import { chargeUsageCte } from './usage.ts';

/** Runners LISTEN here; the payload is the cancelled execution's id. */
export const EXECUTION_CANCEL_CHANNEL = 'execution_cancel';

/** The error a cancelled execution records, which its Job record and sync answer show. */
export const CANCELLED_ERROR = 'Execution was cancelled';

export interface CancelledExecution {
  id: string;
  organizationId: string;
  workspaceId: string;
  workflowId: string;
  /** The state it was cancelled in. */
  was: 'queued' | 'processing' | 'paused';
  cancelledAt: Date;
  hasCallback: boolean;
}

/**
 * Cancels an execution that is queued or processing; null when it is not (finished already,
 * cancelled before, or missing: the caller reads the row to tell which). `by` says who asked.
 */
export async function cancelExecution(
  tx: Queryable,
  id: string,
  by: string,
): Promise<CancelledExecution | null> {
  const [row] = await tx.query<{
    id: string;
    organization_id: string;
    workspace_id: string;
    workflow_id: string;
    was: 'queued' | 'processing' | 'paused';
    cancelled_at: Date;
    has_callback: boolean;
  }>(
    // The prior status is read under the row lock the update takes (for update), so `was` is the
    // state this statement moved it out of, even when a runner's claim raced it.
    `with prior as (select id, status from executions where id = $1 for update),
     done as (
       update executions e set status = 'cancelled', error = $2, cancelled_at = now(), cancelled_by = $3,
         ended_at = now()
         from prior p where e.id = p.id and p.status in ('queued', 'processing', 'paused')
       returning e.id, e.organization_id, e.workspace_id, e.workflow_id, p.status as was, e.cancelled_at,
         e.created_at, e.started_at, e.callback_url is not null as has_callback)
     select id, organization_id, workspace_id, workflow_id, was, cancelled_at, has_callback,
            pg_notify($4, json_build_object('id', id, 'status', 'cancelled', 'error', $2::text,
              'startedAt', to_char(coalesce(started_at, created_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
              'endedAt', to_char(cancelled_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text),
            pg_notify($5, id::text)
       from done`,
    [id, CANCELLED_ERROR, by, EXECUTION_DONE_CHANNEL, EXECUTION_CANCEL_CHANNEL],
  );
  return row
    ? {
        id: row.id,
        organizationId: row.organization_id,
        workspaceId: row.workspace_id,
        workflowId: row.workflow_id,
        was: row.was,
        cancelledAt: row.cancelled_at,
        hasCallback: row.has_callback,
      }
    : null;
}

/** Which of these executions are cancelled: the runners' fallback for a notice they missed. */
export async function cancelledAmong(db: Queryable, ids: string[]): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    `select id from executions where id = any($1::uuid[]) and status = 'cancelled'`,
    [ids],
  );
  return rows.map((r) => r.id);
}

/** What a runner ran of a cancelled execution before it stopped. */
export interface CancelledRun {
  id: string;
  attempt: number;
  trace: unknown;
  cost: ExecutionCost;
}

/**
 * Records the trace and cost of cancelled runs (once, and only by the attempt that ran them) and
 * adds the cost to their billed subjects' spend for the period the cancel fell in. A statement for
 * Db.atomically, so it commits with the completion of the runs' jobs.
 */
export function settleCancelledStatement(runs: CancelledRun[]): Statement {
  const batch = runs.map((r) => ({
    id: r.id,
    attempt: r.attempt,
    trace: r.trace,
    cost: r.cost,
    cost_total: r.cost.total,
  }));
  return {
    text: `with input as (
       select * from jsonb_to_recordset($1::jsonb)
         as t(id uuid, attempt int, trace jsonb, cost jsonb, cost_total numeric)),
     done as (
       update executions e set trace = i.trace, cost = i.cost
         from input i
        where e.id = i.id and e.attempt = i.attempt and e.status = 'cancelled' and e.cost is null
       returning e.id, e.billing_subject, i.cost_total, e.ended_at),
     ${chargeUsageCte('done')}
     select id from done`,
    params: [JSON.stringify(batch)],
  };
}
