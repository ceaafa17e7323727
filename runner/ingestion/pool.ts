// The ingest pool: worker threads for the CPU side of knowledge ingestion (runner/ingestion/worker.ts),
// parsing and chunking documents of up to 100 MB and computing local embeddings, so that none of it
// blocks the runner's event loop. Separate from the function pool: its tasks are few, long and large,
// and its memory limit is sized for documents, not for user code.
import { Piscina } from 'piscina';
import { EMBEDDING_DIMENSIONS } from '../embeddings/embedder.ts';
import { createMemoryWatch, createSlots, createSlotTable } from '../threads/slots.ts';
import type { ChunkingConfig } from './chunk.ts';
import type { DocumentKind } from './document-types.ts';
// Types only: the worker module must not be loaded on this thread.
import type { ExtractResult, IngestTask, IngestTaskData, IngestWorkerData } from './worker.ts';

export type { ExtractResult } from './worker.ts';

export interface IngestPoolOptions {
  maxThreads?: number;
  /**
   * V8 heap per worker, in MB. A document's text, its parse tree and its chunks live there at once: a
   * 100 MB document needs about 1 GB. ArrayBuffers (the document's bytes) are outside this limit.
   */
  memoryMb?: number;
  /** A document that takes longer to parse and chunk fails (PDF.js can spin on a malformed file). */
  extractTimeoutMs?: number;
}

