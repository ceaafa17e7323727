// POST /api/v1/workspaces: a personal key creates a workspace in its holder's organization.
import { createRoute } from '@hono/zod-openapi';
import { actorOf } from '../../../db/access.ts';
import { homeOrganization } from '../../../db/members.ts';
import { createWorkspace } from '../../../db/workspaces.ts';
import { forbidden } from '../../../errors.ts';
import type { ApiDeps } from '../../context.ts';
import { API_RATE_LIMITED, jsonBody, ok } from '../../openapi/components.ts';
import { errors } from '../../openapi/error-answers.ts';
import { type Guards, Router } from '../router.ts';
import { createWorkspaceInvalid, createWorkspaceRequest, workspaceCreatedExample } from './examples.ts';
import { createWorkspaceBody, workspaceCreated } from './schemas.ts';

export const createWorkspaceRoute = createRoute({
  method: 'post',
  path: '/api/v1/workspaces',
  operationId: 'createWorkspace',
  scope: 'workspaces:write' as const,
  tags: ['Workspaces'],
  summary: 'Create a workspace',
  description:
    "Personal keys only. The workspace is created in the key holder's organization with a unique slug " +
    'there; the caller becomes its admin.',
  request: { body: jsonBody(createWorkspaceBody, createWorkspaceRequest) },
  responses: {
    200: ok(
      { description: 'The new workspace', schema: workspaceCreated, example: workspaceCreatedExample },
      'api',
    ),
    ...errors(
      {
        400: createWorkspaceInvalid,
        403: [
          'Creating a workspace needs a personal API key',
          'You are not a member of that organization',
          'Your user belongs to no organization',
        ],
        413: 'Request body over 10485760 bytes',
        429: API_RATE_LIMITED,
      },
      { metering: 'api' },
    ),
  },
});

export function workspaceRoutes({ db }: ApiDeps, guards: Guards) {
  return new Router(guards, { rateLimited: true }).openapi(createWorkspaceRoute, async (c) => {
    const principal = c.get('principal');
    if (principal.type !== 'personal') throw forbidden('Creating a workspace needs a personal API key');
    const body = c.req.valid('json');
    const organizationId = await homeOrganization(db, principal.userId, body.organizationId);
    const workspace = await createWorkspace(db, actorOf(principal), {
      organizationId,
      ownerId: principal.userId,
      name: body.name,
      ...(body.color ? { color: body.color.toUpperCase() } : {}),
      skipDefaultWorkflow: body.skipDefaultWorkflow === true,
    });
    return c.json({ success: true as const, data: { workspace } }, 200);
  }).app;
}
