// /api/v1/knowledge/{id}/documents: list a base's documents (7), read one, and upload a document to
// it (8: multipart, streamed to storage and hashed, then processed by the runners from
// `knowledge-ingest`; content the base already holds is refused unless the upload allows it).
import { createRoute } from '@hono/zod-openapi';
import type { Handler } from 'hono';
import { authorizeResource, type WorkspaceAccess } from '../../../db/access.ts';
import { checkFileName, MAX_FILE_BYTES } from '../../../db/files.ts';
import { requireKnowledgeBase } from '../../../db/knowledge/bases.ts';
import { tagsOfDocuments } from '../../../db/knowledge/document-updates.ts';
import { createDocument, getBaseDocument, listDocuments } from '../../../db/knowledge/documents.ts';
import { ServiceError } from '../../../errors.ts';
import { sendIngestJobs } from '../../../jobs/ingest-jobs.ts';
import {
  documentKindOf,
  documentMediaType,
  SUPPORTED_DOCUMENT_TYPES,
} from '../../../runner/ingestion/document-types.ts';
import type { StorageDriver } from '../../../storage/driver.ts';
import { receiveUpload } from '../../../storage/multipart-upload.ts';
import type { ApiDeps, ApiEnv } from '../../context.ts';
import { uploadFields, uuidFromPath } from '../../middleware/validate.ts';
import { API_RATE_LIMITED, idempotencyHeaders, ok, RESOURCE_WRITE_DENIED } from '../../openapi/components.ts';
import { errors, withIdempotency } from '../../openapi/error-answers.ts';
import type { Router } from '../router.ts';
import {
  documentFound,
  documentPage,
  documentParams,
  documentUploaded,
  getDocumentQuery,
  listDocumentsQuery,
  uploadDocumentFields,
  uploadForm,
} from './document-schemas.ts';
import { createTextDocument, textDocumentBody, textDocumentRequest } from './document-text.ts';
import {
  documentFoundExample,
  documentPageExample,
  documentUploadedExample,
  getDocumentInvalid,
  listDocumentsInvalid,
  uploadDuplicate,
  uploadInvalid,
  uploadTooLarge,
  uploadUnsupported,
} from './examples.ts';
import { knowledgeBaseParams } from './schemas.ts';
import { documentTagFilters } from './tag-query.ts';

/** What the document routes use besides the API's own: uploads are stored. */
export type DocumentDeps = ApiDeps & { storage: StorageDriver };

const tags = ['Knowledge'];
const PERSONAL_KEYS_OFF = 'Personal API keys are disabled in this workspace; use a workspace key';

export const listDocumentsRoute = createRoute({
  method: 'get',
  path: '/api/v1/knowledge/{id}/documents',
  operationId: 'listKnowledgeDocuments',
  scope: 'knowledge:read' as const,
  tags,
  summary: 'List documents of a knowledge base',
  description:
    'A page of documents. `tag.<name>=<value>` (repeatable, with different names) keeps the documents whose tag ' +
    'equals the value: text ignoring case, numbers and dates as such, booleans as `true` / `false`.',
  request: { params: knowledgeBaseParams, query: listDocumentsQuery },
  responses: {
    200: ok(
      { description: 'A page of documents', schema: documentPage, example: documentPageExample },
      'api',
    ),
    ...errors(
      {
        400: listDocumentsInvalid,
        403: PERSONAL_KEYS_OFF,
        404: 'Knowledge base not found',
        429: API_RATE_LIMITED,
      },
      { metering: 'api' },
    ),
  },
});

export const getDocumentRoute = createRoute({
  method: 'get',
  path: '/api/v1/knowledge/{id}/documents/{documentId}',
  operationId: 'getKnowledgeDocument',
  scope: 'knowledge:read' as const,
  tags,
  summary: 'Get a document of a knowledge base',
  description:
    'One document, as the document list shows it: poll it after an upload to see its processingStatus. ' +
    'A document of another knowledge base, or of another workspace, is not found.',
  request: { params: documentParams, query: getDocumentQuery },
  responses: {
    200: ok({ description: 'The document', schema: documentFound, example: documentFoundExample }, 'api'),
    ...errors(
      {
        400: getDocumentInvalid,
        403: PERSONAL_KEYS_OFF,
        404: ['Document not found', 'Knowledge base not found'],
        429: API_RATE_LIMITED,
      },
      { metering: 'api' },
    ),
  },
});

// A plain route (Router.plain): the handler streams the form itself, so the Router validates none of
// it; the body is documented for clients.
export const uploadDocumentRoute = createRoute({
  method: 'post',
  path: '/api/v1/knowledge/{id}/documents',
  operationId: 'uploadKnowledgeDocument',
  scope: 'knowledge:write' as const,
  tags,
  summary: 'Upload a document',
  description:
    'Stores the file (streamed, at most 100 MB) and answers the document `pending`; runners then parse, ' +
    'chunk and embed it, and mark it `completed` (or `failed` with processingError). Content the knowledge ' +
    'base already holds (the same bytes, by SHA-256) is a 409 naming that document, unless `allowDuplicate` is `true`. ' +
    'With `Content-Type: application/json`, `{workspaceId, name, text}` creates the document from text instead ' +
    '(stored as its UTF-8 bytes; the same processing, quota and duplicate rules).',
  request: {
    params: knowledgeBaseParams,
    headers: idempotencyHeaders,
    body: {
      required: true,
      content: {
        'multipart/form-data': { schema: uploadForm },
        'application/json': { schema: textDocumentBody, example: textDocumentRequest },
      },
    },
  },
  responses: {
    200: ok(
      { description: 'The document, pending', schema: documentUploaded, example: documentUploadedExample },
      'api',
      { idempotent: true },
    ),
    ...errors(
      withIdempotency({
        400: uploadInvalid,
        403: RESOURCE_WRITE_DENIED,
        404: 'Knowledge base not found',
        409: uploadDuplicate,
        413: uploadTooLarge,
        415: uploadUnsupported,
        429: API_RATE_LIMITED,
      }),
      { metering: 'api', retryAfter: [409] },
    ),
  },
});