export interface IngestPool {
  /**
   * Parses and chunks a document. Its bytes are moved to the worker (`bytes` is detached afterwards)
   * when they fill their buffer, else copied. Resolves `ok: false` with a reason for a document that
   * cannot be processed (unreadable, no text, too large for memory, too slow); rejects when cancelled.
   */
  extract(
    bytes: Uint8Array,
    documentKind: DocumentKind,
    chunking: ChunkingConfig,
    signal?: AbortSignal,
  ): Promise<ExtractResult>;
  /** Local-model embeddings (runner/embeddings/local.ts) of many texts, in order. */
  embedLocal(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
  destroy(): Promise<void>;
}

const WORKER_URL = new URL('./worker.ts', import.meta.url).href;
// Piscina loads this CommonJS entry, which imports WORKER_URL (why: runner/threads/esm-entry.cjs).
const ENTRY_URL = new URL('../threads/esm-entry.cjs', import.meta.url).href;
const DEFAULT_MEMORY_MB = 1024;
const DEFAULT_EXTRACT_TIMEOUT_MS = 15 * 60_000;
// Threads stay a while after a document: loading PDF.js into a fresh one takes a moment.
const IDLE_TIMEOUT_MS = 60_000;

export function createIngestPool(options: IngestPoolOptions = {}): IngestPool {
  const memoryMb = options.memoryMb ?? DEFAULT_MEMORY_MB;
  const extractTimeoutMs = options.extractTimeoutMs ?? DEFAULT_EXTRACT_TIMEOUT_MS;
  const maxThreads = Math.max(1, options.maxThreads ?? 2);
  const slotTable = createSlotTable(maxThreads);
  const workerData: IngestWorkerData = { entry: WORKER_URL, slots: slotTable.buffer as SharedArrayBuffer };
  const piscina = new Piscina<IngestTask, ExtractResult | Float32Array>({
    filename: ENTRY_URL,
    minThreads: 0,
    maxThreads,
    idleTimeout: IDLE_TIMEOUT_MS,
    // A small young generation next to the heap limit: a scavenge needs room for its survivors in
    // the old generation, and when a nearly full heap cannot give it, V8 aborts the whole process
    // instead of ending the worker (seen once with a 64 MB limit and the default young generation).
    resourceLimits: {
      maxOldGenerationSizeMb: memoryMb,
      maxYoungGenerationSizeMb: Math.max(4, Math.min(64, Math.floor(memoryMb / 16))),
    },
    workerData,
    recordTiming: false,
  });
  // A worker dying between tasks (its replacement is automatic) must not crash the process; one dying
  // during a task is reported through that task.
  piscina.on('error', () => {});
  // Past its heap limit a worker goes on (the heap guard) until this watch stops it: without the guard,
  // one large allocation there (a 100 MB JSON document's one string) aborts the whole process.
  const slots = createSlots(maxThreads);
  const memoryWatch = createMemoryWatch(piscina, slotTable, null);
  let destroyed = false;

  /**
   * Runs a task in a worker once one is free, watched for memory. Resolves `outOfMemory` if its worker
   * went past the heap limit; rejects when `signal` aborts (waiting or running) or the pool is destroyed.
   */
  async function inWorker(
    task: IngestTaskData,
    signal: AbortSignal,
    transferList: ArrayBuffer[] = [],
  ): Promise<{ outOfMemory: true } | { outOfMemory: false; result: ExtractResult | Float32Array }> {
    const slot = slots.tryAcquire() ?? (await slots.acquire(signal));
    if (slot === null) {
      if (destroyed) throw poolDestroyed();
      throw signal.reason;
    }
    const memory = new AbortController();
    memoryWatch.add(slot, () => memory.abort());
    try {
      const result = await piscina.run(
        { ...task, slot },
        { transferList, signal: AbortSignal.any([signal, memory.signal]) },
      );
      return { outOfMemory: false, result };
    } catch (error) {
      if (destroyed) throw poolDestroyed();
      if (signal.aborted) throw signal.reason;
      if (memory.signal.aborted || isOutOfMemory(error)) return { outOfMemory: true };
      throw error;
    } finally {
      memoryWatch.remove(slot);
      slots.release(slot);
    }
  }

  async function extract(
    bytes: Uint8Array,
    documentKind: DocumentKind,
    chunking: ChunkingConfig,
    signal?: AbortSignal,
  ): Promise<ExtractResult> {
    if (destroyed) throw poolDestroyed();
    signal?.throwIfAborted();
    const owned = ownBuffer(bytes);
    const timeout = AbortSignal.timeout(extractTimeoutMs);
    try {
      const run = await inWorker(
        { kind: 'extract', bytes: owned, documentKind, chunking },
        signal ? AbortSignal.any([signal, timeout]) : timeout,
        [owned.buffer as ArrayBuffer],
      );
      if (!run.outOfMemory) return run.result as ExtractResult;
      return {
        ok: false,
        error: `The document is too large to process in memory (limit ${memoryMb} MB per document)`,
      };
    } catch (error) {
      if (!destroyed && !signal?.aborted && timeout.aborted) {
        return { ok: false, error: `Processing the document took longer than ${duration(extractTimeoutMs)}` };
      }
      throw error;
    }
  }

  async function embedLocal(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    if (destroyed) throw poolDestroyed();
    if (texts.length === 0) return [];
    const run = await inWorker({ kind: 'embed', texts }, signal ?? NEVER);
    if (run.outOfMemory) throw new Error('Embedding ran out of memory in the ingest pool');
    const flat = run.result as Float32Array;
    return texts.map((_, i) => flat.subarray(i * EMBEDDING_DIMENSIONS, (i + 1) * EMBEDDING_DIMENSIONS));
  }

  async function destroy(): Promise<void> {
    destroyed = true;
    slots.close();
    await piscina.destroy();
  }

  return { extract, embedLocal, destroy };
}

// The signal of a caller that never cancels.
const NEVER = new AbortController().signal;

/**
 * The bytes in a buffer of their own, which can be moved to the worker: a view into a larger buffer
 * (Node's pooled small Buffers among them) is copied, as moving would take its neighbours along.
 */
function ownBuffer(bytes: Uint8Array): Uint8Array {
  const whole =
    bytes.buffer instanceof ArrayBuffer &&
    bytes.byteOffset === 0 &&
    bytes.byteLength === bytes.buffer.byteLength;
  return whole ? bytes : bytes.slice();
}

function isOutOfMemory(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY';
}

function duration(ms: number): string {
  const [value, unit] =
    ms >= 60_000 ? [Number((ms / 60_000).toFixed(1)), 'minute'] : [Math.ceil(ms / 1000), 'second'];
  return `${value} ${unit}${value === 1 ? '' : 's'}`;
}

function poolDestroyed(): Error {
  return new Error('The ingest pool has been destroyed');
}
