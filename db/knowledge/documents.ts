// Knowledge documents: the record of each file uploaded to a knowledge base (its bytes are in
// storage), the listing the API pages through, and what users do to a document (enable, process
// again, delete). What the runners do to it is ./ingestion.ts.
import { conflict, notFound } from '../../errors.ts';
import { type Actor, recordAudit } from '../audit-logs.ts';
import type { Queryable } from '../client.ts';
import { isUuid } from '../ids.ts';
import { reserveStorage } from '../storage-quota.ts';
import type { IngestJob } from './bases.ts';
import { compileTagFilters, type TagFilter } from './tag-filters.ts';
import type { TagDefinition } from './tags.ts';

export type ProcessingStatus = 'pending' | 'processing' | 'completed' | 'failed';

/** A document as the API shows it. */
export interface KnowledgeDocument {
  id: string;
  knowledgeBaseId: string;
  filename: string;
  fileSize: number;
  mimeType: string;
  processingStatus: ProcessingStatus;
  /** Why processing failed; null unless failed. */
  processingError: string | null;
  chunkCount: number;
  tokenCount: number;
  enabled: boolean;
  createdAt: string;
  /** The same instant as createdAt, under the name the listing sorts by. */
  uploadedAt: string;
  processingStartedAt: string | null;
  processedAt: string | null;
}

export type DocumentRow = {
  id: string;
  knowledge_base_id: string;
  workspace_id: string;
  filename: string;
  file_size: number | string;
  mime_type: string;
  storage_key: string;
  processing_status: ProcessingStatus;
  processing_error: string | null;
  chunk_count: number;
  token_count: number;
  enabled: boolean;
  created_at: Date;
  processing_started_at: Date | null;
  processed_at: Date | null;
};

export const toDocument = (r: DocumentRow): KnowledgeDocument => ({
  id: r.id,
  knowledgeBaseId: r.knowledge_base_id,
  filename: r.filename,
  fileSize: Number(r.file_size),
  mimeType: r.mime_type,
  processingStatus: r.processing_status,
  processingError: r.processing_error,
  chunkCount: r.chunk_count,
  tokenCount: r.token_count,
  enabled: r.enabled,
  createdAt: r.created_at.toISOString(),
  uploadedAt: r.created_at.toISOString(),
  processingStartedAt: r.processing_started_at?.toISOString() ?? null,
  processedAt: r.processed_at?.toISOString() ?? null,
});

export interface NewDocument {
  knowledgeBaseId: string;
  workspaceId: string;
  filename: string;
  fileSize: number;
  mimeType: string;
  storageKey: string;
  /** The SHA-256 of the bytes, hex. */
  contentSha256: string;
  /** Accept the content even when the knowledge base already holds it. */
  allowDuplicate: boolean;
}

/**
 * The 409 for content the knowledge base already holds: every search hit would show twice. Names
 * the document that holds it, and the way on (the public API deletes no documents).
 */
const duplicate = (holder: { id: string; filename: string }) =>
  conflict(
    `This knowledge base already holds the same content: document ${holder.id} ("${holder.filename}"). ` +
      'Send the field allowDuplicate=true to upload it anyway',
  );

/**
 * Refuses content the knowledge base already holds in a document that did not fail (a failed one
 * is never searched, so uploading its content again is how it is retried). Under a lock on the
 * (knowledge base, hash) pair until the caller's transaction ends, so of two racing uploads of one
 * content the second sees the first.
 */
async function assertNewContent(tx: Queryable, knowledgeBaseId: string, sha256: string) {
  await tx.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [
    `knowledge-content:${knowledgeBaseId}:${sha256}`,
  ]);
  const [holder] = await tx.query<{ id: string; filename: string }>(
    `select id, filename from knowledge_documents
      where knowledge_base_id = $1 and content_sha256 = $2 and processing_status <> 'failed'
      order by created_at, id limit 1`,
    [knowledgeBaseId, sha256],
  );
  if (holder) throw duplicate(holder);
}

/**
 * Records an uploaded document (pending, nothing processed yet) under the storage quota of whoever
 * the workspace is billed to (413); refuses content the knowledge base already holds (409) unless
 * allowed. Answers the document with its first ingestion job, which the caller sends in the same
 * transaction. Records knowledge.document_uploaded.
 */
