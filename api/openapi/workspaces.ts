// OpenAPI: POST /api/v1/workspaces (17), a personal key creates a workspace in its holder's
// organization.
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import type { Workspace } from '../../db/workspaces.ts';
import { createWorkspaceBody } from '../routes/workspaces.ts';
import {
  API_RATE_LIMITED,
  annotateFields,
  EX,
  envelope,
  errors,
  invalid,
  jsonBody,
  ok,
} from './components.ts';

const workspaceSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    slug: z.string().meta({ description: 'Unique in the organization' }),
    color: z.string().meta({ description: '#RRGGBB' }),
    ownerId: z.uuid(),
    organizationId: z.uuid(),
    billedAccountUserId: z.uuid(),
    allowPersonalApiKeys: z.boolean().meta({ description: 'When false, only workspace keys work there' }),
    role: z.enum(['admin', 'write', 'read']).nullable().meta({ description: "The caller's permission" }),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
    archivedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'Workspace' }) satisfies z.ZodType<Workspace>;

annotateFields(createWorkspaceBody, {
  name: { description: '1 to 100 characters' },
  color: { description: 'A colour in #RRGGBB form' },
  skipDefaultWorkflow: { description: 'Unless true, the workspace starts with a default agent workflow' },
  organizationId: {
    description: 'For a user in several organizations; defaults to the one they joined first',
  },
});

export function registerWorkspaces(registry: OpenAPIRegistry) {
  registry.registerPath({
    method: 'post',
    path: '/api/v1/workspaces',
    operationId: 'createWorkspace',
    tags: ['Workspaces'],
    summary: 'Create a workspace',
    description:
      "Personal keys only. The workspace is created in the key holder's organization with a unique slug " +
      'there; the caller becomes its admin.',
    request: {
      body: jsonBody(createWorkspaceBody, {
        name: 'Marketing',
        color: '#3972F6',
        skipDefaultWorkflow: false,
      }),
    },
    responses: {
      200: ok(
        {
          description: 'The new workspace',
          schema: envelope({ workspace: workspaceSchema }).meta({ id: 'WorkspaceCreated' }),
          example: {
            success: true,
            data: {
              workspace: {
                id: EX.workspaceId,
                name: 'Marketing',
                slug: 'marketing',
                color: '#3972F6',
                ownerId: EX.userId,
                organizationId: EX.organizationId,
                billedAccountUserId: EX.userId,
                allowPersonalApiKeys: true,
                role: 'admin',
                createdAt: EX.time,
                updatedAt: EX.time,
                archivedAt: null,
              },
            },
          },
        },
        'api',
      ),
      ...errors(
        {
          400: [
            {
              error: 'Invalid request body',
              details: [
                {
                  code: 'too_small',
                  path: ['name'],
                  message: 'Too small: expected string to have >=1 characters',
                },
                { code: 'invalid_format', path: ['color'], message: 'Must be a colour in #RRGGBB form' },
              ],
            },
            invalid(['organizationId'], 'Invalid UUID', 'invalid_format', 'Invalid request body'),
          ],
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
}
