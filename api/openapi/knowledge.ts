// OpenAPI: /api/v1/knowledge: list knowledge bases (4), update one (5), search (6), list a base's
// documents (7), read one, and upload a document to it (8).
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import type { KnowledgeBase } from '../../db/knowledge/bases.ts';
import type { KnowledgeDocument } from '../../db/knowledge/documents.ts';
import { knowledgeSearchRequest, type SearchResultItem } from '../../db/knowledge/search.ts';
import { SUPPORTED_DOCUMENT_TYPES } from '../../runner/ingestion/document-types.ts';
import {
  getDocumentQuery,
  listDocumentsQuery,
  listKnowledgeQuery,
  updateKnowledgeBody,
  uploadDocumentFields,
} from '../routes/knowledge.ts';
import {
  API_RATE_LIMITED,
  annotateFields,
  EX,
  envelope,
  errors,
  idempotencyHeaders,
  invalid,
  jsonBody,
  ok,
  READ_DENIED,
  RESOURCE_WRITE_DENIED,
  withIdempotency,
} from './components.ts';

// --- Answers --------------------------------------------------------------------------------------

const chunkingConfig = z
  .object({
    maxSize: z.number().int().meta({ description: 'Tokens per chunk at most (100–4000)' }),
    minSize: z.number().int().meta({ description: 'Characters per chunk at least (1–2000)' }),
    overlap: z
      .number()
      .int()
      .meta({ description: 'Tokens neighbouring chunks share (0–500, below maxSize)' }),
  })
  .meta({ id: 'ChunkingConfig' });

const knowledgeBaseSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string(),
    docCount: z.number().int(),
    tokenCount: z.number().int(),
    embeddingModel: z.string().meta({ description: 'Chosen at creation for good' }),
    chunkingConfig,
    workspaceId: z.uuid(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'KnowledgeBase' }) satisfies z.ZodType<KnowledgeBase>;

const documentSchema = z
  .object({
    id: z.uuid(),
    knowledgeBaseId: z.uuid(),
    filename: z.string(),
    fileSize: z.number().int().meta({ description: 'Bytes' }),
    mimeType: z.string(),
    processingStatus: z.enum(['pending', 'processing', 'completed', 'failed']).meta({
      description: '`pending` after upload → `processing` → `completed`, or `failed` with processingError',
    }),
    processingError: z.string().nullable().meta({ description: 'Why processing failed; null unless failed' }),
    chunkCount: z.number().int(),
    tokenCount: z.number().int(),
    enabled: z.boolean().meta({ description: 'Only enabled documents are searched' }),
    createdAt: z.iso.datetime(),
    uploadedAt: z.iso.datetime().meta({ description: 'The same instant as createdAt' }),
    processingStartedAt: z.iso.datetime().nullable(),
    processedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'KnowledgeDocument' }) satisfies z.ZodType<KnowledgeDocument>;

const searchResultSchema = z
  .object({
    documentId: z.uuid(),
    documentName: z.string(),
    content: z.string().meta({ description: 'The text of the matching chunk' }),
    chunkIndex: z.number().int(),
    similarity: z.number().meta({
      description:
        "How close the chunk's meaning is to the query: 1 − cosine distance between their embeddings (up to 1), " +
        'in every mode; 1 for a search by tags alone. In hybrid mode the results are not ordered by it: see score.',
    }),
    score: z.number().meta({
      description:
        'What the results are ordered by, highest first. Vector mode and a search by tags alone: equal to ' +
        'similarity. Hybrid mode: the reciprocal rank fusion score, the sum over the vector ranking and the ' +
        'full-text ranking of 1 / (60 + rank) (rank 1 is the best; a list the chunk is not in adds nothing), so ' +
        'at most 2/61 ≈ 0.0328; it compares results of one answer, not of two searches.',
    }),
    metadata: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]))
      .meta({ description: "The document's tag values by tag name" }),
  })
  .meta({ id: 'SearchResult' }) satisfies z.ZodType<SearchResultItem>;

const kbExample = {
  id: EX.knowledgeBaseId,
  name: 'Handbook',
  description: 'Company policies',
  docCount: 1,
  tokenCount: 10734,
  embeddingModel: 'local-hashed-ngrams-v1',
  chunkingConfig: { maxSize: 1024, minSize: 100, overlap: 200 },
  workspaceId: EX.workspaceId,
  createdAt: EX.time,
  updatedAt: EX.time,
};
const documentExample = {
  id: EX.documentId,
  knowledgeBaseId: EX.knowledgeBaseId,
  filename: 'handbook.pdf',
  fileSize: 48213,
  mimeType: 'application/pdf',
  processingStatus: 'pending',
  processingError: null,
  chunkCount: 0,
  tokenCount: 0,
  enabled: true,
  createdAt: EX.time,
  uploadedAt: EX.time,
  processingStartedAt: null,
  processedAt: null,
};