export async function createDocument(
  db: Queryable,
  actor: Actor,
  input: NewDocument,
): Promise<{ document: KnowledgeDocument; job: IngestJob }> {
  return db.transaction(async (tx) => {
    const { organizationId } = await reserveStorage(tx, input.workspaceId, input.fileSize, 'this document');
    if (!input.allowDuplicate) await assertNewContent(tx, input.knowledgeBaseId, input.contentSha256);
    const [row] = await tx.query<DocumentRow>(
      `insert into knowledge_documents (knowledge_base_id, workspace_id, filename, file_size, mime_type,
         storage_key, uploaded_by, content_sha256)
       select k.id, k.workspace_id, $3, $4, $5, $6, $7, $8 from knowledge_bases k
        where k.id = $1 and k.workspace_id = $2
       returning *`,
      [
        input.knowledgeBaseId,
        input.workspaceId,
        input.filename,
        input.fileSize,
        input.mimeType,
        input.storageKey,
        actor.userId,
        input.contentSha256,
      ],
    );
    if (!row) throw notFound('Knowledge base');
    const document = toDocument(row);
    await recordAudit(tx, actor, {
      organizationId,
      workspaceId: input.workspaceId,
      action: 'knowledge.document_uploaded',
      resourceType: 'knowledge_document',
      resourceId: document.id,
      metadata: {
        knowledgeBaseId: input.knowledgeBaseId,
        filename: document.filename,
        fileSize: document.fileSize,
        mimeType: document.mimeType,
        contentSha256: input.contentSha256,
        ...(input.allowDuplicate ? { allowDuplicate: true } : {}),
      },
    });
    return { document, job: { documentId: document.id, generation: 1 } };
  });
}

export const DOCUMENT_SORTS = [
  'filename',
  'fileSize',
  'tokenCount',
  'chunkCount',
  'uploadedAt',
  'processingStatus',
  'enabled',
] as const;
export type DocumentSort = (typeof DOCUMENT_SORTS)[number];

// Column names come from this map only, never from the request.
const SORT_COLUMN: Record<DocumentSort, string> = {
  filename: 'filename',
  fileSize: 'file_size',
  tokenCount: 'token_count',
  chunkCount: 'chunk_count',
  uploadedAt: 'created_at',
  processingStatus: 'processing_status',
  enabled: 'enabled',
};

const ENABLED_CLAUSE = { all: 'true', enabled: 'd.enabled', disabled: 'not d.enabled' } as const;

export interface DocumentQuery {
  limit: number;
  offset: number;
  /** Part of the file name, any case. */
  search?: string;
  enabledFilter: keyof typeof ENABLED_CLAUSE;
  sortBy: DocumentSort;
  sortOrder: 'asc' | 'desc';
}

/**
 * A page of a knowledge base's documents, and how many match in all. Tag filters (compiled by
 * compileTagFilters against the base's definitions) keep the documents whose values pass them all.
 */
export async function listDocuments(
  db: Queryable,
  knowledgeBaseId: string,
  q: DocumentQuery,
  tagFilters: { filters: readonly TagFilter[]; tags: readonly TagDefinition[] } = { filters: [], tags: [] },
): Promise<{ documents: KnowledgeDocument[]; total: number }> {
  const params: unknown[] = [knowledgeBaseId, q.search ?? null];
  const tagged = compileTagFilters(
    tagFilters.filters,
    [{ id: knowledgeBaseId, tags: tagFilters.tags }],
    params,
  );
  const where = `d.knowledge_base_id = $1 and ${ENABLED_CLAUSE[q.enabledFilter]}
     and ($2::text is null or strpos(lower(d.filename), lower($2)) > 0) and ${tagged}`;
  const order = q.sortOrder === 'asc' ? 'asc' : 'desc';
  const n = params.length;
  const [rows, [count]] = await Promise.all([
    db.query<DocumentRow>(
      `select d.* from knowledge_documents d where ${where}
        order by d.${SORT_COLUMN[q.sortBy]} ${order}, d.id ${order} limit $${n + 1} offset $${n + 2}`,
      [...params, q.limit, q.offset],
    ),
    db.query<{ total: number | string }>(
      `select count(*) as total from knowledge_documents d where ${where}`,
      params,
    ),
  ]);
  return { documents: rows.map(toDocument), total: Number(count?.total ?? 0) };
}

