// The worker module of the function pool (runner/sandbox/pool.ts): runs one user function body (a workflow's
// function block) per task, in a node:vm context that holds only Web-standard globals (a new one, or one
// kept warm for the same function of the same workspace: runner/sandbox/contexts.ts). Those globals
// are sandbox-realm code (runner/sandbox/prelude.ts); whatever they need from the host (network,
// URL parsing, Web Crypto, timers, console) crosses a narrow bridge, defined here, that carries only
// primitives, so no host object (whose `.constructor.constructor` is the host's `Function`, and so
// `process`) is ever reachable from user code.
//
// How user code is kept on a leash:
// - Every piece of user code runs inside `script.runInContext(...)`: the first run starts the function, and
//   later "pump" runs (an empty script) drain the context's own microtask queue (`microtaskMode:
//   'afterEvaluate'`), so synchronous loops and endless promise chains both keep this thread inside a run.
// - A function waiting on host work (timers, fetch) ends at its time limit through this thread's own
//   timer. A run that never returns is stopped by the pool, which terminates this worker once the task has
//   been running past its limit (the task's start time is shared with it through `WorkerData.startedAt`).
//   vm's own `timeout` option is not used: it starts a watchdog thread on every call, which measured about
//   half the cost of a short function.
// - The host only ever calls into the context through promise resolving functions (V8 built-ins) with
//   primitive arguments, then pumps; it never calls a user function or reads a user object directly.
// - Memory is the pool's job too (worker `resourceLimits`, and a watch on the worker's heap limit and
//   ArrayBuffer memory: runner/threads/slots.ts). Past its heap limit, this worker goes on, with room to
//   spare, until the pool stops it (the heap guard, runner/threads/worker-slot.ts); a function that ends in
//   the meantime is not answered for.
import { webcrypto } from 'node:crypto';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { stripTypeScriptTypes } from 'node:module';
import { Readable } from 'node:stream';
import { getHeapStatistics } from 'node:v8';
import vm from 'node:vm';
import { workerData } from 'node:worker_threads';
import {
  decompressed,
  describeNetworkError,
  type GuardedRequest,
  type GuardedResponse,
  guardedRequest,
  parseAllowList,
  pinnedLookup,
  RefusedDestinationError,
  vetHost,
} from '../blocks/network-guard.ts';
import { HEAP_LIMIT_BYTES, pastHeapLimit, registerTaskSlot, slotTable } from '../threads/worker-slot.ts';
import { untilAborted } from '../until-aborted.ts';
import { type Sandbox, sandboxContexts } from './contexts.ts';
import { type Bridge, SUBTLE_METHODS } from './prelude.ts';

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

/** What the sandbox's fetch hands to `sandboxFetch`, already checked and normalized by the prelude. */
export interface SandboxFetchInit {
  method: string;
  headers: [string, string][];
  body: Uint8Array | null;
  redirect: RequestRedirect;
  /** Aborted when the task ends: cancels the request, and the response body being read. */
  signal: AbortSignal;
}

const allowList = parseAllowList((workerData as WorkerData | undefined)?.httpAllowList ?? []);
// As fetch does (the guard's own default is 5).
const MAX_REDIRECTS = 20;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);
// Headers fetch sends unless told otherwise (some APIs refuse a request without a user agent).
const DEFAULT_HEADERS: [string, string][] = [
  ['accept', '*/*'],
  ['user-agent', 'node'],
  ['accept-encoding', 'gzip, deflate, br'],
];

/**
 * The hook through which sandboxed code reaches the network, through the http block's SSRF guard
 * (runner/blocks/network-guard.ts): every hop's destination is vetted against private, loopback and
 * link-local addresses (unless the allow-list lets it through) and the socket is pinned to the vetted
 * addresses. Failures reject with a TypeError whose message is fit for the user: "fetch refused: …" for
 * a destination the guard refuses, "fetch failed: …" for the rest.
 */
