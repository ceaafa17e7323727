// Knowledge ingestion, the runners' side of a document's lifecycle: pending → processing →
// completed | failed. Each (re-)processing produces one generation of chunks; a document's live
// generation is the one searches read, replaced only when a newer one is complete, so a document
// being re-processed keeps answering from its old chunks.
import type { Queryable } from '../client.ts';
import { isSparse, sparseVectorLiteral, vectorLiteral } from '../vectors.ts';
import type { ChunkingConfig, IngestJob } from './bases.ts';

/** What a runner needs to process a document it claimed. */
export interface IngestClaim {
  documentId: string;
  knowledgeBaseId: string;
  generation: number;
  /** 1 for the first attempt at this generation. */
  attempt: number;
  filename: string;
  mimeType: string;
  storageKey: string;
  chunking: ChunkingConfig;
  embeddingModel: string;
}

/**
 * Marks the document processing for this generation and clears what an earlier, interrupted
 * attempt at it left; null when the job is stale (the document is gone, or a newer generation was
 * asked for since) or the generation is already done.
 */
export async function claimDocument(db: Queryable, job: IngestJob): Promise<IngestClaim | null> {
  return db.transaction(async (tx) => {
    const [row] = await tx.query<{
      id: string;
      knowledge_base_id: string;
      attempts: number;
      filename: string;
      mime_type: string;
      storage_key: string;
      chunk_max_tokens: number;
      chunk_min_chars: number;
      chunk_overlap_tokens: number;
      embedding_model: string;
    }>(
      `update knowledge_documents d
          set processing_status = 'processing', processing_started_at = now(), attempts = d.attempts + 1
         from knowledge_bases k
        where d.id = $1 and d.target_generation = $2 and k.id = d.knowledge_base_id
          and d.processing_status in ('pending', 'processing')
      returning d.id, d.knowledge_base_id, d.attempts, d.filename, d.mime_type, d.storage_key,
                k.chunk_max_tokens, k.chunk_min_chars, k.chunk_overlap_tokens, k.embedding_model`,
      [job.documentId, job.generation],
    );
    if (!row) return null;
    await tx.query('delete from knowledge_chunks where document_id = $1 and generation = $2', [
      job.documentId,
      job.generation,
    ]);
    return {
      documentId: row.id,
      knowledgeBaseId: row.knowledge_base_id,
      generation: job.generation,
      attempt: row.attempts,
      filename: row.filename,
      mimeType: row.mime_type,
      storageKey: row.storage_key,
      chunking: {
        maxSize: row.chunk_max_tokens,
        minSize: row.chunk_min_chars,
        overlap: row.chunk_overlap_tokens,
      },
      embeddingModel: row.embedding_model,
    };
  });
}

export interface NewChunk {
  content: string;
  tokenCount: number;
  embedding: Float32Array;
}

/**
 * Stores a batch of a claim's chunks, numbered from `firstIndex`. One statement. Sparse vectors (the
 * local model's) travel as `sparsevec` text: a fifth of the text to write and for Postgres to parse.
 */
export async function insertChunks(
  db: Queryable,
  claim: Pick<IngestClaim, 'documentId' | 'knowledgeBaseId' | 'generation'>,
  firstIndex: number,
  chunks: NewChunk[],
): Promise<void> {
  if (!chunks.length) return;
  const sparse = chunks.every((c) => isSparse(c.embedding));
  await db.query(
    `insert into knowledge_chunks (knowledge_base_id, document_id, generation, chunk_index, content,
       token_count, embedding)
     select $1, $2, $3, $4 + t.ord - 1, t.content, t.tokens, t.embedding::${sparse ? 'sparsevec::' : ''}vector
       from unnest($5::text[], $6::int[], $7::text[]) with ordinality as t(content, tokens, embedding, ord)`,
    [
      claim.knowledgeBaseId,
      claim.documentId,
      claim.generation,
      firstIndex,
      chunks.map((c) => c.content),
      chunks.map((c) => c.tokenCount),
      chunks.map((c) => (sparse ? sparseVectorLiteral(c.embedding) : vectorLiteral(c.embedding))),
    ],
  );
}

/**
 * Makes the claim's generation live (completed, with its figures) and drops older chunks, in one
 * transaction; false when a newer generation was asked for meanwhile (its chunks are dropped).
 */
export async function completeDocument(
  db: Queryable,
  claim: Pick<IngestClaim, 'documentId' | 'generation'>,
  figures: { chunkCount: number; tokenCount: number },
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [done] = await tx.query(
      `update knowledge_documents
          set live_generation = $2, processing_status = 'completed', processing_error = null,
              chunk_count = $3, token_count = $4, processed_at = now()
        where id = $1 and target_generation = $2 returning id`,
      [claim.documentId, claim.generation, figures.chunkCount, figures.tokenCount],
    );
    await tx.query(
      done
        ? 'delete from knowledge_chunks where document_id = $1 and generation <> $2'
        : 'delete from knowledge_chunks where document_id = $1 and generation = $2',
      [claim.documentId, claim.generation],
    );
    return Boolean(done);
  });
}

/**
 * Records that the generation could not be processed (a corrupt or empty file, an embedding
 * provider that kept failing): failed with the reason, out of search, chunks dropped. A stale
 * generation changes nothing.
 */
export async function failDocument(
  db: Queryable,
  ref: { documentId: string; generation?: number },
  reason: string,
): Promise<void> {
  await db.transaction(async (tx) => {
    const [failed] = await tx.query(
      `update knowledge_documents
          set processing_status = 'failed', processing_error = $3, live_generation = null,
              chunk_count = 0, token_count = 0, processed_at = now()
        where id = $1 and ($2::int is null or target_generation = $2)
          and processing_status in ('pending', 'processing')
      returning id`,
      [ref.documentId, ref.generation ?? null, reason],
    );
    if (failed) await tx.query('delete from knowledge_chunks where document_id = $1', [ref.documentId]);
  });
}
