// GET /api/v1/workflows/{id}/runs: a workflow's executions in every state (the log lists finished
// ones only), newest first, cursor-paged. POST /api/v1/workflows/{id}/executions/{executionId}/rerun:
// a new execution with the inputs of an earlier one, of the version it ran (or, with `latest`, the
// one deployed now), started and answered exactly as execute is (api/execution-answer.ts).
import { createRoute } from '@hono/zod-openapi';
import { z } from 'zod';
import { authorizeResource } from '../../../db/access.ts';
import { listExecutions } from '../../../db/execution-lists.ts';
import { getExecution } from '../../../db/executions.ts';
import { getWorkflow } from '../../../db/workflows.ts';
import { notFound } from '../../../errors.ts';
import type { ApiDeps } from '../../context.ts';
import { executionAnswers } from '../../execution-answer.ts';
import { API_RATE_LIMITED, jsonBody, ok, RESOURCE_WRITE_DENIED } from '../../openapi/components.ts';
import { errors, withIdempotency } from '../../openapi/error-answers.ts';
import { type Guards, Router } from '../router.ts';
import { finishedExamples, queuedOrRunningExamples } from './examples.ts';
import {
  rerunBody,
  rerunInvalid,
  rerunParams,
  runPage,
  runPageExamples,
  runsInvalid,
  runsParams,
  runsQuery,
} from './runs-schemas.ts';
import { accepted, completed, executeHeaders, failed, stillRunning } from './schemas.ts';

export const listRunsRoute = createRoute({
  method: 'get',
  path: '/api/v1/workflows/{id}/runs',
  operationId: 'listWorkflowRuns',
  scope: 'workflows:read' as const,
  tags: ['Workflows'],
  summary: 'List runs',
  description:
    "A workflow's executions in every state (queued, processing, paused, completed, failed, cancelled), newest " +
    'first, without inputs, output or trace (the log entry of a finished one has them: ' +
    '`GET /api/v1/logs/executions/{executionId}`). Cursor-paged: pass `nextCursor` as `cursor`; it is ' +
    'null on the last page. Read access to the workspace is enough.',
  request: { params: runsParams, query: runsQuery },
  responses: {
    200: ok({ description: 'A page of runs', schema: runPage, examples: runPageExamples }, 'api'),
    ...errors(
      {
        400: runsInvalid,
        403: 'Personal API keys are disabled in this workspace; use a workspace key',
        404: 'Workflow not found',
        429: API_RATE_LIMITED,
      },
      { metering: 'api' },
    ),
  },
});

export const rerunRoute = createRoute({
  method: 'post',
  path: '/api/v1/workflows/{id}/executions/{executionId}/rerun',
  operationId: 'rerunExecution',
  scope: 'workflows:execute' as const,
  tags: ['Workflows'],
  summary: 'Rerun an execution',
  description:
    'Starts a new execution with the inputs of an earlier one (in any state), of the version it ran, ' +
    'or with `"latest": true` of the version deployed now (its inputs are checked against that version: ' +
    '400 when they no longer fit). The workflow must still be deployed. Answered as execute answers: ' +
    'sync by default, async with `"async": true` or `X-Execution-Mode: async`; it draws from the same ' +
    'rate-limit buckets and spend limit, and takes an Idempotency-Key. Needs write permission, as execute does.',
  request: {
    params: rerunParams,
    headers: executeHeaders,
    body: jsonBody(rerunBody, { async: true }),
  },
  responses: {
    200: ok(
      {
        description: 'Sync: the new run finished; `success` says whether it completed or failed',
        schema: z.union([completed, failed]),
        examples: finishedExamples,
      },
      'execute',
      { idempotent: true },
    ),
    202: ok(
      {
        description: 'Async: queued (or a sync run that outlived its wait: poll its job)',
        schema: z.union([accepted, stillRunning]),
        examples: queuedOrRunningExamples('api'),
      },
      'execute',
      { idempotent: true },
    ),
    ...errors(
      withIdempotency({
        400: rerunInvalid,
        402: 'Usage limit exceeded: $5.001 spent of $5 this billing period (free plan)',
        403: RESOURCE_WRITE_DENIED,
        404: 'Execution not found',
        409: 'Version 2 of the workflow no longer exists',
        413: 'Request body over 10485760 bytes',
        429: 'Rate limit exceeded for sync executions: 50 per minute (free plan); retry in 2 s',
      }),
      {
        metering: 'execute',
        retryAfter: [409],
        meanings: { 404: 'No such execution of this workflow, or not in the reach of this key' },
      },
    ),
  },
});

/** The list draws from the `api` bucket; the rerun, as execute, from its sync or async one. */
export function runRoutes(deps: ApiDeps, guards: Guards) {
  const { db } = deps;
  const executions = executionAnswers(deps);
  const list = new Router(guards, { rateLimited: true }).openapi(listRunsRoute, async (c) => {
    const { id } = c.req.valid('param');
    const q = c.req.valid('query');
    const workflow = await getWorkflow(db, id);
    if (!workflow) throw notFound('Workflow');
    await authorizeResource(db, c.get('principal'), workflow.workspaceId, 'read', 'Workflow');
    const page = await listExecutions(db, { ...q, workspaceId: workflow.workspaceId, workflowId: id });
    return c.json({ success: true as const, ...page }, 200);
  });
  const rerun = new Router(guards, { rateLimited: false }).openapi(rerunRoute, async (c) => {
    const { id, executionId } = c.req.valid('param');
    const body = c.req.valid('json');
    const principal = c.get('principal');
    const earlier = await getExecution(db, executionId);
    if (!earlier || earlier.workflow_id !== id) throw notFound('Execution');
    // Out of the key's reach reads as not found; in reach without write permission, 403 (as execute).
    await authorizeResource(db, principal, earlier.workspace_id, 'write', 'Execution');
    const isAsync = body.async === true || c.req.header('x-execution-mode')?.toLowerCase() === 'async';
    const started = await executions.start({
      workflowId: id,
      by: { principal },
      inputs: () => earlier.inputs,
      mode: isAsync ? 'async' : 'sync',
      trigger: 'api',
      ...(body.latest === true ? {} : { version: earlier.version }),
    });
    return executions.answer(c, started, isAsync ? 'async' : 'sync');
  });
  return list.app.route('/', rerun.app);
}
