// Examples of the /api/v1/knowledge operations: requests, answers, and the errors they give.
import { SUPPORTED_DOCUMENT_TYPES } from '../../../runner/ingestion/document-types.ts';
import { EX } from '../../openapi/components.ts';
import { invalid } from '../../openapi/error-answers.ts';

// --- Knowledge bases ------------------------------------------------------------------------------

const knowledgeBaseExample = {
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

export const knowledgeBaseListExample = {
  success: true,
  data: { knowledgeBases: [knowledgeBaseExample], totalCount: 1 },
};

/** A read that names a workspace in the query: the 400 of a malformed one. */
export const READ_400 = invalid(
  ['workspaceId'],
  'Invalid UUID',
  'invalid_format',
  'Invalid query parameters',
);

/** `{id}` that is no UUID, reported under the name a client knows it by. */
export const BAD_KB_ID = invalid(['knowledgeBaseId'], 'Must be a UUID', 'invalid_format');

export const updateKnowledgeRequest = {
  workspaceId: EX.workspaceId,
  chunkingConfig: { maxSize: 256, overlap: 32 },
};

export const knowledgeBaseUpdatedExample = {
  success: true,
  data: {
    knowledgeBase: {
      ...knowledgeBaseExample,
      chunkingConfig: { maxSize: 256, minSize: 100, overlap: 32 },
      updatedAt: EX.later,
    },
    message: 'Knowledge base updated; 1 document(s) are being processed again with the new chunking config',
  },
};

export const updateKnowledgeInvalid = [
  invalid(
    ['name'],
    'Give at least one of name, description and chunkingConfig',
    'custom',
    'Invalid request body',
  ),
  invalid(['chunkingConfig', 'overlap'], 'Must be less than maxSize'),
  BAD_KB_ID,
];

export const searchRequests = {
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
};

export const searchResultsExample = {
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
};

export const searchInvalid = [
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
      { code: 'invalid_value', path: ['tagFilters', 0, 'tagName'], message: 'No tag named department' },
    ],
  },
];

// --- Documents ------------------------------------------------------------------------------------

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

export const processedDocument = {
  ...documentExample,
  processingStatus: 'completed',
  chunkCount: 12,
  tokenCount: 10734,
  processingStartedAt: EX.time,
  processedAt: EX.later,
};

export const documentPageExample = {
  success: true,
  data: {
    documents: [processedDocument],
    pagination: { total: 1, limit: 50, offset: 0, hasMore: false },
  },
};

export const listDocumentsInvalid = [
  {
    error: 'Invalid query parameters',
    details: [{ code: 'too_big', path: ['limit'], message: 'Too big: expected number to be <=100' }],
  },
  READ_400,
  BAD_KB_ID,
];

export const documentFoundExample = { success: true, data: { document: processedDocument } };

export const getDocumentInvalid = [
  READ_400,
  BAD_KB_ID,
  invalid(['documentId'], 'Must be a UUID', 'invalid_format'),
];

export const documentUploadedExample = {
  success: true,
  data: { document: documentExample, message: 'Document handbook.pdf uploaded; processing has started' },
};

export const uploadInvalid = [
  'Send multipart/form-data with a file part and the workspaceId field',
  'The file part is missing',
  invalid(['workspaceId'], 'Invalid UUID', 'invalid_format'),
];

export const uploadDuplicate =
  `This knowledge base already holds the same content: document ${EX.documentId} ("handbook.pdf"). ` +
  'Send the field allowDuplicate=true to upload it anyway';

export const uploadTooLarge = [
  'File over the size limit of 104857600 bytes',
  'Storage limit reached: 4999990000 of 5000000000 bytes used and this document has 48213 (free plan)',
];

export const uploadUnsupported = `Unsupported document type (image/png, x.png): upload ${SUPPORTED_DOCUMENT_TYPES}`;

// --- Create, get, delete a knowledge base -------------------------------------------------------

export const createKnowledgeRequest = {
  workspaceId: EX.workspaceId,
  name: 'Handbook',
  description: 'Company policies',
  chunkingConfig: { maxSize: 1024, minSize: 100, overlap: 200 },
};

export const knowledgeBaseCreatedExample = {
  success: true,
  data: {
    knowledgeBase: { ...knowledgeBaseExample, docCount: 0, tokenCount: 0 },
    message: 'Knowledge base Handbook created',
  },
};

export const createKnowledgeInvalid = [
  invalid(['name'], 'Too small: expected string to have >=1 characters', 'too_small', 'Invalid request body'),
  invalid(['chunkingConfig', 'overlap'], 'Must be less than maxSize'),
  invalid(
    ['embeddingModel'],
    'This service embeds with local-hashed-ngrams-v1; other-model is not configured',
  ),
];

export const knowledgeBaseFoundExample = { success: true, data: { knowledgeBase: knowledgeBaseExample } };

/** A write that names a workspace in the body: the 400 of a malformed one. */
export const WRITE_400 = invalid(['workspaceId'], 'Invalid UUID', 'invalid_format', 'Invalid request body');

export const deleteKnowledgeRequest = { workspaceId: EX.workspaceId };

export const knowledgeBaseDeletedExample = {
  success: true,
  data: {
    id: EX.knowledgeBaseId,
    deletedDocuments: 1,
    message: 'Knowledge base deleted with 1 document(s)',
  },
};

// --- Delete and reprocess a document ------------------------------------------------------------

export const documentWriteRequest = { workspaceId: EX.workspaceId };

export const documentDeletedExample = {
  success: true,
  data: { documentId: EX.documentId, message: 'Document deleted' },
};

export const documentReprocessedExample = {
  success: true,
  data: {
    document: { ...processedDocument, processingStatus: 'pending' },
    message: 'Document handbook.pdf is being processed again',
  },
};
