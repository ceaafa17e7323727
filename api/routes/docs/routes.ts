// GET /api/v1/docs (14): a workspace's files as docs, by folder and lifecycle scope: `active` (the
// default: live files), `archived`, or `all`. A folder not in the workspace is not found.
import { createRoute } from '@hono/zod-openapi';
import { authorizeWorkspace } from '../../../db/access.ts';
import { listDocs } from '../../../db/files.ts';
import type { ApiDeps } from '../../context.ts';
import { API_RATE_LIMITED, ok, READ_DENIED } from '../../openapi/components.ts';
import { errors } from '../../openapi/error-answers.ts';
import { fileList } from '../files/schemas.ts';
import { type Guards, Router } from '../router.ts';
import { docListExample, listDocsInvalid } from './examples.ts';
import { listDocsQuery } from './schemas.ts';

export const listDocsRoute = createRoute({
  method: 'get',
  path: '/api/v1/docs',
  operationId: 'listDocs',
  scope: 'files:read' as const,
  tags: ['Docs'],
  summary: 'List docs',
  description:
    "A workspace's files as docs, by folder and lifecycle scope. Folders, moving and archiving are admin operations.",
  request: { query: listDocsQuery },
  responses: {
    200: ok({ description: 'The docs', schema: fileList, example: docListExample }, 'api'),
    ...errors(
      {
        400: listDocsInvalid,
        403: READ_DENIED,
        404: ['Folder not found', 'Workspace not found'],
        429: API_RATE_LIMITED,
      },
      { metering: 'api' },
    ),
  },
});

export function docRoutes({ db }: ApiDeps, guards: Guards) {
  return new Router(guards, { rateLimited: true }).openapi(listDocsRoute, async (c) => {
    const q = c.req.valid('query');
    const access = await authorizeWorkspace(db, c.get('principal'), q.workspaceId, 'read');
    const files = await listDocs(db, access.workspace.id, {
      scope: q.scope,
      ...(q.folderId ? { folderId: q.folderId } : {}),
    });
    return c.json({ success: true as const, data: { files, totalCount: files.length } }, 200);
  }).app;
}
