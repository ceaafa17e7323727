// Admin: workspaces and their permissions.
import { z } from 'zod';
import { createWorkspaceBody } from '../../api/routes/workspaces.ts';
import { ADMIN_ACTOR } from '../../db/audit-logs.ts';
import {
  createWorkspace,
  grantWorkspacePermission,
  listWorkspaces,
  setWorkspaceArchived,
  updateWorkspace,
  WORKSPACE_PERMISSIONS,
} from '../../db/workspaces.ts';
import { procedure, router } from '../trpc.ts';

const workspaceId = z.object({ workspaceId: z.uuid() });

export const workspacesRouter = router({
  create: procedure
    .input(createWorkspaceBody.omit({ organizationId: true }).extend({ orgId: z.uuid(), ownerId: z.uuid() }))
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
    .input(z.object({ orgId: z.uuid().optional() }).optional())
    .query(({ ctx, input }) => listWorkspaces(ctx.db, input?.orgId ? { organizationId: input.orgId } : {})),
  update: procedure
    .input(
      workspaceId
        .extend({
          name: createWorkspaceBody.shape.name.optional(),
          color: createWorkspaceBody.shape.color,
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
    .input(workspaceId.extend({ userId: z.uuid(), permission: z.enum(WORKSPACE_PERMISSIONS) }))
    .mutation(({ ctx, input }) => grantWorkspacePermission(ctx.db, ADMIN_ACTOR, input)),
  archive: procedure
    .input(workspaceId)
    .mutation(({ ctx, input }) => setWorkspaceArchived(ctx.db, ADMIN_ACTOR, input.workspaceId, true)),
  restore: procedure
    .input(workspaceId)
    .mutation(({ ctx, input }) => setWorkspaceArchived(ctx.db, ADMIN_ACTOR, input.workspaceId, false)),
});
