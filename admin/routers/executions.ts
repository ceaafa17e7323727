// Admin: executions. `run` starts one by hand (trigger `manual`): an operator's run takes no
// rate-limit token and is not refused at the spend limit, but its cost is still recorded. `get`
// shows one execution whole (output, error, trace spans, cost); `list` pages a workspace's
// executions whatever their state, filtered by workflow, status, trigger and creation time. `cancel`
// stops a queued or processing one, as the public cancel endpoint does (jobs/cancel-execution.ts).
import type { PgBoss } from 'pg-boss';
import { z } from 'zod';
import { ADMIN_ACTOR } from '../../db/audit-logs.ts';
import { listExecutions } from '../../db/execution-lists.ts';
import { type ExecutionCost, type ExecutionRow, getExecution } from '../../db/executions.ts';
import { notFound } from '../../errors.ts';
import { executionCanceller } from '../../jobs/cancel-execution.ts';
import { executionStarter } from '../../jobs/start-execution.ts';
import type { Span } from '../../runner/executor/trace.ts';
import { triggerTarget } from '../trigger-target.ts';
import { type AdminContext, procedure, router } from '../trpc.ts';

const STATUSES = ['queued', 'processing', 'paused', 'completed', 'failed', 'cancelled'] as const;
const instant = z.iso.datetime({ offset: true });

// One starter per sender: it keeps the deployed versions it has read, and batches what arrives together.
const starters = new WeakMap<PgBoss, ReturnType<typeof executionStarter>>();
function starterOf(ctx: AdminContext) {
  let start = starters.get(ctx.queue);
  if (!start) {
    start = executionStarter({ db: ctx.db, config: ctx.config, queue: ctx.queue, clock: () => new Date() });
    starters.set(ctx.queue, start);
  }
  return start;
}

const cancellers = new WeakMap<PgBoss, ReturnType<typeof executionCanceller>>();
function cancellerOf(ctx: AdminContext) {
  let cancel = cancellers.get(ctx.queue);
  if (!cancel) {
    cancel = executionCanceller({ db: ctx.db, config: ctx.config, queue: ctx.queue });
    cancellers.set(ctx.queue, cancel);
  }
  return cancel;
}

const toDetail = (r: ExecutionRow) => ({
  id: r.id,
  workspaceId: r.workspace_id,
  workflowId: r.workflow_id,
  version: r.version,
  status: r.status,
  mode: r.mode,
  trigger: r.trigger,
  attempt: r.attempt,
  inputs: r.inputs,
  output: r.status === 'completed' ? r.output : null,
  error: r.error,
  cost: (r.cost as ExecutionCost | null) ?? null,
  traceSpans: (r.trace as Span[] | null) ?? [],
  createdAt: r.created_at.toISOString(),
  startedAt: r.started_at?.toISOString() ?? null,
  endedAt: r.ended_at?.toISOString() ?? null,
  cancelledAt: r.cancelled_at?.toISOString() ?? null,
  cancelledBy: r.cancelled_by,
  // Parked (a long wait or retry delay): when a runner takes it up again (runner/park-sweeper.ts).
  resumeAt: r.status === 'processing' && r.resume_at ? r.resume_at.toISOString() : null,
  durationMs: r.started_at && r.ended_at ? r.ended_at.getTime() - r.started_at.getTime() : null,
});

export const executionsRouter = router({
  run: procedure
    .meta({
      description:
        'Run a deployed workflow by hand, async (trigger manual; no rate limit, not refused at the spend limit)',
    })

    .input(
      triggerTarget.extend({
        inputs: z.record(z.string(), z.unknown()).default({}),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const started = await starterOf(ctx)({
        workflowId: input.workflowId,
        by: { actor: ADMIN_ACTOR, ...(input.workspaceId ? { workspaceId: input.workspaceId } : {}) },
        inputs: () => input.inputs,
        mode: 'async',
        trigger: 'manual',
        metered: false,
      });
      return {
        executionId: started.executionId,
        status: 'queued' as const,
        createdAt: (started.createdAt ?? new Date()).toISOString(),
      };
    }),
  get: procedure
    .meta({ description: 'Show one execution whole: inputs, output, error, cost and trace' })
    .input(z.object({ id: z.uuid() }))
    .query(async ({ ctx, input }) => {
      const row = await getExecution(ctx.db, input.id);
      if (!row) throw notFound('Execution');
      return toDetail(row);
    }),
  cancel: procedure
    .meta({
      description:
        'Cancel a queued or processing execution (a queued one never starts; a running one stops within a second); 409 once it finished',
    })
    .input(z.object({ id: z.uuid() }))
    .mutation(async ({ ctx, input }) => {
      const outcome = await cancellerOf(ctx)({ executionId: input.id, actor: ADMIN_ACTOR, by: 'admin' });
      const fresh = outcome.kind === 'cancelled';
      return {
        executionId: input.id,
        status: 'cancelled' as const,
        reason: fresh
          ? outcome.execution.was === 'queued'
            ? 'queue_cancelled'
            : 'recorded'
          : 'already_cancelled',
        cancelledAt: (fresh ? outcome.execution.cancelledAt : outcome.cancelledAt).toISOString(),
      };
    }),
  list: procedure
    .meta({ description: "Page a workspace's executions in every state, newest first, with filters" })
    .input(
      z
        .object({
          workspaceId: z.uuid(),
          workflowId: z.uuid().optional(),
          status: z.enum(STATUSES).optional(),
          trigger: z.string().trim().min(1).max(50).optional(),
          /** Created at or after this instant (ISO 8601 with an offset or Z). */
          since: instant.optional(),
          /** Created before this instant. */
          until: instant.optional(),
          limit: z.number().int().min(1).max(100).default(20),
          cursor: z.uuid().optional(),
        })
        .refine((i) => !i.since || !i.until || Date.parse(i.since) < Date.parse(i.until), {
          message: 'until must be later than since',
          path: ['until'],
        }),
    )
    .query(({ ctx, input }) => {
      const { since, until, ...rest } = input;
      return listExecutions(ctx.db, {
        ...rest,
        ...(since ? { since: new Date(since) } : {}),
        ...(until ? { until: new Date(until) } : {}),
      });
    }),
});
