// Paused executions over the public API (runner/blocks/approval.ts): POST
// /api/resume/{workflowId}/{executionId}/{contextId} answers a pause (the original service's path),
// with a key that has write permission on the workspace; GET /api/workflows/{id}/paused lists a
// workflow's paused executions. jobs/resume-execution.ts records the answer, exactly once.
import { createRoute } from '@hono/zod-openapi';
import { actorOf, authorizeResource } from '../../../db/access.ts';
import type { Principal } from '../../../db/api-keys.ts';
import { listPaused } from '../../../db/execution-pauses.ts';
import { pauseRecord } from '../../../db/executions.ts';
import { getWorkflow } from '../../../db/workflows.ts';
import { notFound } from '../../../errors.ts';
import { approvalLinks } from '../../../jobs/approval-links.ts';
import { executionResumer } from '../../../jobs/resume-execution.ts';
import type { ApiDeps } from '../../context.ts';
import { API_RATE_LIMITED, jsonBody, ok, RESOURCE_WRITE_DENIED } from '../../openapi/components.ts';
import { errors, invalid } from '../../openapi/error-answers.ts';
import { type Guards, Router } from '../router.ts';
import { pausedExample, resumeExample, resumeRequestExample } from './examples.ts';
import { pausedList, pausedParams, pausedQuery, resumeAnswer, resumeBody, resumeParams } from './schemas.ts';

export const resumeExecutionRoute = createRoute({
  method: 'post',
  path: '/api/resume/{workflowId}/{executionId}/{contextId}',
  operationId: 'resumeExecution',
  scope: 'workflows:execute' as const,
  tags: ['Workflows'],
  summary: 'Answer a paused execution',
  description:
    "Answers the approval a paused execution waits for (its Job record's `metadata.pause`): `approved` " +
    "true takes the block's `approved` branch, false its `rejected` branch; `data` carries the fields the " +
    "approval asked for, checked against their types (required ones only when approving). The block's " +
    'output becomes `{approved, data, by, at}` and the execution goes on in the background (202): poll its ' +
    'job. Exactly once: a second answer, or one after the timeout or a cancel, is a 409 and changes nothing. ' +
    'Needs write permission on the workspace; the audit log records who approved or rejected.',
  request: { params: resumeParams, body: jsonBody(resumeBody, resumeRequestExample) },
  responses: {
    202: ok(
      { description: 'Recorded: the execution goes on', schema: resumeAnswer, example: resumeExample },
      'api',
    ),
    ...errors(
      {
        400: [
          invalid(
            ['data', 'amount'],
            'Expected number, received string',
            'invalid_type',
            'Invalid resume data',
          ),
          invalid(['approved'], 'Invalid input: expected boolean, received undefined', 'invalid_type'),
        ],
        403: RESOURCE_WRITE_DENIED,
        404: 'Execution not found',
        409: [
          'Execution is not paused (processing): there is nothing to answer',
          'This pause was answered already: the execution now waits on another one',
        ],
        429: API_RATE_LIMITED,
      },
      {
        metering: 'api',
        meanings: {
          404: 'No such execution of this workflow, or not in the reach of this key',
          409: 'The execution is not waiting on this pause (answered, timed out, cancelled or finished): nothing changed',
        },
      },
    ),
  },
});

export const listPausedRoute = createRoute({
  method: 'get',
  path: '/api/workflows/{id}/paused',
  operationId: 'listPausedExecutions',
  scope: 'workflows:read' as const,
  tags: ['Workflows'],
  summary: 'List paused executions',
  description:
    "A workflow's executions waiting for an approval (status `paused`), oldest first, each with what it " +
    'waits for (`pause`, as in its Job record, with the `resumeUrl` to answer it). Read access to the workspace is enough.',
  request: { params: pausedParams, query: pausedQuery },
  responses: {
    200: ok({ description: 'The paused executions', schema: pausedList, example: pausedExample }, 'api'),
    ...errors(
      {
        400: invalid(['limit'], 'Too big: expected number to be <=200', 'too_big'),
        403: 'Personal API keys are disabled in this workspace; use a workspace key',
        404: 'Workflow not found',
        429: API_RATE_LIMITED,
      },
      { metering: 'api' },
    ),
  },
});

/** How the approval's output names who answered: a user (personal key) or a workspace key. */
const answeredBy = (p: Principal) => (p.type === 'personal' ? `user:${p.userId}` : `key:${p.keyId}`);

export function resumeRoutes(deps: ApiDeps, guards: Guards) {
  const { db } = deps;
  const resume = executionResumer({ ...deps, now: deps.clock });
  const links = approvalLinks(deps.config);
  return new Router(guards, { rateLimited: true })
    .openapi(resumeExecutionRoute, async (c) => {
      const { workflowId, executionId, contextId } = c.req.valid('param');
      const body = c.req.valid('json');
      const principal = c.get('principal');
      const done = await resume({
        workflowId,
        executionId,
        contextId,
        approved: body.approved,
        data: body.data ?? {},
        actor: actorOf(principal),
        by: answeredBy(principal),
        // Out of the key's reach reads as not found; in reach without write permission, 403.
        authorize: async (tx, row) => {
          await authorizeResource(tx, principal, row.workspace_id, 'write', 'Execution');
        },
      });
      return c.json(
        {
          success: true as const,
          async: true as const,
          executionId,
          status: done.status,
          approved: done.approved,
          data: done.data,
          by: done.by,
          at: done.at,
          message: 'Resume execution queued',
          links: { status: `/api/jobs/${executionId}` },
        },
        202,
      );
    })
    .openapi(listPausedRoute, async (c) => {
      const { id } = c.req.valid('param');
      const { limit } = c.req.valid('query');
      const workflow = await getWorkflow(db, id);
      if (!workflow) throw notFound('Workflow');
      await authorizeResource(db, c.get('principal'), workflow.workspaceId, 'read', 'Workflow');
      const paused = await listPaused(db, id, limit);
      return c.json(
        {
          success: true as const,
          data: paused.map((p) => ({
            executionId: p.id,
            workflowId: p.workflowId,
            createdAt: p.createdAt,
            pause: pauseRecord(p.workflowId, p.id, p.pause, links.url),
          })),
        },
        200,
      );
    }).app;
}
