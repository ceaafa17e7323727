// The worker module of the ingest pool (runner/ingestion/pool.ts): the CPU-heavy steps of knowledge
// ingestion, off the runner's event loop. `extract` parses a document and chunks its text; `embed`
// computes local embeddings for a batch of texts and hands back one buffer (moved, not copied).
import { getHeapStatistics } from 'node:v8';
import { workerData } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { EMBEDDING_DIMENSIONS } from '../embeddings/embedder.ts';
import { embedLocal } from '../embeddings/local.ts';
import { pastHeapLimit, registerTaskSlot, slotTable } from '../threads/worker-slot.ts';
import { type Chunk, type ChunkingConfig, chunkText } from './chunk.ts';
import type { DocumentKind } from './document-types.ts';
import { DocumentParseError, parseDocument } from './parse.ts';

export interface ExtractTask {
  kind: 'extract';
  bytes: Uint8Array;
  documentKind: DocumentKind;
  chunking: ChunkingConfig;
}

export interface EmbedTask {
  kind: 'embed';
  texts: string[];
}

/** What the pool hands over; it adds the admission slot under which the worker registers the task. */
export type IngestTaskData = ExtractTask | EmbedTask;
export type IngestTask = IngestTaskData & { slot: number };

/** Given as `workerData` by the pool. */
export interface IngestWorkerData {
  /** This pool's worker module (a file URL), which runner/threads/esm-entry.cjs loads. */
  entry: string;
  /** The table of the pool's memory watch (runner/threads/slots.ts). */
  slots: SharedArrayBuffer;
}

const slots = slotTable((workerData as IngestWorkerData | undefined)?.slots);

/** `characters`: the length of the document's text, before chunking. */
export type ExtractResult = { ok: true; chunks: Chunk[]; characters: number } | { ok: false; error: string };

export default async function runIngestTask(task: IngestTask): Promise<ExtractResult | Float32Array> {
  registerTaskSlot(slots, task.slot, getHeapStatistics().external_memory);
  const result = task.kind === 'embed' ? embedBatch(task.texts) : await extract(task);
  // Past the heap limit (the heap guard let it go on): no answer; the pool stops this worker and reports it.
  if (pastHeapLimit()) return new Promise(() => {});
  return result;
}

async function extract(task: ExtractTask): Promise<ExtractResult> {
  try {
    const text = await parseDocument(task.bytes, task.documentKind);
    const chunks = await chunkText(text, task.chunking);
    if (chunks.length === 0) return { ok: false, error: 'The document has no text' };
    return { ok: true, chunks, characters: text.length };
  } catch (error) {
    if (error instanceof DocumentParseError) return { ok: false, error: error.message };
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false, error: `The document could not be processed: ${reason}` };
  }
}

/** All vectors in one buffer, text after text, so that one transfer returns them. */
function embedBatch(texts: string[]): Float32Array {
  const out = new Float32Array(texts.length * EMBEDDING_DIMENSIONS);
  texts.forEach((text, i) => {
    out.set(embedLocal(text), i * EMBEDDING_DIMENSIONS);
  });
  return Piscina.move(out) as Float32Array;
}
