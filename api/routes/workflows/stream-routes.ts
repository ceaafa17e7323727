// GET /api/workflows/{id}/executions/{executionId}/stream: reconnects to the Server-Sent Events of
// an execution started with `stream: true` (api/execution-stream.ts writes them), after the client's
// `Last-Event-ID` or `?from=`. A plain handler (an event stream is no JSON answer): the Router
// documents and guards it, and the handler checks its own parameters.
import { authorizeResource } from '../../../db/access.ts';
import { getExecution } from '../../../db/executions.ts';
import { conflict, invalidField, notFound } from '../../../errors.ts';
import type { ApiDeps } from '../../context.ts';
import { eventId, executionStreamAnswer } from '../../execution-stream-replay.ts';
import { type Guards, Router } from '../router.ts';
import { executionStreamRoute, streamParams } from './stream-schemas.ts';

export function streamRoutes(deps: ApiDeps, guards: Guards) {
  const { db } = deps;
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
    return executionStreamAnswer(deps, c, executionId, after);
  }).app;
}
