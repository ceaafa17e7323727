// Admin: folders, which group a workspace's files as docs.
import { z } from 'zod';
import { ADMIN_ACTOR } from '../../db/audit-logs.ts';
import { createFolder, folderNameSchema } from '../../db/folders.ts';
import { procedure, router } from '../trpc.ts';

export const foldersRouter = router({
  create: procedure
    .meta({ description: 'Create a folder for files in a workspace (optionally inside another)' })
    .input(z.object({ workspaceId: z.uuid(), name: folderNameSchema, parentId: z.uuid().nullish() }))
    .mutation(({ ctx, input }) =>
      createFolder(ctx.db, ADMIN_ACTOR, {
        workspaceId: input.workspaceId,
        name: input.name,
        parentId: input.parentId ?? null,
      }),
    ),
});