export async function sandboxFetch(url: string, init: SandboxFetchInit): Promise<Response> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new TypeError(`Invalid URL: ${url}`);
  }
  // data: URLs never leave the process: the host's fetch decodes them.
  if (target.protocol === 'data:') return fetch(target.href, { method: init.method, signal: init.signal });
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    throw new TypeError(`fetch refused: only http: and https: URLs are allowed, not ${target.protocol}`);
  }
  if (/^(connect|trace|track)$/i.test(init.method)) {
    throw new TypeError(`'${init.method}' HTTP method is unsupported.`);
  }
  if (init.redirect !== 'follow' && init.redirect !== 'manual' && init.redirect !== 'error') {
    throw new TypeError(`Invalid redirect mode: ${String(init.redirect)}`);
  }
  const headers: Record<string, string> = Object.create(null);
  for (const [name, value] of init.headers) {
    const key = name.toLowerCase();
    headers[key] = Object.hasOwn(headers, key) ? `${headers[key]}, ${value}` : value;
  }
  for (const [name, value] of DEFAULT_HEADERS) if (!Object.hasOwn(headers, name)) headers[name] = value;
  const request: GuardedRequest = {
    url: target,
    method: init.method,
    headers,
    ...(init.body ? { body: init.body } : {}),
    allowList,
    signal: init.signal,
    maxRedirects: MAX_REDIRECTS,
  };
  let answer: GuardedResponse;
  try {
    const sent = init.redirect === 'follow' ? guardedRequest(request) : requestOnce(request, init.redirect);
    // DNS lookups take no signal: without this, a slow resolver would hold the fetch past its cancellation.
    answer = await untilAborted(sent, init.signal);
  } catch (error) {
    if (init.signal.aborted) throw init.signal.reason;
    throw fetchError(error);
  }
  return webResponse(answer, target, init);
}

/** One hop, not following redirects (redirect modes "manual" and "error"), through the same guard. */
async function requestOnce(req: GuardedRequest, redirect: 'manual' | 'error'): Promise<GuardedResponse> {
  const addresses = await vetHost(req.url.hostname, req.allowList);
  req.signal.throwIfAborted();
  const client = req.url.protocol === 'https:' ? https : http;
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const request = client.request(req.url, {
      method: req.method,
      headers: req.headers,
      lookup: pinnedLookup(addresses),
      agent: false,
      signal: req.signal,
    });
    request.once('response', resolve);
    request.once('error', (err: NodeJS.ErrnoException) => {
      if (req.signal.aborted) reject(req.signal.reason);
      else reject(new Error(`request to ${req.url.origin} failed: ${describeNetworkError(err)}`));
    });
    request.end(req.body);
  });
  if (redirect === 'error' && REDIRECT_STATUSES.has(response.statusCode ?? 0)) {
    response.destroy();
    throw new Error('unexpected redirect');
  }
  return { response, url: req.url };
}

function fetchError(error: unknown): TypeError {
  if (error instanceof RefusedDestinationError) {
    return new TypeError(`fetch refused: ${error.message.replace(/^refused to connect to /, '')}`);
  }
  return new TypeError('fetch failed', { cause: error });
}