// --- Requests -------------------------------------------------------------------------------------

const WORKSPACE = { description: 'The workspace of the knowledge base', example: EX.workspaceId };

annotateFields(listKnowledgeQuery, { workspaceId: WORKSPACE });
annotateFields(updateKnowledgeBody, {
  workspaceId: WORKSPACE,
  chunkingConfig: {
    description:
      'Any of maxSize (100–4000 tokens), minSize (1–2000 characters), overlap (0–500 tokens, below maxSize), ' +
      'merged into the current config. A changed config processes every document again; searches answer ' +
      'from the old chunks until the new ones are in.',
  },
});
annotateFields(knowledgeSearchRequest, {
  workspaceId: WORKSPACE,
  knowledgeBaseIds: { description: '1 to 20 knowledge bases of the workspace' },
  query: { description: 'Text to search for by meaning; give query, tagFilters or both' },
  tagFilters: {
    description:
      'All must hold. text: eq neq contains not_contains starts_with ends_with (any case); number and ' +
      'date: eq neq gt gte lt lte between (inclusive, with valueTo); boolean: eq neq',
  },
  topK: { description: 'Results wanted' },
  searchMode: {
    description:
      '`vector`: by similarity. `hybrid` adds full-text ranking, fused with the vector ranking by reciprocal rank: ' +
      'results then come in `score` order, and their `similarity` values need not be in order',
  },
});
annotateFields(listDocumentsQuery, {
  workspaceId: WORKSPACE,
  limit: { description: 'Page size', example: 50 },
  offset: { description: 'Documents to skip', example: 0 },
  search: { description: 'Part of the file name', example: 'handbook' },
  enabledFilter: { example: 'all' },
  sortBy: { example: 'uploadedAt' },
  sortOrder: { example: 'desc' },
});
annotateFields(uploadDocumentFields, {
  workspaceId: WORKSPACE,
  allowDuplicate: {
    description:
      '`true` accepts a file whose content (the same bytes, by SHA-256, whatever its name) the knowledge base ' +
      'already holds; by default that upload is refused with a 409 naming the document that holds it, since ' +
      'every search hit would then show twice. A document that failed processing does not count: its content ' +
      'may be uploaded again.',
    example: 'false',
  },
});
annotateFields(getDocumentQuery, { workspaceId: WORKSPACE });

const uploadForm = uploadDocumentFields
  .extend({
    file: z.string().meta({
      format: 'binary',
      description: `The document, at most 100 MB: ${SUPPORTED_DOCUMENT_TYPES}`,
    }),
  })
  .meta({
    description: 'Send `workspaceId` before `file`: the caller is then authorised before a byte is stored',
  });

const kbPath = z.object({
  id: z.uuid().meta({ description: 'The knowledge base id', example: EX.knowledgeBaseId }),
});

const documentPath = kbPath.extend({
  documentId: z.uuid().meta({ description: 'The document id', example: EX.documentId }),
});

const READ_400 = invalid(['workspaceId'], 'Invalid UUID', 'invalid_format', 'Invalid query parameters');
const BAD_KB_ID = invalid(['knowledgeBaseId'], 'Must be a UUID', 'invalid_format');

