// Cancels an execution, for the public API and the admin plane alike: in one transaction the row
// turns `cancelled` (which tells the waiting sync caller and the runners, db/execution-cancels.ts),
// the audit log records who did it, and the completion callback, if any, is enqueued. Callers
// authorise first; this answers what the original service answers: cancelled now, or cancelled
// before (not an error), and 409 for a run that already finished, 404 for none. A cancelled execution
// of a workflow with a concurrency limit hands its slot (or its place in the queue) on in the same
// transaction, as any end does (jobs/concurrency-slots.ts): its runner stops within a second.
import type { PgBoss } from 'pg-boss';
import type { Config } from '../config.ts';
import type { Actor } from '../db/audit-logs.ts';
import { recordAudit } from '../db/audit-logs.ts';
import type { Db } from '../db/client.ts';
import { type CancelledExecution, cancelExecution } from '../db/execution-cancels.ts';
import { lockGroups } from '../db/execution-concurrency.ts';
import { getExecution } from '../db/executions.ts';
import { conflict, notFound } from '../errors.ts';
import { releaseSlots } from './concurrency-slots.ts';
import { callbackSender } from './send-callbacks.ts';

export type CancelOutcome =
  | { kind: 'cancelled'; execution: CancelledExecution }
  /** Cancelled by an earlier request: nothing changed. */
  | { kind: 'already_cancelled'; cancelledAt: Date };

export interface CancelRequest {
  executionId: string;
  /** Who asks, for the audit log. */
  actor: Actor;
  /** Who asks, as the Job record's metadata.cancelledBy shows it. */
  by: string;
}

export function executionCanceller(deps: { db: Db; config: Config; queue: PgBoss }) {
  const sendCallbacks = callbackSender(deps.queue, deps.config);
  return (request: CancelRequest): Promise<CancelOutcome> =>
    deps.db.transaction(async (tx) => {
      const { executionId: id } = request;
      // The group's lock before the row's, the order every claim and end of a limited group takes.
      // Without a group (most executions) there is no slot to hand on: the hand-over is skipped.
      const limited = await lockGroups(tx, [id]);
      const done = await cancelExecution(tx, id, request.by);
      if (!done) {
        const row = await getExecution(tx, id);
        if (!row) throw notFound('Execution');
        if (row.status === 'cancelled')
          return { kind: 'already_cancelled', cancelledAt: row.cancelled_at ?? row.ended_at ?? new Date() };
        throw conflict(`Execution already finished (${row.status}): it can no longer be cancelled`);
      }
      await Promise.all([
        recordAudit(tx, request.actor, {
          organizationId: done.organizationId,
          workspaceId: done.workspaceId,
          action: 'workflow.cancel',
          resourceType: 'workflow',
          resourceId: done.workflowId,
          metadata: { executionId: id, was: done.was },
        }),
        done.hasCallback ? sendCallbacks(tx, [id]) : undefined,
      ]);
      if (limited) await releaseSlots(deps.queue, tx, [id], deps.config.QUEUE_HEARTBEAT_SECONDS);
      return { kind: 'cancelled', execution: done };
    });
}
