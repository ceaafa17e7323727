// Admin: workspaces and their permissions.
import { z } from 'zod';
import { ADMIN_ACTOR } from '../../db/audit-logs.ts';
import {
  createWorkspace,
  grantWorkspacePermission,
  listWorkspaces,
  newWorkspaceFields,
  setWorkspaceArchived,
  updateWorkspace,
  WORKSPACE_PERMISSIONS,
} from '../../db/workspaces.ts';
import { procedure, router } from '../trpc.ts';

const workspaceId = z.object({ workspaceId: z.uuid() });

export const workspacesRouter = router({
  create: procedure
    .meta({ description: 'Create a workspace in an organization, owned by a user' })
    .input(newWorkspaceFields.omit({ organizationId: true }).extend({ orgId: z.uuid(), ownerId: z.uuid() }))
    .mutation(({ ctx, input }) =>
      createWorkspace(ctx.db, ADMIN_ACTOR, {
        organizationId: input.orgId,
        ownerId: input.ownerId,
        name: input.name,
        ...(input.color ? { color: input.color.toUpperCase() } : {}),
        skipDefaultWorkflow: input.skipDefaultWorkflow === true,
      }),
    ),
  list: procedure
    .meta({ description: "List workspaces, oldest first (every one, or an organization's)" })
    .input(z.object({ orgId: z.uuid().optional() }).optional())
    .query(({ ctx, input }) => listWorkspaces(ctx.db, input?.orgId ? { organizationId: input.orgId } : {})),
  update: procedure
    .meta({ description: 'Rename a workspace, change its color, or allow or refuse personal API keys in it' })
    .input(
      workspaceId
        .extend({
          name: newWorkspaceFields.shape.name.optional(),
          color: newWorkspaceFields.shape.color,
          allowPersonalApiKeys: z.boolean().optional(),
        })
        .refine(
          (i) => i.name !== undefined || i.color !== undefined || i.allowPersonalApiKeys !== undefined,
          {
            message: 'Give at least one of name, color, allowPersonalApiKeys',
          },
        ),
    )
    .mutation(({ ctx, input }) => {
      const { workspaceId: id, ...changes } = input;
      return updateWorkspace(ctx.db, ADMIN_ACTOR, id, {
        ...changes,
        ...(changes.color ? { color: changes.color.toUpperCase() } : {}),
      });
    }),
  grant: procedure
    .meta({ description: 'Give a user read, write or admin permission in a workspace' })
    .input(workspaceId.extend({ userId: z.uuid(), permission: z.enum(WORKSPACE_PERMISSIONS) }))
    .mutation(({ ctx, input }) => grantWorkspacePermission(ctx.db, ADMIN_ACTOR, input)),
  archive: procedure
    .meta({
      description:
        'Archive a workspace: it can be read but nothing in it changes or runs until it is restored',
    })

    .input(workspaceId)
    .mutation(({ ctx, input }) => setWorkspaceArchived(ctx.db, ADMIN_ACTOR, input.workspaceId, true)),
  restore: procedure
    .meta({ description: 'Restore an archived workspace' })
    .input(workspaceId)
    .mutation(({ ctx, input }) => setWorkspaceArchived(ctx.db, ADMIN_ACTOR, input.workspaceId, false)),
});
