// /api/v1/knowledge: list a workspace's knowledge bases (4), update one (5; a new chunking config
// re-processes its documents), search them (6), list a base's documents (7), read one, and upload a
// document to it (8: multipart, streamed to storage and hashed, then processed by the runners from
// `knowledge-ingest`; content the base already holds is refused unless the upload allows it).
// Reads name the workspace in the query and need read permission; writes name it in the body (or
// the upload's workspaceId field) and need write permission. A base outside that workspace is not
// found.
import { Hono } from 'hono';
import { z } from 'zod';
import { authorizeResource, authorizeWorkspace, type WorkspaceAccess } from '../../db/access.ts';
import { checkFileName, MAX_FILE_BYTES } from '../../db/files.ts';
import {
  chunkingConfigPatchSchema,
  knowledgeDescriptionSchema,
  knowledgeNameSchema,
  listKnowledgeBases,
  requireKnowledgeBase,
  updateKnowledgeBase,
} from '../../db/knowledge/bases.ts';
import {
  createDocument,
  DOCUMENT_SORTS,
  getBaseDocument,
  listDocuments,
} from '../../db/knowledge/documents.ts';
import { knowledgeSearchRequest, searchKnowledge } from '../../db/knowledge/search.ts';
import { isStorableText } from '../../db/tables/values.ts';
import { invalidField, ServiceError } from '../../errors.ts';
import { sendIngestJobs } from '../../jobs/ingest-jobs.ts';
import type { Embedders } from '../../runner/embeddings/embedder.ts';
import {
  documentKindOf,
  documentMediaType,
  SUPPORTED_DOCUMENT_TYPES,
} from '../../runner/ingestion/document-types.ts';
import type { StorageDriver } from '../../storage/driver.ts';
import { receiveUpload } from '../../storage/multipart-upload.ts';
import type { ApiDeps, ApiEnv } from '../context.ts';
import { jsonBody, queryParams, uuidParam, wholeNumberParam } from '../middleware/validate.ts';

export const listKnowledgeQuery = z.object({ workspaceId: z.uuid() });

export const updateKnowledgeBody = z
  .object({
    workspaceId: z.uuid(),
    name: knowledgeNameSchema.optional(),
    description: knowledgeDescriptionSchema.optional(),
    chunkingConfig: chunkingConfigPatchSchema.optional(),
  })
  .refine((b) => b.name !== undefined || b.description !== undefined || b.chunkingConfig !== undefined, {
    path: ['name'],
    message: 'Give at least one of name, description and chunkingConfig',
  });

export const listDocumentsQuery = z.object({
  workspaceId: z.uuid(),
  limit: wholeNumberParam(1, 100).default(50),
  offset: wholeNumberParam(0, Number.MAX_SAFE_INTEGER).default(0),
  // Postgres text holds no NUL: refused as a 400 rather than failing as a 500.
  search: z.string().max(255).refine(isStorableText, 'Not storable text').optional(),
  enabledFilter: z.enum(['all', 'enabled', 'disabled']).default('all'),
  sortBy: z.enum(DOCUMENT_SORTS).default('uploadedAt'),
  sortOrder: z.enum(['asc', 'desc']).default('desc'),
});

export const getDocumentQuery = z.object({ workspaceId: z.uuid() });

/** The text fields of an upload (others are ignored); the file part is named `file`. */
export const uploadDocumentFields = z.object({
  workspaceId: z.uuid(),
  // Form fields are text: the two words, nothing looser, so a typo is a 400 rather than a silent "no".
  allowDuplicate: z.enum(['true', 'false']).optional(),
});

function parseFields(fields: Record<string, string>) {
  const r = uploadDocumentFields.safeParse(fields);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw invalidField(String(issue?.path[0] ?? 'workspaceId'), issue?.message ?? 'Invalid', issue?.code);
  }
  return r.data;
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

export function knowledgeRoutes({
  db,
  log,
  queue,
  storage,
  embedders,
}: ApiDeps & { storage: StorageDriver; embedders: Embedders }) {
  return new Hono<ApiEnv>()
    .get('/', async (c) => {
      const q = queryParams(c, listKnowledgeQuery);
      const access = await authorizeWorkspace(db, c.get('principal'), q.workspaceId, 'read');
      const knowledgeBases = await listKnowledgeBases(db, access.workspace.id);
      return c.json({ success: true, data: { knowledgeBases, totalCount: knowledgeBases.length } });
    })
    .post('/search', async (c) => {
      const body = await jsonBody(c, knowledgeSearchRequest);
      const access = await authorizeWorkspace(db, c.get('principal'), body.workspaceId, 'read');
      const data = await searchKnowledge(
        db,
        (model, query) => embedders.get(model).embedQuery(query),
        access.workspace.id,
        body,
      );
      return c.json({ success: true, data });
    })
    .put('/:id', async (c) => {
      const id = uuidParam(c, 'id', 'knowledgeBaseId');
      const { workspaceId, ...changes } = await jsonBody(c, updateKnowledgeBody);
      const access = await authorizeResource(db, c.get('principal'), workspaceId, 'write', 'Knowledge base');
      const { knowledgeBase, jobs } = await db.transaction(async (tx) => {
        const updated = await updateKnowledgeBase(tx, access.actor, { id, workspaceId }, changes);
        await sendIngestJobs(queue, tx, updated.jobs);
        return updated;
      });
      const message = jobs.length
        ? `Knowledge base updated; ${jobs.length} document(s) are being processed again with the new chunking config`
        : 'Knowledge base updated';
      return c.json({ success: true, data: { knowledgeBase, message } });
    })
    .get('/:id/documents', async (c) => {
      const id = uuidParam(c, 'id', 'knowledgeBaseId');
      const q = queryParams(c, listDocumentsQuery);
      const access = await authorizeResource(db, c.get('principal'), q.workspaceId, 'read', 'Knowledge base');
      await requireKnowledgeBase(db, { id, workspaceId: access.workspace.id });
      const { documents, total } = await listDocuments(db, id, q);
      return c.json({
        success: true,
        data: {
          documents,
          pagination: {
            total,
            limit: q.limit,
            offset: q.offset,
            hasMore: q.offset + documents.length < total,
          },
        },
      });
    })
    .get('/:id/documents/:documentId', async (c) => {
      const id = uuidParam(c, 'id', 'knowledgeBaseId');
      const documentId = uuidParam(c, 'documentId');
      const q = queryParams(c, getDocumentQuery);
      const access = await authorizeResource(db, c.get('principal'), q.workspaceId, 'read', 'Knowledge base');
      await requireKnowledgeBase(db, { id, workspaceId: access.workspace.id });
      const document = await getBaseDocument(db, {
        id: documentId,
        workspaceId: access.workspace.id,
        knowledgeBaseId: id,
      });
      return c.json({ success: true, data: { document } });
    })
    .post('/:id/documents', async (c) => {
      const id = uuidParam(c, 'id', 'knowledgeBaseId');
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
          access = await reach(parseFields(fields).workspaceId);
          return access.workspace.id;
        },
      });
      try {
        const { workspaceId, allowDuplicate } = parseFields(upload.fields);
        access ??= await reach(workspaceId);
        const kind = checkKind(upload.file.name, upload.file.type);
        const actor = access.actor;
        const { document } = await db.transaction(async (tx) => {
          const created = await createDocument(tx, actor, {
            knowledgeBaseId: id,
            workspaceId: access?.workspace.id as string,
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
    });
}