/** The guard's answer as a Web Response whose body streams (decompressed) from the socket. */
function webResponse({ response: message, url }: GuardedResponse, requested: URL, init: SandboxFetchInit) {
  const onAbort = () => message.destroy(init.signal.reason);
  init.signal.addEventListener('abort', onAbort, { once: true });
  message.once('close', () => init.signal.removeEventListener('abort', onAbort));
  const status = message.statusCode ?? 0;
  if (status < 200 || status > 599) {
    message.destroy();
    throw new TypeError('fetch failed', { cause: new Error(`invalid response status ${status}`) });
  }
  const headers = new Headers();
  const raw = message.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    try {
      headers.append(raw[i] as string, raw[i + 1] as string);
    } catch {
      // A header fetch would not accept either: left out.
    }
  }
  const empty = init.method.toUpperCase() === 'HEAD' || NULL_BODY_STATUSES.has(status);
  if (empty) message.resume();
  const body = empty ? null : (Readable.toWeb(decompressed(message)) as ReadableStream<Uint8Array>);
  let response: Response;
  try {
    response = new Response(body, { status, statusText: message.statusMessage ?? '', headers });
  } catch {
    // A status text fetch would not accept: dropped (the constructor checks it before taking the body).
    response = new Response(body, { status, headers });
  }
  const final = withoutHash(url);
  Object.defineProperties(response, {
    url: { value: final },
    redirected: { value: final !== withoutHash(requested) },
  });
  return response;
}

function withoutHash(url: URL): string {
  const copy = new URL(url);
  copy.hash = '';
  return copy.href;
}

const ENTRY_NAME = '__wf_run__';
const SCRIPT_FILENAME = 'function.js';
const MAX_CACHED_SCRIPTS = 256;
const MAX_LOG_LINES = 1000;
const MAX_LOG_BYTES = 256 * 1024;
const MAX_LOG_LINE_CHARS = 8 * 1024;
const MAX_FETCH_RESPONSE_BYTES = 16 * 1024 * 1024;
const MAX_TIMER_MS = 2 ** 31 - 1;
const SUBTLE_METHOD_SET = new Set(SUBTLE_METHODS);
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
  const heap = getHeapStatistics();
  registerTaskSlot(slots, task.slot, heap.external_memory);
  sandboxes.checkHeap(heap.used_heap_size, memoryLimitBytes);
  let script: vm.Script;
  try {
    script = compile(task.code, task.language);
  } catch (error) {
    return { ok: false, error: compileErrorMessage(error), logs: [] };
  }
  return new Promise<WorkerOutcome>((resolve) => {
    const execution = createExecution(task, resolve);
    if (!execution) {
      resolve({ ok: false, error: 'Function execution failed inside the sandbox', logs: [] });
      return;
    }
    current = execution;
    run(execution, script);
  });
}

interface Execution {
  timeoutMs: number;
  deadline: number;
  /** The context it runs in, with that context's own TypeError. */
  sandbox: Sandbox<Execution>;
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
  /** Ended by its own settle (returned or threw) with no host work pending: its context may serve again. */
  clean: boolean;
  resolve(outcome: WorkerOutcome): void;
}

/** The execution this worker is running (a worker runs one task at a time). */
let current: Execution | null = null;

const slots = slotTable((workerData as WorkerData | undefined)?.slots);
const startTable = (workerData as WorkerData | undefined)?.startedAt
  ? new BigInt64Array((workerData as WorkerData).startedAt)
  : null;

/** Tells the pool when this slot's task started its clock: the pool's deadline is the worker's. */
function markStarted(slot: number, now: number): void {
  if (!startTable || !Number.isInteger(slot) || slot < 0 || slot >= startTable.length) return;
  Atomics.store(startTable, slot, BigInt(Math.floor(performance.timeOrigin + now)));
}

const memoryLimitBytes = (workerData as WorkerData | undefined)?.memoryLimitBytes ?? HEAP_LIMIT_BYTES;
const sandboxes = sandboxContexts<Execution>({
  bridge: createBridge,
  entryName: ENTRY_NAME,
  filename: SCRIPT_FILENAME,
  importModuleDynamically: rejectDynamicImport,
});

function createExecution(task: WorkerTask, resolve: (outcome: WorkerOutcome) => void): Execution | null {
  const sandbox = sandboxes.take(typeof task.reuseKey === 'string' ? task.reuseKey : null, task.scope);
  if (!sandbox) return null;
  const now = performance.now();
  markStarted(task.slot, now);
  const execution: Execution = {
    timeoutMs: task.timeoutMs,
    deadline: now + task.timeoutMs,
    sandbox,
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
    clean: false,
    resolve,
  };
  sandbox.execution = execution;
  return execution;
}

