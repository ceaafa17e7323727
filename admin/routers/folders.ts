// Admin: folders, which group a workspace's files as docs, or its workflows (kind workflow).
import { z } from 'zod';
import { ADMIN_ACTOR } from '../../db/audit-logs.ts';
import { createFolder, deleteFolder, FOLDER_KINDS, folderNameSchema, listFolders } from '../../db/folders.ts';
import { procedure, router } from '../trpc.ts';

const kind = z.enum(FOLDER_KINDS);

export const foldersRouter = router({
  create: procedure
    .meta({
      description:
        'Create a folder in a workspace (optionally inside another of the same kind): for files (the default) or workflows',
    })
    .input(
      z.object({
        workspaceId: z.uuid(),
        name: folderNameSchema,
        parentId: z.uuid().nullish(),
        kind: kind.optional(),
      }),
    )
    .mutation(({ ctx, input }) =>
      createFolder(ctx.db, ADMIN_ACTOR, {
        workspaceId: input.workspaceId,
        name: input.name,
        parentId: input.parentId ?? null,
        kind: input.kind ?? 'file',
      }),
    ),
  list: procedure
    .meta({ description: "List a workspace's folders (of one kind, or all)" })
    .input(z.object({ workspaceId: z.uuid(), kind: kind.optional() }))
    .query(({ ctx, input }) => listFolders(ctx.db, input.workspaceId, input.kind)),
  delete: procedure
    .meta({
      description:
        'Delete a folder and its subfolders: their files and workflows move to the top of the workspace (workflows stay deployed)',
    })
    .input(z.object({ id: z.uuid() }))
    .mutation(({ ctx, input }) => deleteFolder(ctx.db, ADMIN_ACTOR, input.id)),
});
