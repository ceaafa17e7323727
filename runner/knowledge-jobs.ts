// The runner's work on queue `knowledge-ingest`: claim a document's generation, read its bytes from
// storage, parse and chunk them in the ingest pool, embed the chunks in batches (in the pool for the
// local model, over HTTP for OpenAI's), store them, and make the generation live. A file that cannot
// be read ends `failed` with the reason at once; anything else (storage, database, the embedding
// provider) is retried by the queue, and the last attempt records the failure. A runner that dies
// mid-way loses nothing: the job's heartbeat stops, pg-boss hands it to another runner, and the
// claim clears the partial chunks.
//
// Storing is the slow step (the vector index takes most of it), and a document's
// parsing and embedding used to wait before it: the pump takes more documents than may store at
// once, so the next ones are claimed, read, parsed, chunked and embedded while these store, and
// at most `storeConcurrency` documents write their chunks at a time.
import type { Job } from 'pg-boss';
import type { Db } from '../db/client.ts';
import {
  claimDocument,
  completeDocument,
  failDocument,
  type IngestClaim,
  insertChunks,
} from '../db/knowledge/ingestion.ts';
import type { KnowledgeIngestPayload } from '../jobs/queues.ts';
import type { Logger } from '../logger.ts';
import type { StorageDriver } from '../storage/driver.ts';
import type { Embedders } from './embeddings/embedder.ts';
import { documentKindOf } from './ingestion/document-types.ts';
import type { IngestPool } from './ingestion/pool.ts';
import { createSlots } from './threads/slots.ts';

/** Attempts at one generation (the queue's first delivery and its retries). */
export const INGEST_ATTEMPTS = 3;
// Chunks embedded and stored per step: bounds memory whatever the document's size, and lets the
// next batch embed while this one is written.
const BATCH = 128;

export interface KnowledgeJobDeps {
  db: Db;
  storage: StorageDriver;
  pool: IngestPool;
  embedders: Embedders;
  log: Logger;
  signal?: AbortSignal;
  /** Documents that write their chunks at once (INGEST_CONCURRENCY); more may be prepared meanwhile. */
  storeConcurrency: number;
}

/**
 * Documents the pump should hold at once for `storeConcurrency` storing: as many again are prepared
 * while those store. (Each prepared one waits with its chunks and their first batch of vectors in
 * memory: at most twice the documents of INGEST_CONCURRENCY alone.)
 */
export function ingestJobsInHand(storeConcurrency: number): number {
  return storeConcurrency * 2;
}

type StoreGate = <T>(store: () => Promise<T>) => Promise<T>;

export function knowledgeJobHandler(deps: KnowledgeJobDeps) {
  const { db, log } = deps;
  const slots = createSlots(Math.max(1, deps.storeConcurrency));
  const storing: StoreGate = async (store) => {
    // `acquire` answers at once when a slot is free; its microtask is nothing beside a store's transaction.
    const slot = await slots.acquire(deps.signal);
    if (slot === null) throw deps.signal?.reason ?? new Error('Ingestion stopped');
    try {
      return await store();
    } finally {
      slots.release(slot);
    }
  };
  return async (job: Job<KnowledgeIngestPayload>) => {
    const claim = await claimDocument(db, job.data);
    if (!claim) return; // stale, gone, or done already
    try {
      await ingest(deps, claim, storing);
    } catch (err) {
      if (claim.attempt < INGEST_ATTEMPTS) throw err; // the queue retries the job
      log.error('document ingestion failed', { documentId: claim.documentId, err });
      await failDocument(db, claim, `Processing failed after ${claim.attempt} attempts: ${reasonOf(err)}`);
    }
  };
}

export function deadDocumentHandler(db: Db) {
  return async (job: Job<KnowledgeIngestPayload>) => {
    await failDocument(
      db,
      job.data,
      'The runner processing this document stopped responding, and retries ran out',
    );
  };
}

async function ingest(deps: KnowledgeJobDeps, claim: IngestClaim, storing: StoreGate): Promise<void> {
  const kind = documentKindOf(claim.filename, claim.mimeType);
  if (!kind) {
    await failDocument(deps.db, claim, `Unsupported document type ${claim.mimeType}`);
    return;
  }
  const bytes = await readAll(deps.storage, claim.storageKey);
  const extracted = await deps.pool.extract(bytes, kind, claim.chunking, deps.signal);
  if (!extracted.ok) {
    await failDocument(deps.db, claim, extracted.error);
    return;
  }
  const { chunks } = extracted;
  const embedder = deps.embedders.get(claim.embeddingModel);
  const embed = (from: number) => {
    const texts = chunks.slice(from, from + BATCH).map((c) => c.content);
    const vectors = embedder.embedDocuments(texts, deps.signal);
    // Awaited later; a failure meanwhile must not count as unhandled.
    vectors.catch(() => {});
    return vectors;
  };
  // The first batch is embedded before the document waits to store, so storing never waits for it.
  const first = chunks.length ? embed(0) : null;
  await first;
  const tokenCount = await storing(async () => {
    let next = first;
    let tokens = 0;
    for (let from = 0; next; from += BATCH) {
      const vectors = await next;
      // The next batch embeds while this one is written.
      next = from + BATCH < chunks.length ? embed(from + BATCH) : null;
      const batch = chunks.slice(from, from + BATCH).map((c, i) => {
        tokens += c.tokenCount;
        return { content: c.content, tokenCount: c.tokenCount, embedding: vectors[i] as Float32Array };
      });
      await insertChunks(deps.db, claim, from, batch);
    }
    return tokens;
  });
  // Outside the gate: the next document's chunks go in while this one is made live.
  await completeDocument(deps.db, claim, { chunkCount: chunks.length, tokenCount });
}

/** The stored object's bytes, in a buffer of their own (so it can be moved to a worker thread). */
async function readAll(storage: StorageDriver, key: string): Promise<Uint8Array> {
  const { body, size } = await storage.get(key);
  const bytes = new Uint8Array(new ArrayBuffer(size));
  let at = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (at + chunk.length > size) throw new Error(`Stored object ${key} is larger than its recorded size`);
    bytes.set(chunk, at);
    at += chunk.length;
  }
  if (at !== size) throw new Error(`Stored object ${key} is shorter than its recorded size`);
  return bytes;
}

function reasonOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
