// POST /api/workflows/{id}/executions/{executionId}/cancel: stops an execution (the original
// service's path and answer). Authorised as a write to the execution's workspace; a key that cannot
// act there learns nothing (404, as for an unknown execution). jobs/cancel-execution.ts records it.
import { createRoute } from '@hono/zod-openapi';
import { actorOf, authorizeResource } from '../../../db/access.ts';
import type { Principal } from '../../../db/api-keys.ts';
import { getExecution } from '../../../db/executions.ts';
import { notFound } from '../../../errors.ts';
import { executionCanceller } from '../../../jobs/cancel-execution.ts';
import type { ApiDeps } from '../../context.ts';
import { ok, RESOURCE_WRITE_DENIED } from '../../openapi/components.ts';
import { errors, invalid } from '../../openapi/error-answers.ts';
import { type Guards, Router } from '../router.ts';
import { cancelAnswer, cancelExamples, cancelParams } from './cancel-schemas.ts';

export const cancelExecutionRoute = createRoute({
  method: 'post',
  path: '/api/workflows/{id}/executions/{executionId}/cancel',
  operationId: 'cancelExecution',
  scope: 'workflows:execute' as const,
  tags: ['Workflows'],
  summary: 'Cancel an execution',
  description:
    'Stops a queued, running or paused execution. A queued one never starts, a paused one never resumes; a running one stops within a ' +
    'second (HTTP and model calls are aborted, function code is stopped, loops, parallels and child ' +
    'workflows end with it). Its job turns `cancelled` at once (`metadata.cancelledAt`, ' +
    '`metadata.cancelledBy`); a sync caller waiting on it is answered `cancelled`; a completion ' +
    'callback is sent with the cancelled Job record. Blocks that finished before the cancel are ' +
    'charged; nothing after. Cancelling again answers 200 with `reason: already_cancelled`; an ' +
    'execution that already completed or failed is left as it is (409). Does not draw from a rate-limit bucket.',
  request: { params: cancelParams },
  responses: {
    200: ok({ description: 'Cancelled', schema: cancelAnswer, examples: cancelExamples }, 'shown'),
    ...errors(
      {
        400: invalid(['executionId'], 'Must be a UUID', 'invalid_format'),
        403: RESOURCE_WRITE_DENIED,
        404: 'Execution not found',
        409: 'Execution already finished (completed): it can no longer be cancelled',
      },
      {
        metering: 'shown',
        meanings: {
          404: 'No such execution of this workflow, or not in the reach of this key',
          409: 'The execution already completed or failed: nothing changed',
        },
      },
    ),
  },
});

/** How the Job record names who cancelled: a user (personal key) or a workspace key. */
const cancelledBy = (p: Principal) => (p.type === 'personal' ? `user:${p.userId}` : `key:${p.keyId}`);

export function cancelRoutes(deps: ApiDeps, guards: Guards) {
  const cancel = executionCanceller(deps);
  return new Router(guards, { rateLimited: true }).openapi(cancelExecutionRoute, async (c) => {
    const { id, executionId } = c.req.valid('param');
    const principal = c.get('principal');
    const row = await getExecution(deps.db, executionId);
    if (!row || row.workflow_id !== id) throw notFound('Execution');
    await authorizeResource(deps.db, principal, row.workspace_id, 'write', 'Execution');
    const outcome = await cancel({ executionId, actor: actorOf(principal), by: cancelledBy(principal) });
    const fresh = outcome.kind === 'cancelled';
    const reason: 'queue_cancelled' | 'recorded' | 'already_cancelled' = fresh
      ? outcome.execution.was === 'queued'
        ? 'queue_cancelled'
        : 'recorded'
      : 'already_cancelled';
    return c.json(
      {
        success: true as const,
        executionId,
        status: 'cancelled' as const,
        reason,
        durablyRecorded: fresh,
        cancelledAt: (fresh ? outcome.execution.cancelledAt : outcome.cancelledAt).toISOString(),
        redisAvailable: true,
        locallyAborted: false,
        pausedCancelled: fresh && outcome.execution.was === 'paused',
      },
      200,
    );
  }).app;
}
