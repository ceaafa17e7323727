// Admission and memory watch for the worker-thread pools (runner/sandbox/pool.ts for function code,
// runner/ingestion/pool.ts for documents): each task holds a numbered slot while it is in a worker, and
// the worker that starts it writes into a shared table, under that slot, its thread id and its memory
// figures (runner/threads/worker-slot.ts). The watch polls the heap statistics of the workers running
// watched slots, and stops a task whose worker's heap went past its limit: the heap guard then raised that
// limit and lets the worker go on until stopped here (runner/threads/heap-guard.ts), instead of V8
// aborting the whole process. It can also stop a task holding too much ArrayBuffer memory, which lives
// outside the V8 heap and so outside `resourceLimits`.
import type { Piscina } from 'piscina';

// Layout of the slot table, per slot: [thread id, external memory at task start in KiB, heap limit in KiB].
export const SLOT_FIELDS = 3;
const MEMORY_POLL_MS = 25;

/** The table shared with the workers (as `SharedArrayBuffer`), `size` slots long. */
export function createSlotTable(size: number): Int32Array {
  return new Int32Array(new SharedArrayBuffer(size * SLOT_FIELDS * 4));
}

/**
 * At most `size` tasks in the workers at once, each holding a numbered slot; the rest wait here in
 * order. Piscina would queue them too, but a task waiting in Piscina's queue would hold no slot of its
 * own (and a function's backstop would already be running down).
 */
export function createSlots(size: number) {
  const free = Array.from({ length: size }, (_, i) => size - 1 - i);
  const waiters: ((slot: number | null) => void)[] = [];

  /**
   * A free slot now, or null. Synchronous, so the worker pools (a task per function block) take it first
   * and await `acquire` only when every slot is taken: awaiting even a settled promise costs a microtask.
   */
  function tryAcquire(): number | null {
    return free.pop() ?? null;
  }

  /**
   * A free slot (at once when there is one), else the next one released, in order of asking. Null when
   * none is free and the signal aborts before one comes (or had already), or the slots are closed.
   */
  function acquire(signal?: AbortSignal): Promise<number | null> {
    const slot = free.pop();
    if (slot !== undefined) return Promise.resolve(slot);
    if (signal?.aborted) return Promise.resolve(null);
    return new Promise((resolve) => {
      const onAbort = () => {
        const at = waiters.indexOf(grant);
        if (at >= 0) waiters.splice(at, 1);
        resolve(null);
      };
      const grant = (slot: number | null) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(slot);
      };
      waiters.push(grant);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  function release(slot: number): void {
    const next = waiters.shift();
    if (next) next(slot);
    else free.push(slot);
  }

  function close(): void {
    for (const waiter of waiters.splice(0)) waiter(null);
  }

  return { tryAcquire, acquire, release, close };
}

/**
 * Calls a watched slot's `stop` once its worker's heap limit has risen (the heap guard let the heap past
 * it), or once the worker holds more than `externalLimitBytes` of ArrayBuffer memory beyond what it held
 * when the task started (null: not watched). Watch a slot from before its task is handed to Piscina.
 */
export function createMemoryWatch(piscina: Piscina, table: Int32Array, externalLimitBytes: number | null) {
  const running = new Map<number, () => void>();
  let timer: NodeJS.Timeout | undefined;

  function add(slot: number, stop: () => void): void {
    // The worker that starts the task writes its thread id; until then, no worker is the slot's.
    Atomics.store(table, slot * SLOT_FIELDS, 0);
    running.set(slot, stop);
    timer ??= setInterval(poll, MEMORY_POLL_MS).unref();
  }

  function remove(slot: number): void {
    running.delete(slot);
    if (running.size > 0) return;
    clearInterval(timer);
    timer = undefined;
  }

  function poll(): void {
    for (const [slot, stop] of running) void check(slot, stop);
  }

  async function check(slot: number, stop: () => void): Promise<void> {
    const threadId = Atomics.load(table, slot * SLOT_FIELDS);
    const thread =
      threadId === 0 ? undefined : piscina.threads.find((worker) => worker.threadId === threadId);
    if (!thread) return;
    let heap: { external_memory: number; heap_size_limit: number };
    try {
      heap = await thread.getHeapStatistics();
    } catch {
      return;
    }
    // The slot may have moved on to another task while the statistics were on their way.
    if (running.get(slot) !== stop || Atomics.load(table, slot * SLOT_FIELDS) !== threadId) return;
    const externalAtStart = Atomics.load(table, slot * SLOT_FIELDS + 1) * 1024;
    const heapLimitKiB = Atomics.load(table, slot * SLOT_FIELDS + 2);
    const pastHeapLimit = Math.floor(heap.heap_size_limit / 1024) > heapLimitKiB;
    const pastExternalLimit =
      externalLimitBytes !== null && heap.external_memory - externalAtStart > externalLimitBytes;
    if (pastHeapLimit || pastExternalLimit) stop();
  }

  return { add, remove };
}
