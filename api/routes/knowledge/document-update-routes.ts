// PATCH /api/v1/knowledge/{id}/documents/{documentId}: a document's enabled flag, file name and tag
// values, all or none. PATCH /api/v1/knowledge/{id}/documents: enable, disable or delete up to 100
// documents by id, the original service's bulk shape ({operation, documentIds}); one id not in the
// knowledge base refuses all. Both name the workspace in the body and need write permission.
import { createRoute } from '@hono/zod-openapi';
import { authorizeResource } from '../../../db/access.ts';
import { bulkUpdateDocuments, updateDocument } from '../../../db/knowledge/document-updates.ts';
import { getDocument } from '../../../db/knowledge/documents.ts';
import { invalidField } from '../../../errors.ts';
import { documentKindOf } from '../../../runner/ingestion/document-types.ts';
import { API_RATE_LIMITED, jsonBody, ok, RESOURCE_WRITE_DENIED } from '../../openapi/components.ts';
import { errors } from '../../openapi/error-answers.ts';
import type { Router } from '../router.ts';
import type { DocumentDeps } from './document-routes.ts';
import { documentParams } from './document-schemas.ts';
import {
  bulkDocumentsBody,
  bulkDocumentsDone,
  bulkDocumentsDoneExample,
  bulkDocumentsRequest,
  documentUpdated,
  documentUpdatedExample,
  updateDocumentBody,
  updateDocumentInvalid,
  updateDocumentRequest,
} from './document-update-schemas.ts';
import { BAD_KB_ID, WRITE_400 } from './examples.ts';
import { knowledgeBaseParams } from './schemas.ts';

const tags = ['Knowledge'];

export const updateDocumentRoute = createRoute({
  method: 'patch',
  path: '/api/v1/knowledge/{id}/documents/{documentId}',
  operationId: 'updateKnowledgeDocument',
  scope: 'knowledge:write' as const,
  tags,
  summary: 'Update a document',
  description:
    'Enables or disables the document (a disabled one is not searched), renames it (keeping its kind: ' +
    'the extension may not turn a PDF into text) and sets tag values by name (null clears one). All ' +
    'or nothing: a bad tag value changes nothing.',
  request: { params: documentParams, body: jsonBody(updateDocumentBody, updateDocumentRequest) },
  responses: {
    200: ok({ description: 'The document', schema: documentUpdated, example: documentUpdatedExample }, 'api'),
    ...errors(
      {
        400: updateDocumentInvalid,
        403: RESOURCE_WRITE_DENIED,
        404: ['Document not found', 'Knowledge base not found'],
        413: 'Request body over 10485760 bytes',
        429: API_RATE_LIMITED,
      },
      { metering: 'api' },
    ),
  },
});

export const bulkDocumentsRoute = createRoute({
  method: 'patch',
  path: '/api/v1/knowledge/{id}/documents',
  operationId: 'bulkUpdateKnowledgeDocuments',
  scope: 'knowledge:write' as const,
  tags,
  summary: 'Enable, disable or delete documents',
  description:
    'Applies `operation` to 1 to 100 documents of the knowledge base in one transaction. An id not in ' +
    'the knowledge base is a 404 naming it, and nothing changes. Deleted documents’ bytes are removed ' +
    'and released from the storage quota as a single delete does.',
  request: { params: knowledgeBaseParams, body: jsonBody(bulkDocumentsBody, bulkDocumentsRequest) },
  responses: {
    200: ok({ description: 'Done', schema: bulkDocumentsDone, example: bulkDocumentsDoneExample }, 'api'),
    ...errors(
      {
        400: [WRITE_400, BAD_KB_ID],
        403: RESOURCE_WRITE_DENIED,
        404: ['Document not found', 'Knowledge base not found'],
        413: 'Request body over 10485760 bytes',
        429: API_RATE_LIMITED,
      },
      { metering: 'api' },
    ),
  },
});

/** Adds the document updates (one, and many by id) to the knowledge router. */
export function withDocumentUpdateRoutes(router: Router, deps: DocumentDeps): Router {
  const { db, storage, log } = deps;
  return router
    .openapi(updateDocumentRoute, async (c) => {
      const { id, documentId } = c.req.valid('param');
      const { workspaceId, ...changes } = c.req.valid('json');
      const access = await authorizeResource(db, c.get('principal'), workspaceId, 'write', 'Knowledge base');
      const scope = { workspaceId: access.workspace.id, knowledgeBaseId: id };
      if (changes.filename !== undefined) {
        // The kind decides how reprocessing parses the bytes: a new name must not change it.
        const doc = await getDocument(db, { id: documentId, ...scope });
        const was = documentKindOf(doc.filename, doc.mimeType);
        const now = documentKindOf(changes.filename, doc.mimeType);
        if (now !== was) {
          throw invalidField(
            'filename',
            `A .${was} document cannot be renamed to ${now ? `.${now}` : 'an unsupported type'}: the name must keep its kind`,
          );
        }
      }
      const updated = await updateDocument(db, access.actor, documentId, scope, changes);
      const message = `Document ${updated.document.filename} updated`;
      return c.json({ success: true as const, data: { ...updated, message } }, 200);
    })
    .openapi(bulkDocumentsRoute, async (c) => {
      const { id } = c.req.valid('param');
      const { workspaceId, operation, documentIds } = c.req.valid('json');
      const access = await authorizeResource(db, c.get('principal'), workspaceId, 'write', 'Knowledge base');
      const scope = { workspaceId: access.workspace.id, knowledgeBaseId: id };
      const { storageKeys, ...done } = await bulkUpdateDocuments(
        db,
        access.actor,
        scope,
        operation,
        documentIds,
      );
      for (const key of storageKeys) {
        await storage.delete(key).catch((err: unknown) => {
          log.error('could not delete the bytes of a deleted document', { key, err });
        });
      }
      return c.json({ success: true as const, data: done }, 200);
    });
}
