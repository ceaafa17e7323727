// A pool worker's side of runner/threads/slots.ts: under the slot of the task it starts, the worker writes
// its thread id and memory figures, which the pool's memory watch compares with the worker's heap
// statistics. Importing this installs the heap guard (runner/threads/heap-guard.ts): past its heap limit,
// the worker goes on with room to spare, its limit raised, until the watch sees that and stops it.
import { getHeapStatistics } from 'node:v8';
import { threadId } from 'node:worker_threads';
import { installHeapGuard } from './heap-guard.ts';
import { SLOT_FIELDS } from './slots.ts';

installHeapGuard();
/** The heap limit as `resourceLimits` set it. */
export const HEAP_LIMIT_BYTES = getHeapStatistics().heap_size_limit;

/** The slot table the pool shares through `workerData`, if it does. */
export function slotTable(buffer: SharedArrayBuffer | undefined): Int32Array | null {
  return buffer ? new Int32Array(buffer) : null;
}

/** Registers this worker as running the slot's task; `externalMemory` is what it holds at the start. */
export function registerTaskSlot(table: Int32Array | null, slot: number, externalMemory: number): void {
  const at = slot * SLOT_FIELDS;
  if (!table || !Number.isInteger(slot) || at < 0 || at + SLOT_FIELDS > table.length) return;
  Atomics.store(table, at + 1, Math.floor(externalMemory / 1024));
  Atomics.store(table, at + 2, Math.floor(HEAP_LIMIT_BYTES / 1024));
  // Last: the watch reads the figures once it finds the thread id.
  Atomics.store(table, at, threadId);
}

/**
 * Whether the heap went past its limit (the heap guard raised it). A task that ends so must not answer:
 * the pool's watch, polling while the task runs, stops this worker and reports the memory limit.
 */
export function pastHeapLimit(): boolean {
  return getHeapStatistics().heap_size_limit > HEAP_LIMIT_BYTES;
}
