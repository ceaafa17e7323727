// GET /api/workflows/{id}/executions/{executionId}/stream: reconnects to the Server-Sent Events of
// an execution started with `stream: true` (api/execution-stream.ts writes them), after the client's
// `Last-Event-ID` or `?from=`. A plain handler (an event stream is no JSON answer): the Router
// documents and guards it, and the handler checks its own parameters.
import { authorizeResource } from '../../../db/access.ts';
import { getExecution } from '../../../db/executions.ts';
import { currentUsage, limitsObject, principalBillingContext } from '../../../db/usage.ts';
import { conflict, invalidField, notFound } from '../../../errors.ts';
import type { ApiDeps } from '../../context.ts';
import { executionEventStream, SSE_HEADERS } from '../../execution-stream.ts';
import { type Guards, Router } from '../router.ts';
import { executionStreamRoute, streamParams } from './stream-schemas.ts';
import { eventSweeper } from './stream-sweep.ts';

/** An event id the client sent: a whole number, at most the largest one an execution may reach. */
function eventId(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (!/^\d{1,10}$/.test(trimmed) || Number(trimmed) > 2_147_483_647) {
    throw invalidField(name, 'Must be a whole number of 0 or more (an event id)', 'invalid_format');
  }
  return Number(trimmed);
}

export function streamRoutes(deps: ApiDeps, guards: Guards) {
  const { db, config, clock } = deps;
  const sweep = eventSweeper(deps);
  return new Router(guards, { rateLimited: true }).plain(executionStreamRoute, async (c) => {
    const parsed = streamParams.safeParse({ id: c.req.param('id'), executionId: c.req.param('executionId') });
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const name = issue?.path[0] === 'id' ? 'workflowId' : 'executionId';
      throw invalidField(name, 'Must be a UUID', 'invalid_format');
    }
    const { id, executionId } = parsed.data;
    // The browser's EventSource sends Last-Event-ID when it reconnects; it wins over ?from=.
    const after =
      eventId('Last-Event-ID', c.req.header('last-event-id')) ?? eventId('from', c.req.query('from')) ?? 0;
    const principal = c.get('principal');
    const row = await getExecution(db, executionId);
    if (!row || row.workflow_id !== id) throw notFound('Execution');
    await authorizeResource(db, principal, row.workspace_id, 'read', 'Execution');
    if (row.stream_outputs === null) {
      throw conflict(
        'The execution was not started with stream: true, so it has no event stream: read its result from GET /api/jobs/{taskId}',
      );
    }
    sweep();
    const body = executionEventStream({
      db,
      executionId,
      after,
      heartbeatMs: config.STREAM_HEARTBEAT_MS,
      async limits() {
        const ctx = principalBillingContext(principal);
        const usage = await currentUsage(db, ctx, clock());
        return limitsObject(ctx, usage.buckets, config.BILLING_ENABLED ? usage.spend : null);
      },
    });
    return c.body(body, 200, { ...SSE_HEADERS, 'X-Execution-Id': executionId });
  }).app;
}
