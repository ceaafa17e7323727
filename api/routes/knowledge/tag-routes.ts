// /api/v1/knowledge/{id}/tags[/{tagName}]: a knowledge base's typed tag definitions (what the admin
// plane's knowledge.defineTag makes), listed, defined and deleted. A definition takes the first
// free slot of its type (7 text, 5 number, 2 date, 3 boolean); deleting one clears its values from
// every document. Documents' values are set with PATCH …/documents/{documentId} `tags`.
import { createRoute } from '@hono/zod-openapi';
import { z } from 'zod';
import { authorizeResource } from '../../../db/access.ts';
import { requireKnowledgeBase } from '../../../db/knowledge/bases.ts';
import {
  defineTag,
  deleteTag,
  listTags,
  MAX_TAG_NAME,
  TAG_TYPES,
  tagNameSchema,
} from '../../../db/knowledge/tags.ts';
import { isStorableText } from '../../../db/tables/values.ts';
import {
  API_RATE_LIMITED,
  EX,
  envelope,
  jsonBody,
  ok,
  READ_DENIED,
  RESOURCE_WRITE_DENIED,
} from '../../openapi/components.ts';
import { errors, invalid } from '../../openapi/error-answers.ts';
import type { Router } from '../router.ts';
import type { DocumentDeps } from './document-routes.ts';
import { BAD_KB_ID, READ_400, WRITE_400 } from './examples.ts';
import { knowledgeBaseParams, WORKSPACE } from './schemas.ts';

const tags = ['Knowledge'];

const tagParams = knowledgeBaseParams.extend({
  tagName: z
    .string()
    .min(1)
    .max(MAX_TAG_NAME)
    // Postgres text holds no NUL: refused as a 400 rather than failing as a 500.
    .refine(isStorableText, 'Not storable text')
    .meta({ description: 'The tag’s name (URL-encoded)', example: 'department' }),
});

const tagSchema = z
  .object({
    name: z.string(),
    type: z.enum(TAG_TYPES),
    slot: z.string().meta({ description: 'Where documents keep its value, e.g. `text1`', example: 'text1' }),
  })
  .meta({ id: 'KnowledgeTagDefinition' });

const tagExample = { name: 'department', type: 'text', slot: 'text1' };

const defineTagBody = z.object({
  workspaceId: z.uuid().meta(WORKSPACE),
  name: tagNameSchema.meta({
    description: '1 to 100 characters, unique in the knowledge base',
    example: 'department',
  }),
  type: z.enum(TAG_TYPES).meta({ example: 'text' }),
});

const tagWriteBody = z.object({ workspaceId: z.uuid().meta(WORKSPACE) });

export const listTagsRoute = createRoute({
  method: 'get',
  path: '/api/v1/knowledge/{id}/tags',
  operationId: 'listKnowledgeTags',
  scope: 'knowledge:read' as const,
  tags,
  summary: 'List tag definitions',
  request: { params: knowledgeBaseParams, query: z.object({ workspaceId: z.uuid().meta(WORKSPACE) }) },
  responses: {
    200: ok(
      {
        description: 'The tag definitions, oldest first',
        schema: envelope({ tags: z.array(tagSchema) }).meta({ id: 'KnowledgeTagList' }),
        example: { success: true, data: { tags: [tagExample] } },
      },
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

export const defineTagRoute = createRoute({
  method: 'post',
  path: '/api/v1/knowledge/{id}/tags',
  operationId: 'defineKnowledgeTag',
  scope: 'knowledge:write' as const,
  tags,
  summary: 'Define a tag',
  description:
    'A typed tag (text, number, date, boolean) in the first free slot of its type; a knowledge base ' +
    'holds at most 7 text, 5 number, 2 date and 3 boolean tags.',
  request: {
    params: knowledgeBaseParams,
    body: jsonBody(defineTagBody, { workspaceId: EX.workspaceId, name: 'department', type: 'text' }),
  },
  responses: {
    200: ok(
      {
        description: 'The definition',
        schema: envelope({ tag: tagSchema, message: z.string() }).meta({ id: 'KnowledgeTagDefined' }),
        example: { success: true, data: { tag: tagExample, message: 'Tag department defined' } },
      },
      'api',
    ),
    ...errors(
      {
        400: [WRITE_400, BAD_KB_ID, invalid(['type'], 'A knowledge base holds at most 2 date tags')],
        403: RESOURCE_WRITE_DENIED,
        404: 'Knowledge base not found',
        409: 'A tag named department already exists',
        413: 'Request body over 10485760 bytes',
        429: API_RATE_LIMITED,
      },
      { metering: 'api' },
    ),
  },
});

export const deleteTagRoute = createRoute({
  method: 'delete',
  path: '/api/v1/knowledge/{id}/tags/{tagName}',
  operationId: 'deleteKnowledgeTag',
  scope: 'knowledge:write' as const,
  tags,
  summary: 'Delete a tag definition',
  description: 'Clears the tag’s values from every document of the knowledge base and frees its slot.',
  request: { params: tagParams, body: jsonBody(tagWriteBody, { workspaceId: EX.workspaceId }) },
  responses: {
    200: ok(
      {
        description: 'Deleted',
        schema: envelope({ name: z.string(), clearedDocuments: z.number().int(), message: z.string() }).meta({
          id: 'KnowledgeTagDeleted',
        }),
        example: {
          success: true,
          data: { name: 'department', clearedDocuments: 3, message: 'Tag department deleted' },
        },
      },
      'api',
    ),
    ...errors(
      {
        400: [WRITE_400, BAD_KB_ID],
        403: RESOURCE_WRITE_DENIED,
        404: ['Tag not found', 'Knowledge base not found'],
        413: 'Request body over 10485760 bytes',
        429: API_RATE_LIMITED,
      },
      { metering: 'api' },
    ),
  },
});

/** Adds the tag definitions to the knowledge router. */
export function withTagRoutes(router: Router, deps: DocumentDeps): Router {
  const { db } = deps;
  return router
    .openapi(listTagsRoute, async (c) => {
      const { id } = c.req.valid('param');
      const { workspaceId } = c.req.valid('query');
      const access = await authorizeResource(db, c.get('principal'), workspaceId, 'read', 'Knowledge base');
      await requireKnowledgeBase(db, { id, workspaceId: access.workspace.id });
      const defined = (await listTags(db, [id])).get(id) ?? [];
      return c.json({ success: true as const, data: { tags: defined } }, 200);
    })
    .openapi(defineTagRoute, async (c) => {
      const { id } = c.req.valid('param');
      const { workspaceId, name, type } = c.req.valid('json');
      const access = await authorizeResource(db, c.get('principal'), workspaceId, 'write', 'Knowledge base');
      await requireKnowledgeBase(db, { id, workspaceId: access.workspace.id });
      const tag = await defineTag(db, access.actor, { knowledgeBaseId: id, name, type });
      return c.json({ success: true as const, data: { tag, message: `Tag ${tag.name} defined` } }, 200);
    })
    .openapi(deleteTagRoute, async (c) => {
      const { id, tagName } = c.req.valid('param');
      const { workspaceId } = c.req.valid('json');
      const access = await authorizeResource(db, c.get('principal'), workspaceId, 'write', 'Knowledge base');
      const ref = { knowledgeBaseId: id, workspaceId: access.workspace.id, name: tagName };
      const done = await deleteTag(db, access.actor, ref);
      return c.json({ success: true as const, data: { ...done, message: `Tag ${done.name} deleted` } }, 200);
    });
}
