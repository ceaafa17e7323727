// The chunks of a document's live generation as users see and edit them over the public API: a
// page of them, one added (at the end), one changed (content, enabled), one deleted. Edits keep
// the document's chunkCount and tokenCount true. Only a `completed` document's chunks are edited:
// while a new generation is pending or processing it would replace them, edits and all (409).
// Reprocessing a document rebuilds its chunks from its stored file: edits are not kept.
import { conflict, notFound } from '../../errors.ts';
import type { Actor } from '../audit-logs.ts';
import type { Queryable } from '../client.ts';
import { vectorLiteral } from '../vectors.ts';
import { auditDocument, type DocumentScope, getDocument } from './documents.ts';

export const MAX_CHUNK_CHARS = 10_000;

export interface KnowledgeChunk {
  id: number;
  documentId: string;
  chunkIndex: number;
  content: string;
  contentLength: number;
  tokenCount: number;
  enabled: boolean;
}

type ChunkRow = {
  id: number | string;
  document_id: string;
  chunk_index: number;
  content: string;
  token_count: number;
  enabled: boolean;
};

const toChunk = (r: ChunkRow): KnowledgeChunk => ({
  id: Number(r.id),
  documentId: r.document_id,
  chunkIndex: r.chunk_index,
  content: r.content,
  contentLength: r.content.length,
  tokenCount: r.token_count,
  enabled: r.enabled,
});

const CHUNK_COLUMNS = 'c.id, c.document_id, c.chunk_index, c.content, c.token_count, c.enabled';

export interface ChunkQuery {
  limit: number;
  offset: number;
  enabled: 'all' | 'true' | 'false';
  /** Part of the content, any case. */
  search?: string | undefined;
}

/** A page of the live chunks of a document of the scope, in chunk order, and how many match. */
export async function listChunks(
  db: Queryable,
  documentId: string,
  scope: DocumentScope,
  q: ChunkQuery,
): Promise<{ chunks: KnowledgeChunk[]; total: number }> {
  await getDocument(db, { id: documentId, ...scope });
  const where = `c.document_id = $1
     and c.generation = (select d.live_generation from knowledge_documents d where d.id = $1)
     and ($2::boolean is null or c.enabled = $2)
     and ($3::text is null or strpos(lower(c.content), lower($3)) > 0)`;
  const enabled = q.enabled === 'all' ? null : q.enabled === 'true';
  const params = [documentId, enabled, q.search ?? null];
  const [rows, [count]] = await Promise.all([
    db.query<ChunkRow>(
      `select ${CHUNK_COLUMNS} from knowledge_chunks c where ${where}
        order by c.chunk_index, c.id limit $4 offset $5`,
      [...params, q.limit, q.offset],
    ),
    db.query<{ total: number | string }>(
      `select count(*) as total from knowledge_chunks c where ${where}`,
      params,
    ),
  ]);
  return { chunks: rows.map(toChunk), total: Number(count?.total ?? 0) };
}

/** The document, locked for the edit, with its live generation; 409 unless it is completed. */
async function editableDocument(tx: Queryable, documentId: string, scope: DocumentScope) {
  const doc = await getDocument(tx, { id: documentId, ...scope });
  const [row] = await tx.query<{ live_generation: number | null; processing_status: string }>(
    'select live_generation, processing_status from knowledge_documents where id = $1 for no key update',
    [doc.id],
  );
  if (row?.processing_status !== 'completed' || row.live_generation === null) {
    throw conflict(
      `Document ${doc.filename} is ${row?.processing_status ?? 'gone'}: its chunks can be edited once it is completed`,
    );
  }
  return { doc, generation: row.live_generation };
}

/** Moves the document's figures by a chunk and token difference. */
async function adjustFigures(tx: Queryable, documentId: string, chunks: number, tokens: number) {
  await tx.query(
    `update knowledge_documents set chunk_count = chunk_count + $2, token_count = token_count + $3
      where id = $1`,
    [documentId, chunks, tokens],
  );
}

export interface ChunkContent {
  content: string;
  tokenCount: number;
  /** The content's embedding with the knowledge base's model. */
  embedding: Float32Array;
}