function run(execution: Execution, script: vm.Script): void {
  execution.deadlineTimer = setTimeout(() => finishTimedOut(execution), execution.timeoutMs);
  runInContext(execution, script);
}

/** Runs a script in the execution's context (unless its time is up), then checks whether the function ended. */
function runInContext(execution: Execution, script: vm.Script): void {
  if (execution.deadline <= performance.now()) {
    finishTimedOut(execution);
    return;
  }
  try {
    script.runInContext(execution.sandbox.context);
  } catch {
    // Only the host can throw here: neither the entry call nor a microtask drain lets user errors escape.
    finish(execution, { ok: false, error: 'Function execution failed inside the sandbox', logs: [] });
    return;
  }
  // Settled in this run: the microtasks queued after the settle have run too, so the context is idle.
  if (execution.clean) {
    execution.clean = false;
    sandboxes.release(execution.sandbox);
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

function finish(execution: Execution, outcome: WorkerOutcome, settled = false): void {
  if (execution.done) return;
  execution.done = true;
  // A function that went past the heap limit gets no answer: the pool stops this worker and reports it.
  const overLimit = pastHeapLimit();
  execution.clean = settled && execution.pending === 0 && !overLimit;
  if (current === execution) current = null;
  clearTimeout(execution.deadlineTimer);
  // Pending timers and requests must not outlive the task.
  for (const timer of execution.timers.values()) clearTimeout(timer);
  execution.timers.clear();
  execution.abort?.abort();
  execution.keys.clear();
  if (overLimit) return;
  if (execution.logsDropped) execution.logs.push('[console output truncated]');
  execution.resolve({ ...outcome, logs: execution.logs });
  sandboxes.prepareSpare();
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
  throw new execution.sandbox.contextTypeError('import() is not available in function code');
}

/** Dynamic import can only be refused with a sandbox-realm error when this flag is on (see pool.ts). */
function assertVmModulesFlag(): void {
  const flags = `${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`;
  if (!flags.includes('--experimental-vm-modules')) {
    throw new Error(
      'runner/sandbox/worker.ts must run with --experimental-vm-modules (see runner/sandbox/pool.ts)',
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

/** Made once per context; each call acts for the task the context serves at the time. */
function createBridge(sandbox: Sandbox<Execution>): Bridge {
  const task = () => sandbox.execution as Execution;
  return {
    log: (level, text) => appendLog(task(), level, text),
    settle: (ok, text) => settle(task(), ok, text),
    setTimer: (ms, fire) => setTimer(task(), ms, fire),
    clearTimer: (id) => clearTimer(task(), id),
    fetch: (request, resolve, reject) => void bridgeFetch(task(), request, resolve, reject),
    subtle: (method, args, resolve, reject) => void bridgeSubtle(task(), method, args, resolve, reject),
    url: (input, base) => parseUrl(input, base),
    urlSet: (href, part, value) => setUrlPart(href, part, value),
    randomBytes: (length) => randomLatin1(length),
    randomUUID: () => webcrypto.randomUUID(),
  };
}

function settle(execution: Execution, ok: boolean, text: string): void {
  if (typeof text !== 'string') return;
  const outcome: WorkerOutcome =
    ok === true ? { ok: true, json: text, logs: [] } : { ok: false, error: text, logs: [] };
  finish(execution, outcome, true);
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
    redirect: String(request.redirect) as RequestRedirect,
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
  if (!SUBTLE_METHOD_SET.has(method)) throw new TypeError(`crypto.subtle.${String(method)} is not supported`);
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
// The empty script whose only effect is draining a context's microtasks.

const PUMP_SCRIPT = new vm.Script('', {
  filename: 'sandbox-pump.js',
  importModuleDynamically: rejectDynamicImport,
});
