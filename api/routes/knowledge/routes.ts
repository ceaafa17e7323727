// /api/v1/knowledge: list a workspace's knowledge bases (4), search them (6), update one (5; a new
// chunking config re-processes its documents); a base's documents are in document-routes.ts.
// Reads name the workspace in the query and need read permission; writes name it in the body (or
// the upload's workspaceId field) and need write permission. A base outside that workspace is not
// found.
import { createRoute } from '@hono/zod-openapi';
import { authorizeResource, authorizeWorkspace } from '../../../db/access.ts';
import { listKnowledgeBases, updateKnowledgeBase } from '../../../db/knowledge/bases.ts';
import { searchKnowledge } from '../../../db/knowledge/search.ts';
import { sendIngestJobs } from '../../../jobs/ingest-jobs.ts';
import type { Embedders } from '../../../runner/embeddings/embedder.ts';
import { rerankResults } from '../../../runner/embeddings/rerank.ts';
import {
  API_RATE_LIMITED,
  jsonBody,
  ok,
  READ_DENIED,
  RESOURCE_WRITE_DENIED,
} from '../../openapi/components.ts';
import { errors } from '../../openapi/error-answers.ts';
import { type Guards, Router } from '../router.ts';
import { withBaseRoutes } from './base-routes.ts';
import { withChunkRoutes } from './chunk-routes.ts';
import { withDocumentEditRoutes } from './document-edit-routes.ts';
import { type DocumentDeps, withDocumentRoutes } from './document-routes.ts';
import { withDocumentUpdateRoutes } from './document-update-routes.ts';
import {
  knowledgeBaseListExample,
  knowledgeBaseUpdatedExample,
  READ_400,
  searchInvalid,
  searchRequests,
  searchResultsExample,
  updateKnowledgeInvalid,
  updateKnowledgeRequest,
} from './examples.ts';
import {
  knowledgeBaseList,
  knowledgeBaseParams,
  knowledgeBaseUpdated,
  listKnowledgeQuery,
  searchKnowledgeBody,
  searchResults,
  updateKnowledgeBody,
} from './schemas.ts';
import { withTagRoutes } from './tag-routes.ts';

/** What the knowledge routes use besides the API's own: uploads are stored, queries embedded. */
export type KnowledgeDeps = DocumentDeps & { embedders: Embedders };

const tags = ['Knowledge'];

export const listKnowledgeBasesRoute = createRoute({
  method: 'get',
  path: '/api/v1/knowledge',
  operationId: 'listKnowledgeBases',
  scope: 'knowledge:read' as const,
  tags,
  summary: 'List knowledge bases',
  description: "The workspace's knowledge bases.",
  request: { query: listKnowledgeQuery },
  responses: {
    200: ok(
      { description: 'The knowledge bases', schema: knowledgeBaseList, example: knowledgeBaseListExample },
      'api',
    ),
    ...errors(
      { 400: READ_400, 403: READ_DENIED, 404: 'Workspace not found', 429: API_RATE_LIMITED },
      { metering: 'api' },
    ),
  },
});

export const searchKnowledgeRoute = createRoute({
  method: 'post',
  path: '/api/v1/knowledge/search',
  operationId: 'searchKnowledge',
  scope: 'knowledge:read' as const,
  tags,
  summary: 'Search knowledge bases',
  description:
    'By query text (vector, or hybrid with full-text), by tag filters, or both, over the enabled, ' +
    'processed documents of the named knowledge bases.',
  request: { body: jsonBody(searchKnowledgeBody, undefined, { examples: searchRequests }) },
  responses: {
    200: ok(
      {
        description: 'The matching chunks, best first',
        schema: searchResults,
        example: searchResultsExample,
      },
      'api',
    ),
    ...errors(
      {
        400: searchInvalid,
        403: READ_DENIED,
        404: ['Knowledge base not found', 'Workspace not found'],
        413: 'Request body over 10485760 bytes',
        429: API_RATE_LIMITED,
        502: ['Rerank server did not answer within 5000 ms', 'Rerank server answered HTTP 500'],
      },
      { metering: 'api' },
    ),
  },
});

export const updateKnowledgeBaseRoute = createRoute({
  method: 'put',
  path: '/api/v1/knowledge/{id}',
  operationId: 'updateKnowledgeBase',
  scope: 'knowledge:write' as const,
  tags,
  summary: 'Update a knowledge base',
  description: 'Changes any of name, description and chunking config (at least one).',
  request: { params: knowledgeBaseParams, body: jsonBody(updateKnowledgeBody, updateKnowledgeRequest) },
  responses: {
    200: ok(
      {
        description: 'The updated knowledge base',
        schema: knowledgeBaseUpdated,
        example: knowledgeBaseUpdatedExample,
      },
      'api',
    ),
    ...errors(
      {
        400: updateKnowledgeInvalid,
        403: RESOURCE_WRITE_DENIED,
        404: 'Knowledge base not found',
        413: 'Request body over 10485760 bytes',
        429: API_RATE_LIMITED,
      },
      { metering: 'api' },
    ),
  },
});

export function knowledgeRoutes(deps: KnowledgeDeps, guards: Guards) {
  const { db, queue, embedders } = deps;
  const router = new Router(guards, { rateLimited: true })
    .openapi(listKnowledgeBasesRoute, async (c) => {
      const { workspaceId } = c.req.valid('query');
      const access = await authorizeWorkspace(db, c.get('principal'), workspaceId, 'read');
      const knowledgeBases = await listKnowledgeBases(db, access.workspace.id);
      return c.json(
        { success: true as const, data: { knowledgeBases, totalCount: knowledgeBases.length } },
        200,
      );
    })
    .openapi(searchKnowledgeRoute, async (c) => {
      const body = c.req.valid('json');
      const access = await authorizeWorkspace(db, c.get('principal'), body.workspaceId, 'read');
      const data = await searchKnowledge(
        db,
        (model, query) => embedders.get(model).embedQuery(query),
        access.workspace.id,
        body,
      );
      if (body.rerank) {
        data.results = await rerankResults(embedders.reranker, body.rerank, data.query, data.results);
        data.totalResults = data.results.length;
      }
      return c.json({ success: true as const, data }, 200);
    })
    .openapi(updateKnowledgeBaseRoute, async (c) => {
      const { id } = c.req.valid('param');
      const { workspaceId, ...changes } = c.req.valid('json');
      const access = await authorizeResource(db, c.get('principal'), workspaceId, 'write', 'Knowledge base');
      const { knowledgeBase, jobs } = await db.transaction(async (tx) => {
        const updated = await updateKnowledgeBase(tx, access.actor, { id, workspaceId }, changes);
        await sendIngestJobs(queue, tx, updated.jobs);
        return updated;
      });
      const message = jobs.length
        ? `Knowledge base updated; ${jobs.length} document(s) are being processed again with the new chunking config`
        : 'Knowledge base updated';
      return c.json({ success: true as const, data: { knowledgeBase, message } }, 200);
    });
  const documents = withDocumentEditRoutes(withDocumentRoutes(withBaseRoutes(router, deps), deps), deps);
  return withTagRoutes(withChunkRoutes(withDocumentUpdateRoutes(documents, deps), deps), deps).app;
}
