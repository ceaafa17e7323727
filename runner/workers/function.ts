// The worker module of the function pool (runner/pool.ts): runs one user function body (a workflow's
// function block) per task, in a fresh node:vm context that holds only Web-standard globals. Those globals
// are sandbox-realm code (runner/workers/sandbox-prelude.ts); whatever they need from the host (network,
// URL parsing, Web Crypto, timers, console) crosses a narrow bridge, defined here, that carries only
// primitives, so no host object (whose `.constructor.constructor` is the host's `Function`, and so
// `process`) is ever reachable from user code.
//
// How user code is kept on a leash:
// - Every piece of user code runs inside `script.runInContext(..., { timeout })`: the first run starts the
//   function, and later "pump" runs (an empty script) drain the context's own microtask queue
//   (`microtaskMode: 'afterEvaluate'`), so synchronous loops and endless promise chains both hit vm's timeout.
// - The host only ever calls into the context through promise resolving functions (V8 built-ins) with
//   primitive arguments, then pumps; it never calls a user function or reads a user object directly.
// - What vm's timeout cannot stop, and memory, are the pool's job (AbortSignal backstop, worker
//   `resourceLimits`, a poll of ArrayBuffer memory): see runner/pool.ts.
import { webcrypto } from 'node:crypto';
import { stripTypeScriptTypes } from 'node:module';
import { types } from 'node:util';
import { getHeapStatistics } from 'node:v8';
import vm from 'node:vm';
import { threadId, workerData } from 'node:worker_threads';
import { type Bridge, sandboxPrelude } from './sandbox-prelude.ts';

/** What the pool posts to a worker. `scope` is JSON text: it is parsed inside the sandbox's own realm. */
export interface WorkerTask {
  code: string;
  language: 'javascript' | 'typescript';
  scope: string;
  timeoutMs: number;
  /** The pool's admission slot, under which this worker registers itself for the memory watch. */
  slot: number;
}

/**
 * Given as `workerData` by the pool: per admission slot, the thread id running that slot's task and the
 * thread's external (ArrayBuffer) memory in KiB when the task started. Buffers live outside the V8 heap,
 * so `resourceLimits` does not bound them; the pool polls the worker's heap statistics instead.
 */
export interface WorkerData {
  slots: SharedArrayBuffer;
}
const SLOT_FIELDS = 2;

/** What a worker answers. `json` is the function's return value as JSON text. */
export type WorkerOutcome =
  | { ok: true; json: string; logs: string[] }
  | { ok: false; error: string; logs: string[] };

/**
 * The hook through which sandboxed code reaches the network. The SSRF guard (private address and
 * allow-list checks) belongs here; until then it is the host's fetch.
 */
export function sandboxFetch(url: string, init: RequestInit): Promise<Response> {
  return fetch(url, init);
}

const ENTRY_NAME = '__wf_run__';
const SCRIPT_FILENAME = 'function.js';
const MAX_CACHED_SCRIPTS = 256;
const MAX_LOG_LINES = 1000;
const MAX_LOG_BYTES = 256 * 1024;
const MAX_LOG_LINE_CHARS = 8 * 1024;
const MAX_FETCH_RESPONSE_BYTES = 16 * 1024 * 1024;
const MAX_TIMER_MS = 2 ** 31 - 1;
const SUBTLE_METHODS = new Set([
  'encrypt',
  'decrypt',
  'sign',
  'verify',
  'digest',
  'generateKey',
  'deriveKey',
  'deriveBits',
  'importKey',
  'exportKey',
  'wrapKey',
  'unwrapKey',
]);
const URL_PARTS = new Set([
  'href',
  'protocol',
  'username',
  'password',
  'host',
  'hostname',
  'port',
  'pathname',
  'search',
  'hash',
]);

assertVmModulesFlag();
// A sandboxed promise rejected with no handler is the user's business; by default it would crash the worker.
process.on('unhandledRejection', () => {});

// ---------------------------------------------------------------------------------------------------------
// The task

