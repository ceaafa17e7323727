// Admin: a file's place and lifecycle: move it between folders, archive it (it leaves the file
// list and the active docs, keeping its name and its bytes) and restore it.
import { z } from 'zod';
import { ADMIN_ACTOR } from '../../db/audit-logs.ts';
import { moveFile, setFileArchived } from '../../db/files.ts';
import { procedure, router } from '../trpc.ts';

const fileId = z.object({ fileId: z.uuid() });

export const filesRouter = router({
  move: procedure
    .meta({ description: 'Move a file into a folder (null: to the top)' })
    .input(fileId.extend({ folderId: z.uuid().nullable() }))
    .mutation(({ ctx, input }) => moveFile(ctx.db, ADMIN_ACTOR, input.fileId, input.folderId)),
  archive: procedure
    .meta({
      description: 'Archive a file: it leaves the file list and the active docs, keeping its name and bytes',
    })

    .input(fileId)
    .mutation(({ ctx, input }) => setFileArchived(ctx.db, ADMIN_ACTOR, input.fileId, true)),
  restore: procedure
    .meta({ description: 'Restore an archived file' })
    .input(fileId)
    .mutation(({ ctx, input }) => setFileArchived(ctx.db, ADMIN_ACTOR, input.fileId, false)),
});
