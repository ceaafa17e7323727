// /api/v1/knowledge/{id}/documents/{documentId}/chunks[/{chunkId}]: the chunks of a document's live
// generation, paged, and added, changed or deleted one at a time. New or changed content is
// embedded here, with the knowledge base's model, as a search embeds its query (one chunk of at
// most 10,000 characters); the chunk and the document's figures change in one transaction. Only a
// completed document's chunks are edited (409 while processing), and reprocessing a document
// rebuilds its chunks from its file: edits are not kept.
import { createRoute } from '@hono/zod-openapi';
import { authorizeResource } from '../../../db/access.ts';
import { getKnowledgeBase } from '../../../db/knowledge/bases.ts';
import {
  addChunk,
  type ChunkContent,
  deleteChunk,
  listChunks,
  updateChunk,
} from '../../../db/knowledge/chunks.ts';
import type { Embedders } from '../../../runner/embeddings/embedder.ts';
import {
  API_RATE_LIMITED,
  jsonBody,
  ok,
  READ_DENIED,
  RESOURCE_WRITE_DENIED,
} from '../../openapi/components.ts';
import { errors } from '../../openapi/error-answers.ts';
import type { Router } from '../router.ts';
import {
  addChunkBody,
  addChunkRequest,
  chunkAnswer,
  chunkAnswerExample,
  chunkDeleted,
  chunkDeletedExample,
  chunkPage,
  chunkPageExample,
  chunkParams,
  chunkWriteBody,
  chunkWriteInvalid,
  chunkWriteRequest,
  listChunksInvalid,
  listChunksQuery,
  updateChunkBody,
  updateChunkRequest,
} from './chunk-schemas.ts';
import type { DocumentDeps } from './document-routes.ts';
import { documentParams } from './document-schemas.ts';

const tags = ['Knowledge'];
const NOT_FOUND = ['Chunk not found', 'Document not found', 'Knowledge base not found'];
const writeErrors = errors(
  {
    400: chunkWriteInvalid,
    403: RESOURCE_WRITE_DENIED,
    404: NOT_FOUND,
    409: 'Document handbook.pdf is processing: its chunks can be edited once it is completed',
    413: 'Request body over 10485760 bytes',
    429: API_RATE_LIMITED,
  },
  { metering: 'api' },
);

export const listChunksRoute = createRoute({
  method: 'get',
  path: '/api/v1/knowledge/{id}/documents/{documentId}/chunks',
  operationId: 'listKnowledgeChunks',
  scope: 'knowledge:read' as const,
  tags,
  summary: 'List the chunks of a document',
  description: 'The chunks searches read, in document order (chunkIndex), with their token counts and flags.',
  request: { params: documentParams, query: listChunksQuery },
  responses: {
    200: ok({ description: 'A page of chunks', schema: chunkPage, example: chunkPageExample }, 'api'),
    ...errors(
      { 400: listChunksInvalid, 403: READ_DENIED, 404: NOT_FOUND.slice(1), 429: API_RATE_LIMITED },
      { metering: 'api' },
    ),
  },
});

export const addChunkRoute = createRoute({
  method: 'post',
  path: '/api/v1/knowledge/{id}/documents/{documentId}/chunks',
  operationId: 'addKnowledgeChunk',
  scope: 'knowledge:write' as const,
  tags,
  summary: 'Add a chunk to a document',
  description:
    'Embeds the content and adds it after the document’s last chunk; the document’s chunkCount and ' +
    'tokenCount grow with it. Reprocessing the document later drops it.',
  request: { params: documentParams, body: jsonBody(addChunkBody, addChunkRequest) },
  responses: {
    200: ok({ description: 'The chunk', schema: chunkAnswer, example: chunkAnswerExample }, 'api'),
    ...writeErrors,
  },
});

export const updateChunkRoute = createRoute({
  method: 'patch',
  path: '/api/v1/knowledge/{id}/documents/{documentId}/chunks/{chunkId}',
  operationId: 'updateKnowledgeChunk',
  scope: 'knowledge:write' as const,
  tags,
  summary: 'Change a chunk',
  description:
    'New content is embedded again (and its token count taken); a disabled chunk is not searched. ' +
    'Reprocessing the document later rebuilds its chunks from the file, without this change.',
  request: { params: chunkParams, body: jsonBody(updateChunkBody, updateChunkRequest) },
  responses: {
    200: ok({ description: 'The chunk', schema: chunkAnswer, example: chunkAnswerExample }, 'api'),
    ...writeErrors,
  },
});