export default async function runFunction(task: WorkerTask): Promise<WorkerOutcome> {
  registerSlot(task.slot);
  let script: vm.Script;
  try {
    script = compile(task.code, task.language);
  } catch (error) {
    return { ok: false, error: compileErrorMessage(error), logs: [] };
  }
  return new Promise<WorkerOutcome>((resolve) => {
    const execution = createExecution(task, resolve);
    current = execution;
    run(execution, script);
  });
}

interface Execution {
  timeoutMs: number;
  deadline: number;
  context: vm.Context;
  /** The context's own TypeError, captured before user code runs (for errors the host raises inside). */
  contextTypeError: TypeErrorConstructor;
  logs: string[];
  logBytes: number;
  logsDropped: boolean;
  /** Host operations that will later call back into the context (timers, fetches, crypto). */
  pending: number;
  timers: Map<number, NodeJS.Timeout>;
  nextTimerId: number;
  keys: Map<number, CryptoKey>;
  nextKeyId: number;
  /** Cancels the execution's in-flight fetches when it ends (created by the first fetch). */
  abort: AbortController | null;
  deadlineTimer: NodeJS.Timeout | undefined;
  pumpScheduled: boolean;
  done: boolean;
  resolve(outcome: WorkerOutcome): void;
}

/** The execution this worker is running (a worker runs one task at a time). */
let current: Execution | null = null;

const slotTable = (workerData as WorkerData | undefined)?.slots
  ? new Int32Array((workerData as WorkerData).slots)
  : null;

function registerSlot(slot: number): void {
  const at = slot * SLOT_FIELDS;
  if (!slotTable || !Number.isInteger(slot) || at < 0 || at + SLOT_FIELDS > slotTable.length) return;
  Atomics.store(slotTable, at + 1, Math.floor(getHeapStatistics().external_memory / 1024));
  Atomics.store(slotTable, at, threadId);
}

function createExecution(task: WorkerTask, resolve: (outcome: WorkerOutcome) => void): Execution {
  const context = vm.createContext(vm.constants.DONT_CONTEXTIFY, {
    name: 'function',
    microtaskMode: 'afterEvaluate',
    importModuleDynamically: rejectDynamicImport,
  });
  const execution: Execution = {
    timeoutMs: task.timeoutMs,
    deadline: performance.now() + task.timeoutMs,
    context,
    contextTypeError: (context as { TypeError: TypeErrorConstructor }).TypeError,
    logs: [],
    logBytes: 0,
    logsDropped: false,
    pending: 0,
    timers: new Map(),
    nextTimerId: 1,
    keys: new Map(),
    nextKeyId: 1,
    abort: null,
    deadlineTimer: undefined,
    pumpScheduled: false,
    done: false,
    resolve,
  };
  const prelude = PRELUDE_SCRIPT.runInContext(context) as typeof sandboxPrelude;
  prelude(createBridge(execution), { scope: task.scope, entryName: ENTRY_NAME, filename: SCRIPT_FILENAME });
  return execution;
}

function run(execution: Execution, script: vm.Script): void {
  execution.deadlineTimer = setTimeout(() => finishTimedOut(execution), execution.timeoutMs);
  runInContext(execution, script);
}

/** Runs a script in the execution's context under vm's timeout, then checks whether the function ended. */
function runInContext(execution: Execution, script: vm.Script): void {
  const timeout = Math.ceil(execution.deadline - performance.now());
  if (timeout <= 0) {
    finishTimedOut(execution);
    return;
  }
  try {
    script.runInContext(execution.context, { timeout });
  } catch (error) {
    // Only the host can throw here: neither the entry call nor a microtask drain lets user errors escape.
    if (isScriptTimeout(error)) finishTimedOut(execution);
    else finish(execution, { ok: false, error: 'Function execution failed inside the sandbox', logs: [] });
    return;
  }
  if (!execution.done && execution.pending === 0) {
    finish(execution, {
      ok: false,
      error: 'Function never finished: it awaits a promise that nothing is left to settle',
      logs: [],
    });
  }
}

/** Drains the context's microtasks after host work (a timer, a fetch) resolved something inside it. */
function schedulePump(execution: Execution): void {
  if (execution.pumpScheduled || execution.done) return;
  execution.pumpScheduled = true;
  // One pump per event-loop turn, however many host operations completed in it.
  setImmediate(() => {
    execution.pumpScheduled = false;
    if (!execution.done) runInContext(execution, PUMP_SCRIPT);
  });
}

