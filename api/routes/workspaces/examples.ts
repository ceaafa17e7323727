// Examples of POST /api/v1/workspaces: the request, the answer, and the 400s it gives.
import { EX } from '../../openapi/components.ts';
import { invalid } from '../../openapi/error-answers.ts';

export const createWorkspaceRequest = { name: 'Marketing', color: '#3972F6', skipDefaultWorkflow: false };

export const workspaceCreatedExample = {
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
};

export const createWorkspaceInvalid = [
  {
    error: 'Invalid request body',
    details: [
      { code: 'too_small', path: ['name'], message: 'Too small: expected string to have >=1 characters' },
      { code: 'invalid_format', path: ['color'], message: 'Must be a colour in #RRGGBB form' },
    ],
  },
  invalid(['organizationId'], 'Invalid UUID', 'invalid_format', 'Invalid request body'),
];
