// GET /api/jobs/{jobId}: the state of an execution, as the spec's Job record. `output` is present
// only when completed; a failed job carries its error.
import { createRoute } from '@hono/zod-openapi';
import { z } from 'zod';
import { authorizeResource } from '../../../db/access.ts';
import { getExecution, jobAnswer } from '../../../db/executions.ts';
import { notFound } from '../../../errors.ts';
import { approvalLinks } from '../../../jobs/approval-links.ts';
import type { ApiDeps } from '../../context.ts';
import { ok } from '../../openapi/components.ts';
import { errors } from '../../openapi/error-answers.ts';
import { type Guards, Router } from '../router.ts';
import { jobExamples } from './examples.ts';
import { jobParams, jobSchema } from './schemas.ts';

export const getJobRoute = createRoute({
  method: 'get',
  path: '/api/jobs/{jobId}',
  operationId: 'getJob',
  scope: 'workflows:execute' as const,
  tags: ['Workflows'],
  summary: 'Get job status',
  description:
    'The state of an execution started with `async: true` (its `taskId`), or of any execution by id. ' +
    'Poll until `status` is `completed` (with `output`), `failed` (with `error`) or `cancelled` (with ' +
    '`error` and `metadata.cancelledAt`, `metadata.cancelledBy`). A `paused` job waits for an approval: ' +
    '`metadata.pause` says what it asks and where to answer (`resumeUrl` with a key, `approvalUrl` without). Polls do not draw ' +
    'from a rate-limit bucket; their X-RateLimit-* headers show the /api/v1 bucket.',
  request: { params: jobParams },
  responses: {
    200: ok({ description: 'The job', schema: jobSchema, examples: jobExamples }, 'shown'),
    ...errors(
      {
        403: 'Personal API keys are disabled in this workspace; use a workspace key',
        404: 'Job not found',
      },
      { metering: 'shown', meanings: { 404: 'No such job, or not in the reach of this key' } },
    ),
  },
});

const uuid = z.uuid();

export function jobRoutes({ db, config }: ApiDeps, guards: Guards) {
  const links = approvalLinks(config);
  return new Router(guards, { rateLimited: true }).openapi(getJobRoute, async (c) => {
    const { jobId } = c.req.valid('param');
    const row = uuid.safeParse(jobId).success ? await getExecution(db, jobId) : null;
    if (!row) throw notFound('Job');
    await authorizeResource(db, c.get('principal'), row.workspace_id, 'read', 'Job');
    return c.json(jobAnswer(row, links.url), 200);
  }).app;
}