/** The document, or 404; with a workspace (and a knowledge base), only when the document is in it. */
export async function getDocument(
  db: Queryable,
  ref: { id: string; workspaceId?: string; knowledgeBaseId?: string },
): Promise<KnowledgeDocument & { workspaceId: string }> {
  if (!isUuid(ref.id)) throw notFound('Document');
  const [row] = await db.query<DocumentRow>(
    `select * from knowledge_documents where id = $1 and ($2::uuid is null or workspace_id = $2)
        and ($3::uuid is null or knowledge_base_id = $3)`,
    [ref.id, ref.workspaceId ?? null, ref.knowledgeBaseId ?? null],
  );
  if (!row) throw notFound('Document');
  return { ...toDocument(row), workspaceId: row.workspace_id };
}

/** A document of a knowledge base of a workspace, as the document list shows it; 404 when not in both. */
export async function getBaseDocument(
  db: Queryable,
  ref: { id: string; workspaceId: string; knowledgeBaseId: string },
): Promise<KnowledgeDocument> {
  const { workspaceId: _, ...document } = await getDocument(db, ref);
  return document;
}

/** Where a document must be for an operation on it to find it (404 otherwise). */
export interface DocumentScope {
  workspaceId: string;
  knowledgeBaseId: string;
}

export async function auditDocument(
  tx: Queryable,
  actor: Actor,
  doc: { id: string; workspaceId: string; knowledgeBaseId: string },
  action: `knowledge.${string}`,
  metadata: Record<string, unknown>,
) {
  const [ws] = await tx.query<{ organization_id: string }>(
    'select organization_id from workspaces where id = $1',
    [doc.workspaceId],
  );
  await recordAudit(tx, actor, {
    organizationId: (ws as { organization_id: string }).organization_id,
    workspaceId: doc.workspaceId,
    action,
    resourceType: 'knowledge_document',
    resourceId: doc.id,
    metadata: { knowledgeBaseId: doc.knowledgeBaseId, ...metadata },
  });
}

/** Includes a document in searches, or leaves it out. Records knowledge.document_enabled / _disabled. */
export async function setDocumentEnabled(
  db: Queryable,
  actor: Actor,
  input: { documentId: string; enabled: boolean },
): Promise<KnowledgeDocument> {
  return db.transaction(async (tx) => {
    const doc = await getDocument(tx, { id: input.documentId });
    const [row] = await tx.query<DocumentRow>(
      'update knowledge_documents set enabled = $2 where id = $1 returning *',
      [doc.id, input.enabled],
    );
    await auditDocument(tx, actor, doc, `knowledge.document_${input.enabled ? 'enabled' : 'disabled'}`, {});
    return toDocument(row as DocumentRow);
  });
}

/**
 * Asks for the document to be processed again (a new generation), answering its job; its current
 * chunks answer searches until the new ones are in. Records knowledge.document_reprocessed.
 */
export async function reprocessDocument(
  db: Queryable,
  actor: Actor,
  documentId: string,
  scope?: DocumentScope,
): Promise<{ document: KnowledgeDocument; job: IngestJob }> {
  return db.transaction(async (tx) => {
    const doc = await getDocument(tx, { id: documentId, ...scope });
    const [row] = await tx.query<DocumentRow>(
      `update knowledge_documents
          set target_generation = target_generation + 1, processing_status = 'pending',
              processing_error = null, attempts = 0
        where id = $1 returning *`,
      [doc.id],
    );
    const updated = row as DocumentRow & { target_generation: number };
    await auditDocument(tx, actor, doc, 'knowledge.document_reprocessed', {});
    return {
      document: toDocument(updated),
      job: { documentId: doc.id, generation: updated.target_generation },
    };
  });
}

/**
 * Deletes a document and its chunks; answers its storage key, whose bytes the caller removes once
 * this has committed. Records knowledge.document_deleted.
 */
export async function deleteDocument(
  db: Queryable,
  actor: Actor,
  documentId: string,
  scope?: DocumentScope,
): Promise<{ storageKey: string }> {
  return db.transaction(async (tx) => {
    const doc = await getDocument(tx, { id: documentId, ...scope });
    const [row] = await tx.query<{ storage_key: string }>(
      'delete from knowledge_documents where id = $1 returning storage_key',
      [doc.id],
    );
    await auditDocument(tx, actor, doc, 'knowledge.document_deleted', { filename: doc.filename });
    return { storageKey: (row as { storage_key: string }).storage_key };
  });
}