/** Adds a chunk after the document's last one. Records knowledge.chunk_added. */
export async function addChunk(
  db: Queryable,
  actor: Actor,
  documentId: string,
  scope: DocumentScope,
  input: ChunkContent & { enabled: boolean },
): Promise<KnowledgeChunk> {
  return db.transaction(async (tx) => {
    const { doc, generation } = await editableDocument(tx, documentId, scope);
    const [row] = await tx.query<ChunkRow>(
      `insert into knowledge_chunks as c (knowledge_base_id, document_id, generation, chunk_index, content,
         token_count, embedding, enabled)
       select $1, $2, $3, coalesce(max(chunk_index) + 1, 0), $4, $5, $6::vector, $7
         from knowledge_chunks where document_id = $2 and generation = $3
       returning ${CHUNK_COLUMNS}`,
      [
        scope.knowledgeBaseId,
        doc.id,
        generation,
        input.content,
        input.tokenCount,
        vectorLiteral(input.embedding),
        input.enabled,
      ],
    );
    const chunk = toChunk(row as ChunkRow);
    await adjustFigures(tx, doc.id, 1, chunk.tokenCount);
    await auditDocument(tx, actor, doc, 'knowledge.chunk_added', { chunkId: chunk.id });
    return chunk;
  });
}

/** The live chunk of the document, locked; 404 for a chunk of another document or generation. */
async function liveChunk(tx: Queryable, documentId: string, generation: number, chunkId: number) {
  const [row] = await tx.query<ChunkRow>(
    `select ${CHUNK_COLUMNS} from knowledge_chunks c
      where c.id = $1 and c.document_id = $2 and c.generation = $3 for update`,
    [chunkId, documentId, generation],
  );
  if (!row) throw notFound('Chunk');
  return toChunk(row);
}

/**
 * Changes a chunk's content (with its new embedding and token count) and/or its enabled flag.
 * Records knowledge.chunk_updated naming what changed.
 */
export async function updateChunk(
  db: Queryable,
  actor: Actor,
  ref: { documentId: string; chunkId: number },
  scope: DocumentScope,
  changes: { content?: ChunkContent | undefined; enabled?: boolean | undefined },
): Promise<KnowledgeChunk> {
  return db.transaction(async (tx) => {
    const { doc, generation } = await editableDocument(tx, ref.documentId, scope);
    const before = await liveChunk(tx, doc.id, generation, ref.chunkId);
    const c = changes.content;
    const [row] = await tx.query<ChunkRow>(
      `update knowledge_chunks c
          set content = coalesce($2, content), token_count = coalesce($3, token_count),
              embedding = coalesce($4::vector, embedding), enabled = coalesce($5, enabled)
        where id = $1 returning ${CHUNK_COLUMNS}`,
      [
        before.id,
        c?.content ?? null,
        c?.tokenCount ?? null,
        c ? vectorLiteral(c.embedding) : null,
        changes.enabled ?? null,
      ],
    );
    const chunk = toChunk(row as ChunkRow);
    if (chunk.tokenCount !== before.tokenCount) {
      await adjustFigures(tx, doc.id, 0, chunk.tokenCount - before.tokenCount);
    }
    await auditDocument(tx, actor, doc, 'knowledge.chunk_updated', {
      chunkId: chunk.id,
      changed: [...(c ? ['content'] : []), ...(changes.enabled !== undefined ? ['enabled'] : [])],
    });
    return chunk;
  });
}

/** Deletes a chunk (the others keep their index). Records knowledge.chunk_deleted. */
export async function deleteChunk(
  db: Queryable,
  actor: Actor,
  ref: { documentId: string; chunkId: number },
  scope: DocumentScope,
): Promise<void> {
  await db.transaction(async (tx) => {
    const { doc, generation } = await editableDocument(tx, ref.documentId, scope);
    const chunk = await liveChunk(tx, doc.id, generation, ref.chunkId);
    await tx.query('delete from knowledge_chunks where id = $1', [chunk.id]);
    await adjustFigures(tx, doc.id, -1, -chunk.tokenCount);
    await auditDocument(tx, actor, doc, 'knowledge.chunk_deleted', { chunkId: chunk.id });
  });
}
