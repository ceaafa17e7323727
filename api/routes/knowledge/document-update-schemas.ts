// The requests and answers of changing documents: one document (PATCH …/documents/{documentId}:
// enabled, file name, tag values) and many by id (PATCH …/documents: enable, disable, delete).
import { z } from 'zod';
import { fileNameSchema } from '../../../db/files.ts';
import { BULK_OPERATIONS, MAX_BULK_DOCUMENTS } from '../../../db/knowledge/document-updates.ts';
import { EX, envelope } from '../../openapi/components.ts';
import { invalid } from '../../openapi/error-answers.ts';
import { documentSchema, tagValues } from './document-schemas.ts';
import { BAD_KB_ID, processedDocument, WRITE_400 } from './examples.ts';
import { WORKSPACE } from './schemas.ts';

export const updateDocumentBody = z
  .object({
    workspaceId: z.uuid().meta(WORKSPACE),
    enabled: z.boolean().optional().meta({ description: 'A disabled document is not searched' }),
    filename: fileNameSchema.optional().meta({
      description: 'A new file name; its extension must name the same kind of document',
      example: 'handbook-2025.pdf',
    }),
    tags: tagValues.optional().meta({
      description: 'Tag values to set by name; null clears one; tags not named keep their values',
    }),
  })
  .refine((b) => b.enabled !== undefined || b.filename !== undefined || b.tags !== undefined, {
    message: 'Give at least one of enabled, filename and tags',
    path: ['enabled'],
  });

export const documentUpdated = envelope({
  document: documentSchema,
  tags: tagValues,
  message: z.string(),
}).meta({ id: 'KnowledgeDocumentUpdated' });

export const bulkDocumentsBody = z.object({
  workspaceId: z.uuid().meta(WORKSPACE),
  operation: z.enum(BULK_OPERATIONS).meta({ example: 'disable' }),
  documentIds: z
    .array(z.uuid())
    .min(1)
    .max(MAX_BULK_DOCUMENTS)
    .meta({
      description: `1 to ${MAX_BULK_DOCUMENTS} documents of the knowledge base`,
      example: [EX.documentId],
    }),
});

export const bulkDocumentsDone = envelope({
  operation: z.enum(BULK_OPERATIONS),
  successCount: z.number().int(),
  updatedDocuments: z
    .array(z.object({ id: z.uuid(), enabled: z.boolean() }))
    .meta({ description: 'enable / disable: each document with its flag now; empty for delete' }),
}).meta({ id: 'KnowledgeDocumentsBulkDone' });

// --- Examples -------------------------------------------------------------------------------------

export const updateDocumentRequest = {
  workspaceId: EX.workspaceId,
  enabled: false,
  tags: { department: 'HR', year: 2025 },
};

export const documentUpdatedExample = {
  success: true,
  data: {
    document: { ...processedDocument, enabled: false },
    tags: { department: 'HR', year: 2025 },
    message: 'Document handbook.pdf updated',
  },
};

export const updateDocumentInvalid = [
  WRITE_400,
  BAD_KB_ID,
  invalid(['enabled'], 'Give at least one of enabled, filename and tags', 'custom', 'Invalid request body'),
  invalid(['tags', 'year'], 'Tag year takes a finite number', 'invalid_type', 'Invalid tags'),
  invalid(['filename'], 'A .pdf document cannot be renamed to .txt: the name must keep its kind'),
];

export const bulkDocumentsRequest = {
  workspaceId: EX.workspaceId,
  operation: 'disable',
  documentIds: [EX.documentId],
};

export const bulkDocumentsDoneExample = {
  success: true,
  data: { operation: 'disable', successCount: 1, updatedDocuments: [{ id: EX.documentId, enabled: false }] },
};