function finishTimedOut(execution: Execution): void {
  finish(execution, {
    ok: false,
    error: `Function exceeded its time limit of ${execution.timeoutMs} ms`,
    logs: [],
  });
}

function finish(execution: Execution, outcome: WorkerOutcome): void {
  if (execution.done) return;
  execution.done = true;
  if (current === execution) current = null;
  clearTimeout(execution.deadlineTimer);
  // Pending timers and requests must not outlive the task.
  for (const timer of execution.timers.values()) clearTimeout(timer);
  execution.timers.clear();
  execution.abort?.abort();
  execution.keys.clear();
  if (execution.logsDropped) execution.logs.push('[console output truncated]');
  execution.resolve({ ...outcome, logs: execution.logs });
}

function isScriptTimeout(error: unknown): boolean {
  return types.isNativeError(error) && (error as { code?: unknown }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT';
}

function rejectDynamicImport(): never {
  const execution = current;
  if (!execution) throw 'import() is not available in function code';
  // The rejection reaches the sandbox's promise through host microtasks, outside any pump: count it as
  // pending work and pump once it has landed.
  execution.pending++;
  setImmediate(() => {
    execution.pending--;
    schedulePump(execution);
  });
  // The rejection reason lands in user code, so it must be an object of the sandbox's realm.
  throw new execution.contextTypeError('import() is not available in function code');
}

/** Dynamic import can only be refused with a sandbox-realm error when this flag is on (see pool.ts). */
function assertVmModulesFlag(): void {
  const flags = `${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`;
  if (!flags.includes('--experimental-vm-modules')) {
    throw new Error(
      'runner/workers/function.ts must run with --experimental-vm-modules (see runner/pool.ts)',
    );
  }
}

// ---------------------------------------------------------------------------------------------------------
// Compiling user code

const AsyncFunction = (async () => {}).constructor as new (body: string) => unknown;
const TS_PREFIX = '(async function () {\n';
const TS_SUFFIX = '\n})';
const scriptCaches = { javascript: new Map<string, vm.Script>(), typescript: new Map<string, vm.Script>() };

/** Compiled scripts are context-independent, so one per code string serves every later execution. */
function compile(code: string, language: WorkerTask['language']): vm.Script {
  const cache = scriptCaches[language];
  if (!cache) throw new TypeError(`Unsupported language: ${String(language)}`);
  const cached = cache.get(code);
  if (cached) {
    cache.delete(code);
    cache.set(code, cached);
    return cached;
  }
  const body = language === 'typescript' ? stripTypes(code) : code;
  // Parsing the body alone as a function body rejects code that would close the wrapper below and run
  // statements outside it.
  new AsyncFunction(body);
  const script = new vm.Script(`${ENTRY_NAME}(async function () {\n${body}\n});`, {
    filename: SCRIPT_FILENAME,
    lineOffset: -1,
    importModuleDynamically: rejectDynamicImport,
  });
  cache.set(code, script);
  if (cache.size > MAX_CACHED_SCRIPTS) cache.delete(cache.keys().next().value as string);
  return script;
}

function stripTypes(code: string): string {
  // A bare body (top-level `return`, `await`) is not a valid TypeScript module; the wrapper makes it one,
  // and strip mode only blanks out types, so the body keeps its exact position inside.
  const stripped = stripTypeScriptTypes(`${TS_PREFIX}${code}${TS_SUFFIX}`, { mode: 'strip' });
  return stripped.slice(TS_PREFIX.length, stripped.length - TS_SUFFIX.length);
}

function compileErrorMessage(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return `SyntaxError: ${String(error)}`;
}

// ---------------------------------------------------------------------------------------------------------
// The bridge: host functions the prelude closes over. They take and return primitives only, never throw,
// and call back into the context only through resolving functions, each followed by a pump.

function createBridge(execution: Execution): Bridge {
  return {
    log: (level, text) => appendLog(execution, level, text),
    settle: (ok, text) => settle(execution, ok, text),
    setTimer: (ms, fire) => setTimer(execution, ms, fire),
    clearTimer: (id) => clearTimer(execution, id),
    fetch: (request, resolve, reject) => void bridgeFetch(execution, request, resolve, reject),
    subtle: (method, args, resolve, reject) => void bridgeSubtle(execution, method, args, resolve, reject),
    url: (input, base) => parseUrl(input, base),
    urlSet: (href, part, value) => setUrlPart(href, part, value),
    randomBytes: (length) => randomLatin1(length),
    randomUUID: () => webcrypto.randomUUID(),
  };
}

function settle(execution: Execution, ok: boolean, text: string): void {
  if (typeof text !== 'string') return;
  finish(execution, ok === true ? { ok: true, json: text, logs: [] } : { ok: false, error: text, logs: [] });
}

function appendLog(execution: Execution, level: string, text: string): boolean {
  if (execution.done || typeof text !== 'string' || typeof level !== 'string') return false;
  if (execution.logs.length >= MAX_LOG_LINES || execution.logBytes >= MAX_LOG_BYTES) {
    execution.logsDropped = true;
    return false;
  }
  const clipped = text.length > MAX_LOG_LINE_CHARS ? `${text.slice(0, MAX_LOG_LINE_CHARS)}…` : text;
  const line = level === 'log' ? clipped : `[${level}] ${clipped}`;
  execution.logs.push(line);
  execution.logBytes += line.length;
  return true;
}

function setTimer(execution: Execution, ms: number, fire: () => void): number {
  if (execution.done || typeof fire !== 'function') return 0;
  const delay = Number.isFinite(ms) ? Math.min(Math.max(ms, 0), MAX_TIMER_MS) : 0;
  const id = execution.nextTimerId++;
  execution.pending++;
  const timer = setTimeout(() => {
    execution.timers.delete(id);
    execution.pending--;
    if (execution.done) return;
    fire();
    schedulePump(execution);
  }, delay);
  execution.timers.set(id, timer);
  return id;
}

function clearTimer(execution: Execution, id: number): void {
  const timer = execution.timers.get(id);
  if (!timer) return;
  clearTimeout(timer);
  execution.timers.delete(id);
  execution.pending--;
}

/** Runs host work that ends by resolving or rejecting a promise inside the context. */
async function settleLater(
  execution: Execution,
  work: () => Promise<string>,
  resolve: (value: string) => void,
  reject: (error: string) => void,
  describeError: (error: unknown) => string,
): Promise<void> {
  if (execution.done || typeof resolve !== 'function' || typeof reject !== 'function') return;
  execution.pending++;
  let result: { ok: true; text: string } | { ok: false; text: string };
  try {
    result = { ok: true, text: await work() };
  } catch (error) {
    result = { ok: false, text: describeError(error) };
  }
  execution.pending--;
  if (execution.done) return;
  if (result.ok) resolve(result.text);
  else reject(result.text);
  schedulePump(execution);
}

// fetch -------------------------------------------------------------------------------------------------

interface FetchRequest {
  url: string;
  method: string;
  headers: [string, string][];
  body: string | null;
  redirect: RequestRedirect;
}

function bridgeFetch(
  execution: Execution,
  request: string,
  resolve: (response: string) => void,
  reject: (message: string) => void,
): Promise<void> {
  return settleLater(execution, () => performFetch(execution, request), resolve, reject, fetchErrorMessage);
}

async function performFetch(execution: Execution, requestJson: string): Promise<string> {
  const request = JSON.parse(String(requestJson)) as FetchRequest;
  execution.abort ??= new AbortController();
  const response = await sandboxFetch(String(request.url), {
    method: String(request.method),
    headers: request.headers.map(([name, value]): [string, string] => [String(name), String(value)]),
    body: typeof request.body === 'string' ? Buffer.from(request.body, 'latin1') : null,
    redirect: request.redirect,
    signal: execution.abort.signal,
  });
  const body = await readCapped(response, MAX_FETCH_RESPONSE_BYTES);
  return JSON.stringify({
    status: response.status,
    statusText: response.statusText,
    url: response.url,
    redirected: response.redirected,
    headers: [...response.headers],
    body: body.toString('latin1'),
  });
}

async function readCapped(response: Response, limit: number): Promise<Buffer> {
  if (!response.body) return Buffer.alloc(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks, size);
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw new Error(`response body exceeds ${limit} bytes`);
    }
    chunks.push(value);
  }
}

