// What a user changes on documents through the public API: one document's enabled flag, file name
// and tag values in one transaction (PATCH), and enable / disable / delete of many by id (the bulk
// PATCH). Every document named must be in the given knowledge base of the given workspace, or
// nothing changes (404 naming the ids not found).
import { invalidField, ServiceError } from '../../errors.ts';
import type { Actor } from '../audit-logs.ts';
import type { Queryable } from '../client.ts';
import { isUuid } from '../ids.ts';
import {
  auditDocument,
  type DocumentRow,
  type DocumentScope,
  getDocument,
  type KnowledgeDocument,
  toDocument,
} from './documents.ts';
import { documentTags, listTags, setDocumentTags, type TagValue } from './tags.ts';

export interface DocumentChanges {
  enabled?: boolean | undefined;
  filename?: string | undefined;
  tags?: Record<string, unknown> | undefined;
}

/**
 * Applies the changes to a document of the scope, all or none: a bad tag refuses the enabled flag
 * and name with it. Records knowledge.document_enabled / _disabled (when the flag changes),
 * knowledge.document_renamed and knowledge.document_tags_set. Answers the document and all its tags.
 */
export async function updateDocument(
  db: Queryable,
  actor: Actor,
  documentId: string,
  scope: DocumentScope,
  changes: DocumentChanges,
): Promise<{ document: KnowledgeDocument; tags: Record<string, TagValue> }> {
  return db.transaction(async (tx) => {
    const doc = await getDocument(tx, { id: documentId, ...scope });
    // Row lock first: a concurrent PATCH of the same document waits rather than interleaving.
    await tx.query('select 1 from knowledge_documents where id = $1 for no key update', [doc.id]);
    if (changes.tags !== undefined)
      await setDocumentTags(tx, actor, { documentId: doc.id, tags: changes.tags });
    if (changes.enabled !== undefined && changes.enabled !== doc.enabled) {
      await tx.query('update knowledge_documents set enabled = $2 where id = $1', [doc.id, changes.enabled]);
      await auditDocument(
        tx,
        actor,
        doc,
        `knowledge.document_${changes.enabled ? 'enabled' : 'disabled'}`,
        {},
      );
    }
    if (changes.filename !== undefined && changes.filename !== doc.filename) {
      await tx.query('update knowledge_documents set filename = $2 where id = $1', [
        doc.id,
        changes.filename,
      ]);
      await auditDocument(tx, actor, doc, 'knowledge.document_renamed', {
        from: doc.filename,
        to: changes.filename,
      });
    }
    const [row] = await tx.query<DocumentRow>('select * from knowledge_documents where id = $1', [doc.id]);
    const defs = (await listTags(tx, [scope.knowledgeBaseId])).get(scope.knowledgeBaseId) ?? [];
    return { document: toDocument(row as DocumentRow), tags: documentTags(row ?? {}, defs) };
  });
}

/** The tag values by name of each given document of one knowledge base (documents without any: {}). */
export async function tagsOfDocuments(
  db: Queryable,
  knowledgeBaseId: string,
  documentIds: readonly string[],
): Promise<Map<string, Record<string, TagValue>>> {
  const out = new Map<string, Record<string, TagValue>>(documentIds.map((id) => [id, {}]));
  const defs = (await listTags(db, [knowledgeBaseId])).get(knowledgeBaseId) ?? [];
  if (!defs.length || !documentIds.length) return out;
  const rows = await db.query<Record<string, unknown>>(
    'select * from knowledge_documents where id = any($1::uuid[])',
    [documentIds],
  );
  for (const row of rows) out.set(row.id as string, documentTags(row, defs));
  return out;
}

export const BULK_OPERATIONS = ['enable', 'disable', 'delete'] as const;
export type BulkOperation = (typeof BULK_OPERATIONS)[number];
export const MAX_BULK_DOCUMENTS = 100;

export interface BulkResult {
  operation: BulkOperation;
  successCount: number;
  /** enable / disable: each document with its flag now. */
  updatedDocuments: { id: string; enabled: boolean }[];
  /** delete: the storage keys whose bytes the caller removes once this has committed. */
  storageKeys: string[];
}

/**
 * Enables, disables or deletes the documents (each id once) of the scope in one transaction, each
 * audited as the single-document operation is. An id not in the scope refuses all: 404 whose
 * details name it under `documentIds.<i>`.
 */
export async function bulkUpdateDocuments(
  db: Queryable,
  actor: Actor,
  scope: DocumentScope,
  operation: BulkOperation,
  documentIds: readonly string[],
): Promise<BulkResult> {
  const ids = [...new Set(documentIds)];
  if (ids.length > MAX_BULK_DOCUMENTS) {
    throw invalidField('documentIds', `At most ${MAX_BULK_DOCUMENTS} documents at once`);
  }
  return db.transaction(async (tx) => {
    const found = await tx.query<DocumentRow>(
      `select * from knowledge_documents
        where id = any($1::uuid[]) and workspace_id = $2 and knowledge_base_id = $3
        order by id for no key update`,
      [ids.filter(isUuid), scope.workspaceId, scope.knowledgeBaseId],
    );
    const have = new Set(found.map((r) => r.id));
    const missing = documentIds.flatMap((id, i) =>
      have.has(id) ? [] : [{ code: 'not_found', path: ['documentIds', i], message: `No document ${id}` }],
    );
    if (missing.length) throw new ServiceError(404, 'Document not found', { details: missing });
    const docs = found.map((r) => ({
      ...toDocument(r),
      workspaceId: r.workspace_id,
      storageKey: r.storage_key,
    }));
    if (operation === 'delete') {
      await tx.query('delete from knowledge_documents where id = any($1::uuid[])', [ids]);
      for (const doc of docs) {
        await auditDocument(tx, actor, doc, 'knowledge.document_deleted', {
          filename: doc.filename,
          bulk: true,
        });
      }
      return {
        operation,
        successCount: docs.length,
        updatedDocuments: [],
        storageKeys: docs.map((d) => d.storageKey),
      };
    }
    const enabled = operation === 'enable';
    await tx.query('update knowledge_documents set enabled = $2 where id = any($1::uuid[])', [ids, enabled]);
    for (const doc of docs.filter((d) => d.enabled !== enabled)) {
      await auditDocument(tx, actor, doc, `knowledge.document_${enabled ? 'enabled' : 'disabled'}`, {
        bulk: true,
      });
    }
    return {
      operation,
      successCount: docs.length,
      updatedDocuments: docs.map((d) => ({ id: d.id, enabled })),
      storageKeys: [],
    };
  });
}