export function registerKnowledge(registry: OpenAPIRegistry) {
  const tags = ['Knowledge'];
  registry.registerPath({
    method: 'get',
    path: '/api/v1/knowledge',
    operationId: 'listKnowledgeBases',
    tags,
    summary: 'List knowledge bases',
    description: "The workspace's knowledge bases. They are created through the admin plane.",
    request: { query: listKnowledgeQuery },
    responses: {
      200: ok(
        {
          description: 'The knowledge bases',
          schema: envelope({
            knowledgeBases: z.array(knowledgeBaseSchema),
            totalCount: z.number().int(),
          }).meta({
            id: 'KnowledgeBaseList',
          }),
          example: { success: true, data: { knowledgeBases: [kbExample], totalCount: 1 } },
        },
        'api',
      ),
      ...errors(
        { 400: READ_400, 403: READ_DENIED, 404: 'Workspace not found', 429: API_RATE_LIMITED },
        { metering: 'api' },
      ),
    },
  });

  registry.registerPath({
    method: 'put',
    path: '/api/v1/knowledge/{id}',
    operationId: 'updateKnowledgeBase',
    tags,
    summary: 'Update a knowledge base',
    description: 'Changes any of name, description and chunking config (at least one).',
    request: {
      params: kbPath,
      body: jsonBody(updateKnowledgeBody, {
        workspaceId: EX.workspaceId,
        chunkingConfig: { maxSize: 256, overlap: 32 },
      }),
    },
    responses: {
      200: ok(
        {
          description: 'The updated knowledge base',
          schema: envelope({ knowledgeBase: knowledgeBaseSchema, message: z.string() }).meta({
            id: 'KnowledgeBaseUpdated',
          }),
          example: {
            success: true,
            data: {
              knowledgeBase: {
                ...kbExample,
                chunkingConfig: { maxSize: 256, minSize: 100, overlap: 32 },
                updatedAt: EX.later,
              },
              message:
                'Knowledge base updated; 1 document(s) are being processed again with the new chunking config',
            },
          },
        },
        'api',
      ),
      ...errors(
        {
          400: [
            invalid(
              ['name'],
              'Give at least one of name, description and chunkingConfig',
              'custom',
              'Invalid request body',
            ),
            invalid(['chunkingConfig', 'overlap'], 'Must be less than maxSize'),
            BAD_KB_ID,
          ],
          403: RESOURCE_WRITE_DENIED,
          404: 'Knowledge base not found',
          413: 'Request body over 10485760 bytes',
          429: API_RATE_LIMITED,
        },
        { metering: 'api' },
      ),
    },
  });

  registry.registerPath({
    method: 'post',
    path: '/api/v1/knowledge/search',
    operationId: 'searchKnowledge',
    tags,
    summary: 'Search knowledge bases',
    description:
      'By query text (vector, or hybrid with full-text), by tag filters, or both, over the enabled, ' +
      'processed documents of the named knowledge bases.',
    request: {
      body: jsonBody(knowledgeSearchRequest, undefined, {
        examples: {
          query: {
            summary: 'By meaning',
            value: {
              workspaceId: EX.workspaceId,
              knowledgeBaseIds: [EX.knowledgeBaseId],
              query: 'parental leave',
              topK: 5,
            },
          },
          hybrid: {
            summary: 'Hybrid, with a tag filter',
            value: {
              workspaceId: EX.workspaceId,
              knowledgeBaseIds: [EX.knowledgeBaseId],
              query: 'parental leave',
              topK: 5,
              searchMode: 'hybrid',
              tagFilters: [{ tagName: 'department', operator: 'eq', value: 'HR' }],
            },
          },
        },
      }),
    },
    responses: {
      200: ok(
        {
          description: 'The matching chunks, best first',
          schema: envelope({
            results: z.array(searchResultSchema),
            query: z.string().meta({ description: "The trimmed query; '' for a search by tags alone" }),
            knowledgeBaseIds: z.array(z.uuid()),
            topK: z.number().int(),
            totalResults: z.number().int(),
          }).meta({ id: 'SearchResults' }),
          example: {
            success: true,
            data: {
              results: [
                {
                  documentId: EX.documentId,
                  documentName: 'handbook.pdf',
                  content: 'Parental leave is 16 weeks, paid in full…',
                  chunkIndex: 3,
                  similarity: 0.41,
                  score: 0.41,
                  metadata: { department: 'HR' },
                },
              ],
              query: 'parental leave',
              knowledgeBaseIds: [EX.knowledgeBaseId],
              topK: 5,
              totalResults: 1,
            },
          },
        },
        'api',
      ),
      ...errors(
        {
          400: [
            {
              error: 'Invalid request body',
              details: [
                {
                  code: 'too_small',
                  path: ['knowledgeBaseIds'],
                  message: 'Too small: expected array to have >=1 items',
                },
                { code: 'custom', path: ['query'], message: 'Give a query, tagFilters, or both' },
              ],
            },
            {
              error: 'Invalid tag filters',
              details: [
                {
                  code: 'invalid_value',
                  path: ['tagFilters', 0, 'tagName'],
                  message: 'No tag named department',
                },
              ],
            },
          ],
          403: READ_DENIED,
          404: ['Knowledge base not found', 'Workspace not found'],
          413: 'Request body over 10485760 bytes',
          429: API_RATE_LIMITED,
        },
        { metering: 'api' },
      ),
    },
  });

  registry.registerPath({
    method: 'get',
    path: '/api/v1/knowledge/{id}/documents',
    operationId: 'listKnowledgeDocuments',
    tags,
    summary: 'List documents of a knowledge base',
    request: { params: kbPath, query: listDocumentsQuery },
    responses: {
      200: ok(
        {
          description: 'A page of documents',
          schema: envelope({
            documents: z.array(documentSchema),
            pagination: z.object({
              total: z.number().int(),
              limit: z.number().int(),
              offset: z.number().int(),
              hasMore: z.boolean(),
            }),
          }).meta({ id: 'KnowledgeDocumentPage' }),
          example: {
            success: true,
            data: {
              documents: [
                {
                  ...documentExample,
                  processingStatus: 'completed',
                  chunkCount: 12,
                  tokenCount: 10734,
                  processingStartedAt: EX.time,
                  processedAt: EX.later,
                },
              ],
              pagination: { total: 1, limit: 50, offset: 0, hasMore: false },
            },
          },
        },
        'api',
      ),
      ...errors(
        {
          400: [
            {
              error: 'Invalid query parameters',
              details: [
                { code: 'too_big', path: ['limit'], message: 'Too big: expected number to be <=100' },
              ],
            },
            READ_400,
            BAD_KB_ID,
          ],
          403: 'Personal API keys are disabled in this workspace; use a workspace key',
          404: 'Knowledge base not found',
          429: API_RATE_LIMITED,
        },
        { metering: 'api' },
      ),
    },
  });

  registry.registerPath({
    method: 'get',
    path: '/api/v1/knowledge/{id}/documents/{documentId}',
    operationId: 'getKnowledgeDocument',
    tags,
    summary: 'Get a document of a knowledge base',
    description:
      'One document, as the document list shows it: poll it after an upload to see its processingStatus. ' +
      'A document of another knowledge base, or of another workspace, is not found.',
    request: { params: documentPath, query: getDocumentQuery },
    responses: {
      200: ok(
        {
          description: 'The document',
          schema: envelope({ document: documentSchema }).meta({ id: 'KnowledgeDocumentFound' }),
          example: {
            success: true,
            data: {
              document: {
                ...documentExample,
                processingStatus: 'completed',
                chunkCount: 12,
                tokenCount: 10734,
                processingStartedAt: EX.time,
                processedAt: EX.later,
              },
            },
          },
        },
        'api',
      ),
      ...errors(
        {
          400: [READ_400, BAD_KB_ID, invalid(['documentId'], 'Must be a UUID', 'invalid_format')],
          403: 'Personal API keys are disabled in this workspace; use a workspace key',
          404: ['Document not found', 'Knowledge base not found'],
          429: API_RATE_LIMITED,
        },
        { metering: 'api' },
      ),
    },
  });

  registry.registerPath({
    method: 'post',
    path: '/api/v1/knowledge/{id}/documents',
    operationId: 'uploadKnowledgeDocument',
    tags,
    summary: 'Upload a document',
    description:
      'Stores the file (streamed, at most 100 MB) and answers the document `pending`; runners then parse, ' +
      'chunk and embed it, and mark it `completed` (or `failed` with processingError). Content the knowledge ' +
      'base already holds (the same bytes, by SHA-256) is a 409 naming that document, unless `allowDuplicate` is `true`.',
    request: {
      params: kbPath,
      headers: idempotencyHeaders,
      body: {
        required: true,
        content: { 'multipart/form-data': { schema: uploadForm } },
      },
    },
    responses: {
      200: ok(
        {
          description: 'The document, pending',
          schema: envelope({ document: documentSchema, message: z.string() }).meta({
            id: 'KnowledgeDocumentUploaded',
          }),
          example: {
            success: true,
            data: {
              document: documentExample,
              message: 'Document handbook.pdf uploaded; processing has started',
            },
          },
        },
        'api',
        { idempotent: true },
      ),
      ...errors(
        withIdempotency({
          400: [
            'Send multipart/form-data with a file part and the workspaceId field',
            'The file part is missing',
            invalid(['workspaceId'], 'Invalid UUID', 'invalid_format'),
          ],
          403: RESOURCE_WRITE_DENIED,
          404: 'Knowledge base not found',
          409:
            `This knowledge base already holds the same content: document ${EX.documentId} ("handbook.pdf"). ` +
            'Send the field allowDuplicate=true to upload it anyway',
          413: [
            'File over the size limit of 104857600 bytes',
            'Storage limit reached: 4999990000 of 5000000000 bytes used and this document has 48213 (free plan)',
          ],
          415: `Unsupported document type (image/png, x.png): upload ${SUPPORTED_DOCUMENT_TYPES}`,
          429: API_RATE_LIMITED,
        }),
        { metering: 'api', retryAfter: [409] },
      ),
    },
  });
}