function fetchErrorMessage(error: unknown): string {
  if (!(error instanceof Error)) return 'fetch failed';
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}

// Web Crypto ---------------------------------------------------------------------------------------------

function bridgeSubtle(
  execution: Execution,
  method: string,
  args: string,
  resolve: (result: string) => void,
  reject: (error: string) => void,
): Promise<void> {
  return settleLater(execution, () => performSubtle(execution, method, args), resolve, reject, cryptoError);
}

async function performSubtle(execution: Execution, method: string, argsJson: string): Promise<string> {
  if (!SUBTLE_METHODS.has(method)) throw new TypeError(`crypto.subtle.${String(method)} is not supported`);
  const args = JSON.parse(String(argsJson), (_key, value) => decodeCryptoArg(execution, value)) as unknown[];
  const subtle = webcrypto.subtle as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const result = await subtle[method]?.(...args);
  return JSON.stringify(encodeCryptoResult(execution, result));
}

function decodeCryptoArg(execution: Execution, value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const tagged = value as { $b?: unknown; $k?: unknown };
  if (typeof tagged.$b === 'string') return new Uint8Array(Buffer.from(tagged.$b, 'latin1'));
  if (typeof tagged.$k === 'number') {
    const key = execution.keys.get(tagged.$k);
    if (!key) throw new TypeError('Unknown CryptoKey');
    return key;
  }
  return value;
}

