// The request and answer of POST /api/v1/workspaces.
import { z } from 'zod';
import { newWorkspaceFields, type Workspace } from '../../../db/workspaces.ts';
import { envelope, withFieldDocs } from '../../openapi/components.ts';

/** The fields of a new workspace (the store's, shared with the admin plane), documented. */
export const createWorkspaceBody = withFieldDocs(newWorkspaceFields, {
  name: { description: '1 to 100 characters' },
  color: { description: 'A colour in #RRGGBB form' },
  skipDefaultWorkflow: { description: 'Unless true, the workspace starts with a default agent workflow' },
  organizationId: {
    description: 'For a user in several organizations; defaults to the one they joined first',
  },
});

export const workspaceSchema = z
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

export const workspaceCreated = envelope({ workspace: workspaceSchema }).meta({ id: 'WorkspaceCreated' });
