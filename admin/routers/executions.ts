// Admin: executions. `run` starts one by hand (trigger `manual`): an operator's run takes no
// rate-limit token and is not refused at the spend limit, but its cost is still recorded. `get`
// shows one execution whole (output, error, trace spans, cost); `list` pages a workspace's
// executions whatever their state, filtered by workflow, status, trigger and creation time. `cancel`
// stops a queued, processing or paused one, as the public cancel endpoint does (jobs/cancel-execution.ts);
// `resume` answers a paused one's approval, as POST /api/resume/… does (jobs/resume-execution.ts).
import type { PgBoss } from 'pg-boss';
import { z } from 'zod';
import { ADMIN_ACTOR } from '../../db/audit-logs.ts';
import { listExecutions } from '../../db/execution-lists.ts';
import { type ExecutionCost, type ExecutionRow, getExecution, pauseRecord } from '../../db/executions.ts';
import { conflict, notFound } from '../../errors.ts';
import { approvalLinks } from '../../jobs/approval-links.ts';
import { executionCanceller } from '../../jobs/cancel-execution.ts';
import { executionResumer } from '../../jobs/resume-execution.ts';
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

const resumers = new WeakMap<PgBoss, ReturnType<typeof executionResumer>>();
function resumerOf(ctx: AdminContext) {
  let resume = resumers.get(ctx.queue);
  if (!resume) {
    resume = executionResumer({ db: ctx.db, config: ctx.config, queue: ctx.queue });
    resumers.set(ctx.queue, resume);
  }
  return resume;
}

const toDetail = (r: ExecutionRow, link: ReturnType<typeof approvalLinks>['url']) => ({
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
  // Paused (an approval waiting for a person): what it waits for, answered with `resume`.
  pause: r.status === 'paused' && r.pause ? pauseRecord(r.workflow_id, r.id, r.pause, link) : null,
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
      return toDetail(row, approvalLinks(ctx.config).url);
    }),
  cancel: procedure
    .meta({
      description:
        'Cancel a queued, processing or paused execution (a queued one never starts; a running one stops within a second); 409 once it finished',
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
  resume: procedure
    .meta({
      description:
        "Answer a paused execution's approval (approved true|false, data: its fields); 409 once it is no longer paused",
    })
    .input(
      z.object({
        id: z.uuid(),
        approved: z.boolean(),
        data: z.record(z.string(), z.unknown()).default({}),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const row = await getExecution(ctx.db, input.id);
      if (!row) throw notFound('Execution');
      if (row.status !== 'paused' || !row.pause)
        throw conflict(`Execution is not paused (${row.status}): there is nothing to answer`);
      const done = await resumerOf(ctx)({
        workflowId: row.workflow_id,
        executionId: row.id,
        contextId: row.pause.contextId,
        approved: input.approved,
        data: input.data,
        actor: ADMIN_ACTOR,
        by: 'admin',
      });
      return {
        executionId: done.executionId,
        status: 'processing' as const,
        approved: done.approved,
        data: done.data,
        by: done.by,
        at: done.at,
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