export const deleteChunkRoute = createRoute({
  method: 'delete',
  path: '/api/v1/knowledge/{id}/documents/{documentId}/chunks/{chunkId}',
  operationId: 'deleteKnowledgeChunk',
  scope: 'knowledge:write' as const,
  tags,
  summary: 'Delete a chunk',
  description:
    'The other chunks keep their chunkIndex. Reprocessing the document later rebuilds all its chunks.',
  request: { params: chunkParams, body: jsonBody(chunkWriteBody, chunkWriteRequest) },
  responses: {
    200: ok({ description: 'Deleted', schema: chunkDeleted, example: chunkDeletedExample }, 'api'),
    ...writeErrors,
  },
});

/** Adds the chunk operations to the knowledge router. */
export function withChunkRoutes(router: Router, deps: DocumentDeps & { embedders: Embedders }): Router {
  const { db, embedders } = deps;
  /** The content with its tokens and embedding by the base's model (found in the workspace, or 404). */
  const embedded = async (
    knowledgeBaseId: string,
    workspaceId: string,
    text: string,
  ): Promise<ChunkContent> => {
    const kb = await getKnowledgeBase(db, { id: knowledgeBaseId, workspaceId });
    // Loaded on first use: the tokenizer's tables are large, and most API processes never edit a chunk.
    const { countTokens } = await import('../../../runner/ingestion/tokens.ts');
    const [embedding] = await embedders.get(kb.embeddingModel).embedDocuments([text]);
    return { content: text, tokenCount: countTokens(text), embedding: embedding as Float32Array };
  };
  return router
    .openapi(listChunksRoute, async (c) => {
      const { id, documentId } = c.req.valid('param');
      const q = c.req.valid('query');
      const access = await authorizeResource(db, c.get('principal'), q.workspaceId, 'read', 'Knowledge base');
      const scope = { workspaceId: access.workspace.id, knowledgeBaseId: id };
      const { chunks, total } = await listChunks(db, documentId, scope, q);
      const pagination = {
        total,
        limit: q.limit,
        offset: q.offset,
        hasMore: q.offset + chunks.length < total,
      };
      return c.json({ success: true as const, data: { chunks, pagination } }, 200);
    })
    .openapi(addChunkRoute, async (c) => {
      const { id, documentId } = c.req.valid('param');
      const body = c.req.valid('json');
      const access = await authorizeResource(
        db,
        c.get('principal'),
        body.workspaceId,
        'write',
        'Knowledge base',
      );
      const scope = { workspaceId: access.workspace.id, knowledgeBaseId: id };
      const content = await embedded(id, scope.workspaceId, body.content);
      const chunk = await addChunk(db, access.actor, documentId, scope, {
        ...content,
        enabled: body.enabled,
      });
      return c.json({ success: true as const, data: { chunk } }, 200);
    })
    .openapi(updateChunkRoute, async (c) => {
      const { id, documentId, chunkId } = c.req.valid('param');
      const body = c.req.valid('json');
      const access = await authorizeResource(
        db,
        c.get('principal'),
        body.workspaceId,
        'write',
        'Knowledge base',
      );
      const scope = { workspaceId: access.workspace.id, knowledgeBaseId: id };
      const content =
        body.content === undefined ? undefined : await embedded(id, scope.workspaceId, body.content);
      const ref = { documentId, chunkId: Number(chunkId) };
      const chunk = await updateChunk(db, access.actor, ref, scope, { content, enabled: body.enabled });
      return c.json({ success: true as const, data: { chunk } }, 200);
    })
    .openapi(deleteChunkRoute, async (c) => {
      const { id, documentId, chunkId } = c.req.valid('param');
      const { workspaceId } = c.req.valid('json');
      const access = await authorizeResource(db, c.get('principal'), workspaceId, 'write', 'Knowledge base');
      const scope = { workspaceId: access.workspace.id, knowledgeBaseId: id };
      await deleteChunk(db, access.actor, { documentId, chunkId: Number(chunkId) }, scope);
      return c.json(
        { success: true as const, data: { chunkId: Number(chunkId), message: 'Chunk deleted' } },
        200,
      );
    });
}