/** Adds the document operations to the knowledge router. */
export function withDocumentRoutes(router: Router, deps: DocumentDeps): Router {
  const { db } = deps;
  return router
    .openapi(listDocumentsRoute, async (c) => {
      const { id } = c.req.valid('param');
      const q = c.req.valid('query');
      const access = await authorizeResource(db, c.get('principal'), q.workspaceId, 'read', 'Knowledge base');
      await requireKnowledgeBase(db, { id, workspaceId: access.workspace.id });
      const filters = await documentTagFilters(db, id, c.req.queries());
      const page = await listDocuments(db, id, q, filters);
      const tagsOf = await tagsOfDocuments(
        db,
        id,
        page.documents.map((d) => d.id),
      );
      const documents = page.documents.map((d) => ({ ...d, tags: tagsOf.get(d.id) ?? {} }));
      const total = page.total;
      const pagination = {
        total,
        limit: q.limit,
        offset: q.offset,
        hasMore: q.offset + documents.length < total,
      };
      return c.json({ success: true as const, data: { documents, pagination } }, 200);
    })
    .openapi(getDocumentRoute, async (c) => {
      const { id, documentId } = c.req.valid('param');
      const { workspaceId } = c.req.valid('query');
      const access = await authorizeResource(db, c.get('principal'), workspaceId, 'read', 'Knowledge base');
      await requireKnowledgeBase(db, { id, workspaceId: access.workspace.id });
      const found = await getBaseDocument(db, {
        id: documentId,
        workspaceId: access.workspace.id,
        knowledgeBaseId: id,
      });
      const tags = (await tagsOfDocuments(db, id, [found.id])).get(found.id) ?? {};
      return c.json({ success: true as const, data: { document: { ...found, tags } } }, 200);
    })
    .plain(uploadDocumentRoute, uploadDocument(deps));
}

function checkKind(filename: string, mimeType: string) {
  const kind = documentKindOf(filename, mimeType);
  if (!kind) {
    throw new ServiceError(
      415,
      `Unsupported document type (${mimeType || 'unknown'}, ${filename}): upload ${SUPPORTED_DOCUMENT_TYPES}`,
    );
  }
  return kind;
}

/** The upload: the form is streamed to storage as it arrives, the caller judged as soon as it can be. */
function uploadDocument(deps: DocumentDeps): Handler<ApiEnv> {
  const { db, log, queue, storage } = deps;
  return async (c) => {
    // The Router validates no part of a plain route: the path parameter is checked here, first.
    const id = uuidFromPath(c, 'id', 'knowledgeBaseId');
    const mediaType = c.req.header('content-type')?.split(';', 1)[0]?.trim().toLowerCase();
    if (mediaType === 'application/json') return createTextDocument(c, deps, id);
    const principal = c.get('principal');
    let access: WorkspaceAccess | undefined;
    const reach = async (workspaceId: string) => {
      const a = await authorizeResource(db, principal, workspaceId, 'write', 'Knowledge base');
      await requireKnowledgeBase(db, { id, workspaceId: a.workspace.id });
      return a;
    };
    const upload = await receiveUpload(c.req.raw.body, c.req.header('content-type'), {
      storage,
      maxBytes: MAX_FILE_BYTES,
      fileField: 'file',
      // Refused before a byte is stored when the workspace field comes first.
      async onFile(fields, name, declaredType) {
        checkFileName(name);
        checkKind(name, declaredType);
        if (fields.workspaceId === undefined) return null;
        access = await reach(uploadFields(uploadDocumentFields, fields).workspaceId);
        return access.workspace.id;
      },
    });
    try {
      const { workspaceId, allowDuplicate } = uploadFields(uploadDocumentFields, upload.fields);
      const reached = access ?? (await reach(workspaceId));
      const kind = checkKind(upload.file.name, upload.file.type);
      const { document } = await db.transaction(async (tx) => {
        const created = await createDocument(tx, reached.actor, {
          knowledgeBaseId: id,
          workspaceId: reached.workspace.id,
          filename: upload.file.name,
          fileSize: upload.file.size,
          mimeType: documentMediaType(kind, upload.file.type),
          storageKey: upload.file.key,
          contentSha256: upload.file.sha256,
          allowDuplicate: allowDuplicate === 'true',
        });
        await sendIngestJobs(queue, tx, [created.job]);
        return created;
      });
      return c.json({
        success: true,
        data: { document, message: `Document ${document.filename} uploaded; processing has started` },
      });
    } catch (err) {
      await storage.delete(upload.file.key).catch((cause: unknown) => {
        log.error('could not delete the bytes of a refused upload', { key: upload.file.key, err: cause });
      });
      throw err;
    }
  };
}
