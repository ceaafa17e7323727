// The function pool: runs user-written function code (function blocks, condition expressions) in a
// Piscina worker-thread pool, each task in a sandbox of its own (runner/sandbox/worker.ts; a worker keeps
// a warm one for the same function of the same owner, runner/sandbox/contexts.ts). This side owns
// what a sandbox cannot do for itself: the memory limits (worker `resourceLimits` for the V8 heap, and a
// watch on each busy worker's heap limit and ArrayBuffer memory: runner/threads/slots.ts), the time limit of
// a run that never returns to the worker's event loop (by terminating that worker), cancellation, and
// admission, so that a task only starts its clock once a thread is free for it.
import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { parseAllowList } from '../../net/network-guard.ts';
import { createMemoryWatch, createSlots, createSlotTable } from '../threads/slots.ts';
// Types only: the worker module must not be loaded on this thread.
import type { WorkerData, WorkerOutcome, WorkerTask } from './task.ts';

export interface FunctionTask {
  /** An async function body: may use `return` and `await`. */
  code: string;
  /** TypeScript is type-stripped inside the worker (strip-only: no enums or namespaces). */
  language: 'javascript' | 'typescript';
  /**
   * Each key that is a valid JS identifier (and not already a global) becomes a read-only variable in
   * the code's scope. Values cross as JSON: Dates become ISO strings, undefined properties are dropped.
   */
  scope: Record<string, unknown>;
  /** Wall-clock limit for the whole task, sync and async parts. */
  timeoutMs: number;
  /**
   * Whose code this is (the workspace's id): runs of the same source for the same owner may reuse a
   * warm sandbox, whose global object is put back between runs (runner/sandbox/contexts.ts).
   * Without it, every run gets a context no code has run in.
   */
  owner?: string;
  /**
   * The code as written, when `code` is it with values substituted in (references become JSON literals):
   * runs of one source share warm sandboxes whatever values they were given. Defaults to `code`.
   */
  source?: string;
}

/**
 * `value` is plain JSON data (undefined becomes null); `logs` is the captured console output;
 * `durationMs` runs from handing the task to a worker to its outcome (waiting for a free thread excluded).
 */
export type FunctionOutcome =
  | { ok: true; value: unknown; logs: string[]; durationMs: number }
  | { ok: false; error: string; logs: string[]; durationMs: number };

export interface FunctionPool {
  /** Never rejects for anything the user code does; rejects only once the pool is destroyed. */
  run(task: FunctionTask, signal?: AbortSignal): Promise<FunctionOutcome>;
  destroy(): Promise<void>;
}

export interface FunctionPoolOptions {
  minThreads?: number;
  maxThreads?: number;
  /** Memory limit per running function, in MB: the worker's V8 heap, and its ArrayBuffers apart. */
  memoryMb?: number;
  /**
   * Destinations the functions' fetch may reach although the SSRF guard would refuse them (loopback,
   * private, link-local…): host names, addresses or CIDRs, as the http block's allow-list
   * (net/network-guard.ts). Empty by default: only public addresses.
   */
  httpAllowList?: string[];
}

const WORKER_URL = new URL('./worker.ts', import.meta.url).href;
// Piscina loads this CommonJS entry, which imports WORKER_URL (why: runner/threads/esm-entry.cjs).
const ENTRY_URL = new URL('../threads/esm-entry.cjs', import.meta.url).href;
// Room for a worker to start and load its module before it starts a task.
const START_MARGIN_MS = 1000;
// How far past its limit a started task runs before its worker is stopped. A task waiting on host work
// ends at its limit through the worker's own timer; only a run that never returns (a loop, an endless
// promise chain, native code) needs the pool, and this margin lets the worker's timer win when it can.
const STOP_GRACE_MS = 100;
// Threads above minThreads stay a while after a burst: starting one costs tens of milliseconds.
const IDLE_TIMEOUT_MS = 30_000;
const DEFAULT_MEMORY_MB = 128;
// Timers take at most a signed 32-bit number of milliseconds.
const MAX_TIMEOUT_MS = 2 ** 31 - 1 - START_MARGIN_MS;

type StopReason = 'timeout' | 'cancelled' | 'memory';

