// /api/v1/docs (14): a workspace's files as docs, by folder and lifecycle scope: `active` (the
// default: live files), `archived`, or `all`. A folder not in the workspace is not found.
import { Hono } from 'hono';
import { z } from 'zod';
import { authorizeWorkspace } from '../../db/access.ts';
import { DOC_SCOPES, listDocs } from '../../db/files.ts';
import type { ApiDeps, ApiEnv } from '../context.ts';
import { queryParams } from '../middleware/validate.ts';

export const listDocsQuery = z.object({
  workspaceId: z.uuid(),
  folderId: z.uuid().optional(),
  scope: z.enum(DOC_SCOPES).default('active'),
});

export function docRoutes({ db }: ApiDeps) {
  return new Hono<ApiEnv>().get('/', async (c) => {
    const q = queryParams(c, listDocsQuery);
    const access = await authorizeWorkspace(db, c.get('principal'), q.workspaceId, 'read');
    const files = await listDocs(db, access.workspace.id, {
      scope: q.scope,
      ...(q.folderId ? { folderId: q.folderId } : {}),
    });
    return c.json({ success: true, data: { files, totalCount: files.length } });
  });
}
