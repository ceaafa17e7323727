// What the function pool (runner/sandbox/pool.ts) and its workers (runner/sandbox/worker.ts) exchange: the
// task posted to a worker, the worker's start-up data, and the worker's answer. Types only: the pool must not
// load the worker module on its own thread.

/** What the pool posts to a worker. `scope` is JSON text: it is parsed inside the sandbox's own realm. */
export interface WorkerTask {
  code: string;
  language: 'javascript' | 'typescript';
  scope: string;
  timeoutMs: number;
  /** The pool's admission slot, under which this worker registers itself for the memory watch. */
  slot: number;
  /**
   * Runs with the same key may reuse a warm context (runner/sandbox/contexts.ts): a digest of
   * the owner (the workspace), the language and the code as written. Null: a context no code has run in.
   */
  reuseKey: string | null;
}

/** Given as `workerData` by the pool. */
export interface WorkerData {
  /** This pool's worker module (a file URL), which runner/threads/esm-entry.cjs loads. */
  entry: string;
  /** The table of the pool's memory watch (runner/threads/slots.ts). */
  slots: SharedArrayBuffer;
  /**
   * Per admission slot, when the worker started that slot's task (BigInt64: milliseconds since the epoch,
   * from `performance.timeOrigin + performance.now()`, comparable across threads); the pool times its
   * backstop from it, so that a task's limit never includes a fresh worker's start-up.
   */
  startedAt: SharedArrayBuffer;
  /**
   * The operator's HTTP allow-list (configuration HTTP_ALLOW_LIST), as in the http block: destinations
   * that the sandbox's fetch may reach although they are loopback, private, link-local… Parsed once per worker.
   */
  httpAllowList?: string[];
  /** A function's memory limit in bytes (the worker's V8 heap limit): warm contexts give way well before it. */
  memoryLimitBytes?: number;
}

/** What a worker answers. `json` is the function's return value as JSON text. */
export type WorkerOutcome =
  | { ok: true; json: string; logs: string[] }
  | { ok: false; error: string; logs: string[] };