function encodeCryptoResult(execution: Execution, value: unknown): unknown {
  if (value instanceof ArrayBuffer) return { $b: Buffer.from(value).toString('latin1') };
  if (ArrayBuffer.isView(value)) {
    return { $u8: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('latin1') };
  }
  if (value instanceof CryptoKey) {
    const id = execution.nextKeyId++;
    execution.keys.set(id, value);
    const { type, extractable, algorithm, usages } = value;
    return { $key: { id, type, extractable, algorithm: encodeCryptoResult(execution, algorithm), usages } };
  }
  if (Array.isArray(value)) return value.map((item) => encodeCryptoResult(execution, item));
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).map(([k, v]) => [k, encodeCryptoResult(execution, v)]);
    return Object.fromEntries(entries);
  }
  return value;
}

function cryptoError(error: unknown): string {
  if (error instanceof Error) return JSON.stringify({ name: error.name, message: error.message });
  return JSON.stringify({ name: 'OperationError', message: 'The operation failed' });
}

// URL, randomness ------------------------------------------------------------------------------------------

function parseUrl(input: string, base: string | undefined): string {
  try {
    return urlParts(new URL(String(input), base === undefined ? undefined : String(base)));
  } catch {
    return '';
  }
}

function setUrlPart(href: string, part: string, value: string): string {
  try {
    if (!URL_PARTS.has(part)) return '';
    if (part === 'href') return urlParts(new URL(String(value)));
    const url = new URL(String(href));
    (url as unknown as Record<string, string>)[part] = String(value);
    return urlParts(url);
  } catch {
    return '';
  }
}

function urlParts(url: URL): string {
  const { href, origin, protocol, username, password, host, hostname, port, pathname, search, hash } = url;
  return JSON.stringify({
    href,
    origin,
    protocol,
    username,
    password,
    host,
    hostname,
    port,
    pathname,
    search,
    hash,
  });
}

function randomLatin1(length: number): string {
  const size = Number.isInteger(length) && length > 0 ? Math.min(length, 65536) : 0;
  return Buffer.from(webcrypto.getRandomValues(new Uint8Array(size))).toString('latin1');
}

// ---------------------------------------------------------------------------------------------------------
// The scripts every context runs: the prelude (runner/workers/sandbox-prelude.ts, whose source text is
// evaluated in the context) and the empty script whose only effect is draining the context's microtasks.

const PRELUDE_SCRIPT = new vm.Script(`'use strict';(${sandboxPrelude.toString()})`, {
  filename: 'sandbox-prelude.js',
  importModuleDynamically: rejectDynamicImport,
});
const PUMP_SCRIPT = new vm.Script('', {
  filename: 'sandbox-pump.js',
  importModuleDynamically: rejectDynamicImport,
});
