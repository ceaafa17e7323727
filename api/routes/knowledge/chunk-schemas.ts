// The requests and answers of a document's chunks: list (paged), add, change, delete.
import { z } from 'zod';
import { type KnowledgeChunk, MAX_CHUNK_CHARS } from '../../../db/knowledge/chunks.ts';
import { isStorableText } from '../../../db/tables/values.ts';
import { wholeNumberParam } from '../../middleware/validate.ts';
import { EX, envelope, withFieldDocs } from '../../openapi/components.ts';
import { invalid } from '../../openapi/error-answers.ts';
import { documentParams } from './document-schemas.ts';
import { BAD_KB_ID, READ_400, WRITE_400 } from './examples.ts';
import { WORKSPACE } from './schemas.ts';

export const chunkParams = documentParams.extend({
  chunkId: z
    .string()
    .regex(/^[1-9][0-9]{0,15}$/, 'Must be a chunk id (a positive whole number)')
    .meta({ description: 'The chunk id', example: '42' }),
});

const content = z
  .string()
  .trim()
  .min(1)
  .max(MAX_CHUNK_CHARS)
  .refine(isStorableText, 'Not storable text (no NUL)')
  .meta({
    description: `The chunk's text, 1 to ${MAX_CHUNK_CHARS} characters; embedded again when it changes`,
  });

export const listChunksQuery = withFieldDocs(
  z.object({
    workspaceId: z.uuid(),
    limit: wholeNumberParam(1, 100).default(50),
    offset: wholeNumberParam(0, Number.MAX_SAFE_INTEGER).default(0),
    enabled: z.enum(['all', 'true', 'false']).default('all'),
    search: z.string().max(255).refine(isStorableText, 'Not storable text').optional(),
  }),
  {
    workspaceId: WORKSPACE,
    limit: { description: 'Page size', example: 50 },
    offset: { description: 'Chunks to skip', example: 0 },
    enabled: { description: 'Only enabled (`true`) or disabled (`false`) chunks', example: 'all' },
    search: { description: 'Part of the content, any case', example: 'leave' },
  },
);

export const addChunkBody = z.object({
  workspaceId: z.uuid().meta(WORKSPACE),
  content,
  enabled: z.boolean().default(true).meta({ description: 'A disabled chunk is not searched' }),
});

export const updateChunkBody = z
  .object({
    workspaceId: z.uuid().meta(WORKSPACE),
    content: content.optional(),
    enabled: z.boolean().optional().meta({ description: 'A disabled chunk is not searched' }),
  })
  .refine((b) => b.content !== undefined || b.enabled !== undefined, {
    message: 'Give content, enabled or both',
    path: ['content'],
  });

export const chunkWriteBody = z.object({ workspaceId: z.uuid().meta(WORKSPACE) });

const chunkSchema = z
  .object({
    id: z.number().int(),
    documentId: z.uuid(),
    chunkIndex: z.number().int().meta({ description: 'Its place in the document, from 0' }),
    content: z.string(),
    contentLength: z.number().int().meta({ description: 'Characters' }),
    tokenCount: z.number().int(),
    enabled: z.boolean().meta({ description: 'Only enabled chunks are searched' }),
  })
  .meta({ id: 'KnowledgeChunk' }) satisfies z.ZodType<KnowledgeChunk>;

export const chunkPage = envelope({
  chunks: z.array(chunkSchema),
  pagination: z.object({
    total: z.number().int(),
    limit: z.number().int(),
    offset: z.number().int(),
    hasMore: z.boolean(),
  }),
}).meta({ id: 'KnowledgeChunkPage' });

export const chunkAnswer = envelope({ chunk: chunkSchema }).meta({ id: 'KnowledgeChunkAnswer' });

export const chunkDeleted = envelope({ chunkId: z.number().int(), message: z.string() }).meta({
  id: 'KnowledgeChunkDeleted',
});

// --- Examples -------------------------------------------------------------------------------------

const chunkExample = {
  id: 42,
  documentId: EX.documentId,
  chunkIndex: 3,
  content: 'Parental leave lasts sixteen weeks.',
  contentLength: 35,
  tokenCount: 7,
  enabled: true,
};

export const chunkPageExample = {
  success: true,
  data: { chunks: [chunkExample], pagination: { total: 1, limit: 50, offset: 0, hasMore: false } },
};
export const chunkAnswerExample = { success: true, data: { chunk: chunkExample } };
export const chunkDeletedExample = { success: true, data: { chunkId: 42, message: 'Chunk deleted' } };
export const addChunkRequest = {
  workspaceId: EX.workspaceId,
  content: 'Parental leave lasts sixteen weeks.',
};
export const updateChunkRequest = { workspaceId: EX.workspaceId, enabled: false };
export const chunkWriteRequest = { workspaceId: EX.workspaceId };

const BAD_CHUNK_ID = invalid(['chunkId'], 'Must be a chunk id (a positive whole number)', 'invalid_format');
export const listChunksInvalid = [READ_400, BAD_KB_ID];
export const chunkWriteInvalid = [
  WRITE_400,
  BAD_KB_ID,
  BAD_CHUNK_ID,
  invalid(['content'], 'Give content, enabled or both', 'custom', 'Invalid request body'),
];
