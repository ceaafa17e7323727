// GET /api/v1/logs (19) and GET /api/v1/logs/{id} (18): a workspace's execution log, one entry per
// finished execution, filtered and cursor-paged; and one entry in full, by its id or (as the original
// service offers) by its execution's id.
import { createRoute } from '@hono/zod-openapi';
import { authorizeLoadedResource, authorizeWorkspace } from '../../../db/access.ts';
import type { Principal } from '../../../db/api-keys.ts';
import {
  getExecutionLog,
  getExecutionLogByExecution,
  type LoadedLogEntry,
  listExecutionLogs,
} from '../../../db/execution-logs.ts';
import { notFound } from '../../../errors.ts';
import type { ApiDeps } from '../../context.ts';
import { API_RATE_LIMITED, ok, READ_DENIED } from '../../openapi/components.ts';
import { errors } from '../../openapi/error-answers.ts';
import { type Guards, Router } from '../router.ts';
import {
  getExecutionLogInvalid,
  getLogInvalid,
  listLogsInvalid,
  logDetailExample,
  logPageExamples,
} from './examples.ts';
import { executionLogParams, logDetail, logListQuery, logPage, logParams } from './schemas.ts';

export const listLogsRoute = createRoute({
  method: 'get',
  path: '/api/v1/logs',
  operationId: 'listLogs',
  scope: 'logs:read' as const,
  tags: ['Logs'],
  summary: 'List logs',
  description:
    "A workspace's execution log: one entry per finished execution, newest first, filtered and " +
    'cursor-paged (`nextCursor` is absent on the last page). Read access to the workspace is enough.',
  request: { query: logListQuery },
  responses: {
    200: ok(
      {
        description: 'A page of entries (with the detail fields when details=full)',
        schema: logPage,
        examples: logPageExamples,
      },
      'api',
    ),
    ...errors(
      { 400: listLogsInvalid, 403: READ_DENIED, 404: 'Workspace not found', 429: API_RATE_LIMITED },
      { metering: 'api' },
    ),
  },
});

export const getLogRoute = createRoute({
  method: 'get',
  path: '/api/v1/logs/{id}',
  operationId: 'getLog',
  scope: 'logs:read' as const,
  tags: ['Logs'],
  summary: 'Get log details',
  description: 'One entry with its workflow, execution data (trace spans, output or error, inputs) and cost.',
  request: { params: logParams },
  responses: {
    200: ok({ description: 'The entry', schema: logDetail, example: logDetailExample }, 'api'),
    ...errors(
      {
        400: getLogInvalid,
        403: 'Personal API keys are disabled in this workspace; use a workspace key',
        404: 'Log entry not found',
        429: API_RATE_LIMITED,
      },
      { metering: 'api' },
    ),
  },
});

export const getExecutionLogRoute = createRoute({
  method: 'get',
  path: '/api/v1/logs/executions/{executionId}',
  operationId: 'getExecutionLog',
  scope: 'logs:read' as const,
  tags: ['Logs'],
  summary: 'Get the log of an execution',
  description:
    'The log entry of one execution, found by the execution id (the `taskId` of an async start, the ' +
    '`executionId` of a sync answer), answered as `GET /api/v1/logs/{id}` answers. An execution still ' +
    'queued or running has no entry yet (404): `GET /api/v1/workflows/{id}/runs` lists it.',
  request: { params: executionLogParams },
  responses: {
    200: ok({ description: 'The entry', schema: logDetail, example: logDetailExample }, 'api'),
    ...errors(
      {
        400: getExecutionLogInvalid,
        403: 'Personal API keys are disabled in this workspace; use a workspace key',
        404: 'Log entry not found',
        429: API_RATE_LIMITED,
      },
      { metering: 'api' },
    ),
  },
});

/** The entry, if the caller may read it; out of its reach reads as not found (ids stay unconfirmed). */
function readable(principal: Principal, found: LoadedLogEntry | null) {
  if (!found) throw notFound('Log entry');
  authorizeLoadedResource(principal, found.workspace, found.permission, 'read', 'Log entry');
  return { data: found.entry };
}

const userOf = (p: Principal) => (p.type === 'personal' ? p.userId : null);

export function logRoutes({ db }: ApiDeps, guards: Guards) {
  return new Router(guards, { rateLimited: true })
    .openapi(listLogsRoute, async (c) => {
      const q = c.req.valid('query');
      await authorizeWorkspace(db, c.get('principal'), q.workspaceId, 'read');
      return c.json(await listExecutionLogs(db, q), 200);
    })
    .openapi(getLogRoute, async (c) => {
      const principal = c.get('principal');
      const { id } = c.req.valid('param');
      return c.json(readable(principal, await getExecutionLog(db, id, userOf(principal))), 200);
    })
    .openapi(getExecutionLogRoute, async (c) => {
      const principal = c.get('principal');
      const { executionId } = c.req.valid('param');
      const found = await getExecutionLogByExecution(db, executionId, userOf(principal));
      return c.json(readable(principal, found), 200);
    }).app;
}
