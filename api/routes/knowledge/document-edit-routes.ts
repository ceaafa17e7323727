// /api/v1/knowledge/{id}/documents/{documentId}: delete a document (its chunks with it, its stored
// bytes removed once that has committed, released from the storage quota at once since the quota
// counts the rows) and process one again. Both name the workspace in the body and need write
// permission; a document of another knowledge base or workspace is not found.
import { createRoute } from '@hono/zod-openapi';
import { authorizeResource } from '../../../db/access.ts';
import { deleteDocument, reprocessDocument } from '../../../db/knowledge/documents.ts';
import { sendIngestJobs } from '../../../jobs/ingest-jobs.ts';
import { API_RATE_LIMITED, jsonBody, ok, RESOURCE_WRITE_DENIED } from '../../openapi/components.ts';
import { errors } from '../../openapi/error-answers.ts';
import type { Router } from '../router.ts';
import type { DocumentDeps } from './document-routes.ts';
import {
  documentDeleted,
  documentParams,
  documentReprocessed,
  documentWriteBody,
} from './document-schemas.ts';
import {
  BAD_KB_ID,
  documentDeletedExample,
  documentReprocessedExample,
  documentWriteRequest,
  WRITE_400,
} from './examples.ts';

const tags = ['Knowledge'];

const writeErrors = errors(
  {
    400: [WRITE_400, BAD_KB_ID],
    403: RESOURCE_WRITE_DENIED,
    404: ['Document not found', 'Knowledge base not found'],
    413: 'Request body over 10485760 bytes',
    429: API_RATE_LIMITED,
  },
  { metering: 'api' },
);

export const deleteDocumentRoute = createRoute({
  method: 'delete',
  path: '/api/v1/knowledge/{id}/documents/{documentId}',
  operationId: 'deleteKnowledgeDocument',
  scope: 'knowledge:write' as const,
  tags,
  summary: 'Delete a document',
  description:
    'Deletes the document with its chunks: searches no longer find it. Its stored bytes are removed and ' +
    'no longer count against the storage quota.',
  request: { params: documentParams, body: jsonBody(documentWriteBody, documentWriteRequest) },
  responses: {
    200: ok({ description: 'Deleted', schema: documentDeleted, example: documentDeletedExample }, 'api'),
    ...writeErrors,
  },
});

export const reprocessDocumentRoute = createRoute({
  method: 'post',
  path: '/api/v1/knowledge/{id}/documents/{documentId}/reprocess',
  operationId: 'reprocessKnowledgeDocument',
  scope: 'knowledge:write' as const,
  tags,
  summary: 'Process a document again',
  description:
    'Parses, chunks and embeds the stored document again with the base’s current chunking config; the ' +
    'answer is the document `pending`. Its current chunks answer searches until the new ones are in.',
  request: { params: documentParams, body: jsonBody(documentWriteBody, documentWriteRequest) },
  responses: {
    200: ok(
      {
        description: 'The document, pending',
        schema: documentReprocessed,
        example: documentReprocessedExample,
      },
      'api',
    ),
    ...writeErrors,
  },
});

/** Adds delete and reprocess of a document to the knowledge router. */
export function withDocumentEditRoutes(router: Router, deps: DocumentDeps): Router {
  const { db, queue, storage, log } = deps;
  return router
    .openapi(deleteDocumentRoute, async (c) => {
      const { id, documentId } = c.req.valid('param');
      const { workspaceId } = c.req.valid('json');
      const access = await authorizeResource(db, c.get('principal'), workspaceId, 'write', 'Knowledge base');
      const scope = { workspaceId: access.workspace.id, knowledgeBaseId: id };
      const { storageKey } = await deleteDocument(db, access.actor, documentId, scope);
      // The row is gone (and its bytes from the quota); bytes a failing store keeps are only logged.
      await storage.delete(storageKey).catch((err: unknown) => {
        log.error('could not delete the bytes of a deleted document', { key: storageKey, err });
      });
      return c.json({ success: true as const, data: { documentId, message: 'Document deleted' } }, 200);
    })
    .openapi(reprocessDocumentRoute, async (c) => {
      const { id, documentId } = c.req.valid('param');
      const { workspaceId } = c.req.valid('json');
      const access = await authorizeResource(db, c.get('principal'), workspaceId, 'write', 'Knowledge base');
      const scope = { workspaceId: access.workspace.id, knowledgeBaseId: id };
      const document = await db.transaction(async (tx) => {
        const { document, job } = await reprocessDocument(tx, access.actor, documentId, scope);
        await sendIngestJobs(queue, tx, [job]);
        return document;
      });
      const message = `Document ${document.filename} is being processed again`;
      return c.json({ success: true as const, data: { document, message } }, 200);
    });
}
