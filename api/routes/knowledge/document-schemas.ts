// The requests and answers of a knowledge base's documents: list (7), read one, upload (8).
import { z } from 'zod';
import { DOCUMENT_SORTS, type KnowledgeDocument } from '../../../db/knowledge/documents.ts';
import { isStorableText } from '../../../db/tables/values.ts';
import { SUPPORTED_DOCUMENT_TYPES } from '../../../runner/ingestion/document-types.ts';
import { wholeNumberParam } from '../../middleware/validate.ts';
import { EX, envelope, withFieldDocs } from '../../openapi/components.ts';
import { uuidParam } from '../router.ts';
import { knowledgeBaseParams, WORKSPACE } from './schemas.ts';

export const documentParams = knowledgeBaseParams.extend({
  documentId: uuidParam('The document id', EX.documentId),
});

// --- Requests -------------------------------------------------------------------------------------

// withFieldDocs shows the whole numbers carried as text as the integers they stand for.
export const listDocumentsQuery = withFieldDocs(
  z.object({
    workspaceId: z.uuid(),
    limit: wholeNumberParam(1, 100).default(50),
    offset: wholeNumberParam(0, Number.MAX_SAFE_INTEGER).default(0),
    // Postgres text holds no NUL: refused as a 400 rather than failing as a 500.
    search: z.string().max(255).refine(isStorableText, 'Not storable text').optional(),
    enabledFilter: z.enum(['all', 'enabled', 'disabled']).default('all'),
    sortBy: z.enum(DOCUMENT_SORTS).default('uploadedAt'),
    sortOrder: z.enum(['asc', 'desc']).default('desc'),
  }),
  {
    workspaceId: WORKSPACE,
    limit: { description: 'Page size', example: 50 },
    offset: { description: 'Documents to skip', example: 0 },
    search: { description: 'Part of the file name', example: 'handbook' },
    enabledFilter: { example: 'all' },
    sortBy: { example: 'uploadedAt' },
    sortOrder: { example: 'desc' },
  },
);

export const getDocumentQuery = z.object({ workspaceId: z.uuid().meta(WORKSPACE) });

/** The text fields of an upload (others are ignored); the file part is named `file`. */
export const uploadDocumentFields = z.object({
  workspaceId: z.uuid().meta(WORKSPACE),
  // Form fields are text: the two words, nothing looser, so a typo is a 400 rather than a silent "no".
  allowDuplicate: z
    .enum(['true', 'false'])
    .optional()
    .meta({
      description:
        '`true` accepts a file whose content (the same bytes, by SHA-256, whatever its name) the knowledge base ' +
        'already holds; by default that upload is refused with a 409 naming the document that holds it, since ' +
        'every search hit would then show twice. A document that failed processing does not count: its content ' +
        'may be uploaded again.',
      example: 'false',
    }),
});

/** The multipart form as documented: the fields and the file part (the handler reads it itself). */
export const uploadForm = uploadDocumentFields
  .extend({
    file: z.string().meta({
      format: 'binary',
      description: `The document, at most 100 MB: ${SUPPORTED_DOCUMENT_TYPES}`,
    }),
  })
  .meta({
    description: 'Send `workspaceId` before `file`: the caller is then authorised before a byte is stored',
  });

// --- Answers --------------------------------------------------------------------------------------

export const tagValues = z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).meta({
  id: 'KnowledgeDocumentTags',
  description:
    'Tag values by tag name (text, number, ISO 8601 date, boolean): names the knowledge base defines',
  example: { department: 'HR', year: 2025 },
});

export const documentSchema = z
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
    tags: tagValues.optional().meta({
      description: 'Its tag values by name (tags it has no value for left out); in reads and updates',
    }),
  })
  .meta({ id: 'KnowledgeDocument' }) satisfies z.ZodType<KnowledgeDocument>;

export const documentPage = envelope({
  documents: z.array(documentSchema),
  pagination: z.object({
    total: z.number().int(),
    limit: z.number().int(),
    offset: z.number().int(),
    hasMore: z.boolean(),
  }),
}).meta({ id: 'KnowledgeDocumentPage' });

export const documentFound = envelope({ document: documentSchema }).meta({ id: 'KnowledgeDocumentFound' });

export const documentUploaded = envelope({ document: documentSchema, message: z.string() }).meta({
  id: 'KnowledgeDocumentUploaded',
});

/** The body of a document write that names only its workspace (delete, reprocess). */
export const documentWriteBody = z.object({ workspaceId: z.uuid().meta(WORKSPACE) });

export const documentDeleted = envelope({ documentId: z.uuid(), message: z.string() }).meta({
  id: 'KnowledgeDocumentDeleted',
});

export const documentReprocessed = envelope({ document: documentSchema, message: z.string() }).meta({
  id: 'KnowledgeDocumentReprocessed',
});
