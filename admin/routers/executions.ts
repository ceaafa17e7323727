// Admin: executions. `run` starts one by hand (trigger `manual`): an operator's run takes no
// rate-limit token and is not refused at the spend limit, but its cost is still recorded. `get`
// shows one execution whole (output, error, trace spans, cost); `list` pages a workspace's
// executions whatever their state, filtered by workflow, status, trigger and creation time.
import type { PgBoss } from 'pg-boss';
import { z } from 'zod';
import { ADMIN_ACTOR } from '../../db/audit-logs.ts';
import { type ExecutionCost, type ExecutionRow, getExecution, listExecutions } from '../../db/executions.ts';
import { notFound } from '../../errors.ts';
import { executionStarter } from '../../jobs/start-execution.ts';
import type { Span } from '../../runner/executor/trace.ts';
import { triggerTarget } from '../trigger-target.ts';
import { type AdminContext, procedure, router } from '../trpc.ts';

const STATUSES = ['queued', 'processing', 'completed', 'failed'] as const;
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
