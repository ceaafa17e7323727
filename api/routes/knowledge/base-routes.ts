// /api/v1/knowledge: create a knowledge base, read one, delete one (with its documents, chunks and
// stored bytes: the bytes leave the storage quota, which counts the rows, as the delete commits).
// Creating names the workspace in the body and needs write permission on it; reading names it in the
// query (read permission); deleting names it in the body (write permission). A base outside the
// named workspace is not found.
import { createRoute } from '@hono/zod-openapi';
import { authorizeResource, authorizeWorkspace } from '../../../db/access.ts';
import { createKnowledgeBase, deleteKnowledgeBase, getKnowledgeBase } from '../../../db/knowledge/bases.ts';
import { invalidField } from '../../../errors.ts';
import type { Embedders } from '../../../runner/embeddings/embedder.ts';
import {
  API_RATE_LIMITED,
  jsonBody,
  ok,
  READ_DENIED,
  RESOURCE_WRITE_DENIED,
  WRITE_DENIED,
} from '../../openapi/components.ts';
import { errors } from '../../openapi/error-answers.ts';
import type { Router } from '../router.ts';
import type { DocumentDeps } from './document-routes.ts';
import {
  BAD_KB_ID,
  createKnowledgeInvalid,
  createKnowledgeRequest,
  deleteKnowledgeRequest,
  knowledgeBaseCreatedExample,
  knowledgeBaseDeletedExample,
  knowledgeBaseFoundExample,
  READ_400,
  WRITE_400,
} from './examples.ts';
import {
  createKnowledgeBody,
  knowledgeBaseCreated,
  knowledgeBaseDeleted,
  knowledgeBaseFound,
  knowledgeBaseParams,
  listKnowledgeQuery,
  workspaceOnlyBody,
} from './schemas.ts';

const tags = ['Knowledge'];

export const createKnowledgeBaseRoute = createRoute({
  method: 'post',
  path: '/api/v1/knowledge',
  operationId: 'createKnowledgeBase',
  scope: 'knowledge:write' as const,
  tags,
  summary: 'Create a knowledge base',
  description:
    'An empty knowledge base with its chunking config and embedding model; the model is chosen for good.',
  request: { body: jsonBody(createKnowledgeBody, createKnowledgeRequest) },
  responses: {
    200: ok(
      {
        description: 'The new knowledge base',
        schema: knowledgeBaseCreated,
        example: knowledgeBaseCreatedExample,
      },
      'api',
    ),
    ...errors(
      {
        400: createKnowledgeInvalid,
        403: WRITE_DENIED,
        404: 'Workspace not found',
        413: 'Request body over 10485760 bytes',
        429: API_RATE_LIMITED,
      },
      { metering: 'api' },
    ),
  },
});

export const getKnowledgeBaseRoute = createRoute({
  method: 'get',
  path: '/api/v1/knowledge/{id}',
  operationId: 'getKnowledgeBase',
  scope: 'knowledge:read' as const,
  tags,
  summary: 'Get a knowledge base',
  description: 'One knowledge base with its document and token counts, as the list shows it.',
  request: { params: knowledgeBaseParams, query: listKnowledgeQuery },
  responses: {
    200: ok(
      { description: 'The knowledge base', schema: knowledgeBaseFound, example: knowledgeBaseFoundExample },
      'api',
    ),
    ...errors(
      {
        400: [READ_400, BAD_KB_ID],
        403: READ_DENIED,
        404: 'Knowledge base not found',
        429: API_RATE_LIMITED,
      },
      { metering: 'api' },
    ),
  },
});

export const deleteKnowledgeBaseRoute = createRoute({
  method: 'delete',
  path: '/api/v1/knowledge/{id}',
  operationId: 'deleteKnowledgeBase',
  scope: 'knowledge:write' as const,
  tags,
  summary: 'Delete a knowledge base',
  description:
    'Deletes the knowledge base with its documents, chunks and tag definitions; their stored bytes are ' +
    'removed and no longer count against the storage quota. Processing still under way for its documents ' +
    'finds them gone and stops.',
  request: { params: knowledgeBaseParams, body: jsonBody(workspaceOnlyBody, deleteKnowledgeRequest) },
  responses: {
    200: ok(
      { description: 'Deleted', schema: knowledgeBaseDeleted, example: knowledgeBaseDeletedExample },
      'api',
    ),
    ...errors(
      {
        400: [WRITE_400, BAD_KB_ID],
        403: RESOURCE_WRITE_DENIED,
        404: 'Knowledge base not found',
        413: 'Request body over 10485760 bytes',
        429: API_RATE_LIMITED,
      },
      { metering: 'api' },
    ),
  },
});

/** Adds create, get and delete of a knowledge base to the knowledge router. */
export function withBaseRoutes(router: Router, deps: DocumentDeps & { embedders: Embedders }): Router {
  const { db, embedders, storage, log } = deps;
  return router
    .openapi(createKnowledgeBaseRoute, async (c) => {
      const { workspaceId, embeddingModel: asked, ...rest } = c.req.valid('json');
      const embeddingModel = asked ?? embedders.defaultModel;
      // The workspace is judged first, so a caller without access learns nothing of this service's models.
      const access = await authorizeWorkspace(db, c.get('principal'), workspaceId, 'write');
      if (!embedders.models.includes(embeddingModel)) {
        throw invalidField(
          'embeddingModel',
          `This service embeds with ${embedders.models.join(' or ')}; ${embeddingModel} is not configured`,
        );
      }
      const knowledgeBase = await createKnowledgeBase(db, access.actor, {
        workspaceId: access.workspace.id,
        name: rest.name,
        ...(rest.description !== undefined ? { description: rest.description } : {}),
        ...(rest.chunkingConfig !== undefined ? { chunkingConfig: rest.chunkingConfig } : {}),
        embeddingModel,
      });
      const message = `Knowledge base ${knowledgeBase.name} created`;
      return c.json({ success: true as const, data: { knowledgeBase, message } }, 200);
    })
    .openapi(getKnowledgeBaseRoute, async (c) => {
      const { id } = c.req.valid('param');
      const { workspaceId } = c.req.valid('query');
      const access = await authorizeResource(db, c.get('principal'), workspaceId, 'read', 'Knowledge base');
      const knowledgeBase = await getKnowledgeBase(db, { id, workspaceId: access.workspace.id });
      return c.json({ success: true as const, data: { knowledgeBase } }, 200);
    })
    .openapi(deleteKnowledgeBaseRoute, async (c) => {
      const { id } = c.req.valid('param');
      const { workspaceId } = c.req.valid('json');
      const access = await authorizeResource(db, c.get('principal'), workspaceId, 'write', 'Knowledge base');
      const { storageKeys } = await deleteKnowledgeBase(db, access.actor, id, access.workspace.id);
      // The rows are gone (and the quota with them); bytes left behind by a failing store are only logged.
      for (const key of storageKeys) {
        await storage.delete(key).catch((err: unknown) => {
          log.error('could not delete the bytes of a deleted document', { key, err });
        });
      }
      const message = `Knowledge base deleted with ${storageKeys.length} document(s)`;
      return c.json(
        { success: true as const, data: { id, deletedDocuments: storageKeys.length, message } },
        200,
      );
    });
}