export function createFunctionPool(options: FunctionPoolOptions = {}): FunctionPool {
  const maxThreads = Math.max(1, options.maxThreads ?? availableParallelism());
  const minThreads = Math.min(Math.max(0, options.minThreads ?? 1), maxThreads);
  const memoryMb = options.memoryMb ?? DEFAULT_MEMORY_MB;
  const slotTable = createSlotTable(maxThreads);
  const startTable = new BigInt64Array(new SharedArrayBuffer(maxThreads * 8));
  const httpAllowList = [...(options.httpAllowList ?? [])];
  // Each worker parses the list again; a bad entry is reported here, not as every task failing.
  parseAllowList(httpAllowList);
  const workerData: WorkerData = {
    entry: WORKER_URL,
    slots: slotTable.buffer as SharedArrayBuffer,
    startedAt: startTable.buffer as SharedArrayBuffer,
    httpAllowList,
    memoryLimitBytes: memoryMb * 1024 * 1024,
  };
  const piscina = new Piscina<WorkerTask, WorkerOutcome>({
    filename: ENTRY_URL,
    minThreads,
    maxThreads,
    idleTimeout: IDLE_TIMEOUT_MS,
    resourceLimits: { maxOldGenerationSizeMb: memoryMb },
    // Lets the sandbox refuse import() with an error of its own realm instead of a host-realm one.
    execArgv: ['--experimental-vm-modules'],
    workerData,
    recordTiming: false,
  });
  // A worker that dies between tasks (its replacement is automatic) must not crash the process; a
  // worker dying during a task is reported through that task.
  piscina.on('error', () => {});
  const slots = createSlots(maxThreads);
  const memoryWatch = createMemoryWatch(piscina, slotTable, memoryMb * 1024 * 1024);
  let destroyed = false;

  async function run(task: FunctionTask, signal?: AbortSignal): Promise<FunctionOutcome> {
    if (destroyed) throw poolDestroyed();
    if (signal?.aborted) return failure('Function execution was cancelled', performance.now());
    if (!(task.timeoutMs >= 1 && task.timeoutMs <= MAX_TIMEOUT_MS)) {
      return failure(`Function time limit must be 1 to ${MAX_TIMEOUT_MS} ms`, performance.now());
    }
    let scope: string;
    try {
      scope = JSON.stringify(task.scope ?? {});
    } catch (error) {
      return failure(`Function scope is not JSON data: ${errorMessage(error)}`, performance.now());
    }
    const slot = slots.tryAcquire() ?? (await slots.acquire(signal));
    if (slot === null) {
      if (destroyed) throw poolDestroyed();
      return failure('Function execution was cancelled', performance.now());
    }
    try {
      const timeoutMs = Math.ceil(task.timeoutMs);
      const workerTask = {
        code: task.code,
        language: task.language,
        scope,
        timeoutMs,
        slot,
        reuseKey: reuseKey(task),
      };
      return await dispatch(workerTask, signal);
    } finally {
      slots.release(slot);
    }
  }

  async function dispatch(task: WorkerTask, signal?: AbortSignal): Promise<FunctionOutcome> {
    const started = performance.now();
    const controller = new AbortController();
    let stopped: StopReason | null = null;
    const stop = (reason: StopReason) => {
      stopped ??= reason;
      controller.abort();
    };
    Atomics.store(startTable, task.slot, 0n);
    // The time limit runs from when the worker starts the task (it may be a fresh worker still loading).
    const deadline = () => {
      const startedAt = Number(Atomics.load(startTable, task.slot));
      return startedAt > 0
        ? startedAt + task.timeoutMs + STOP_GRACE_MS
        : performance.timeOrigin + started + task.timeoutMs + START_MARGIN_MS;
    };
    const watch = () => {
      const left = deadline() - (performance.timeOrigin + performance.now());
      if (left <= 0) stop('timeout');
      else backstop = setTimeout(watch, left);
    };
    let backstop = setTimeout(watch, task.timeoutMs + STOP_GRACE_MS);
    const onCancel = () => stop('cancelled');
    signal?.addEventListener('abort', onCancel, { once: true });
    memoryWatch.add(task.slot, () => stop('memory'));
    try {
      const outcome = await piscina.run(task, { signal: controller.signal });
      return fromWorker(outcome, started);
    } catch (error) {
      if (destroyed) throw poolDestroyed();
      return failure(stoppedMessage(stopped, error, task.timeoutMs, memoryMb), started);
    } finally {
      memoryWatch.remove(task.slot);
      clearTimeout(backstop);
      signal?.removeEventListener('abort', onCancel);
    }
  }

  async function destroy(): Promise<void> {
    destroyed = true;
    slots.close();
    await piscina.destroy();
  }

  return { run, destroy };
}

function stoppedMessage(
  stopped: StopReason | null,
  error: unknown,
  timeoutMs: number,
  memoryMb: number,
): string {
  // The same words as when the worker's own timer ends a waiting function: the user need not know which.
  if (stopped === 'timeout') return `Function exceeded its time limit of ${timeoutMs} ms`;
  if (stopped === 'cancelled') return 'Function execution was cancelled';
  if (stopped === 'memory' || (error as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
    return `Function exceeded its memory limit of ${memoryMb} MB`;
  }
  return `Function worker failed: ${errorMessage(error)}`;
}

function fromWorker(outcome: WorkerOutcome, started: number): FunctionOutcome {
  const durationMs = performance.now() - started;
  if (!outcome.ok) return { ok: false, error: outcome.error, logs: outcome.logs, durationMs };
  return { ok: true, value: JSON.parse(outcome.json), logs: outcome.logs, durationMs };
}

function failure(error: string, started: number): FunctionOutcome {
  return { ok: false, error, logs: [], durationMs: performance.now() - started };
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Names the warm sandboxes a task may use: a digest, so that long code is not posted twice. */
function reuseKey(task: FunctionTask): string | null {
  if (task.owner === undefined) return null;
  const what = JSON.stringify([task.owner, task.language, task.source ?? task.code]);
  return createHash('sha256').update(what).digest('base64');
}

function poolDestroyed(): Error {
  return new Error('The function pool has been destroyed');
}
