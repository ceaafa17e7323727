// The bridge of the function pool's worker (runner/sandbox/worker.ts): the host functions the prelude closes
// over (the `Bridge` of runner/sandbox/prelude.ts), one set per context, each acting for the task the
// context serves. They take and return primitives only, never throw, and call back into the context only
// through resolving functions, each followed by a pump (which the task lifecycle does: `BridgeHooks`).
import { webcrypto } from 'node:crypto';
import type { Sandbox } from './contexts.ts';
import { cryptoError, type KeyStore, performSubtle } from './crypto-encoding.ts';
import { sandboxFetch } from './host-fetch.ts';
import type { Bridge } from './prelude/contract.ts';
import type { WorkerOutcome } from './task.ts';

const MAX_LOG_LINES = 1000;
const MAX_LOG_BYTES = 256 * 1024;
const MAX_LOG_LINE_CHARS = 8 * 1024;
const MAX_FETCH_RESPONSE_BYTES = 16 * 1024 * 1024;
const MAX_TIMER_MS = 2 ** 31 - 1;
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

/** What the bridge reads and changes of a running task. */
export interface BridgeTask extends KeyStore {
  logs: string[];
  logBytes: number;
  logsDropped: boolean;
  /** Host operations that will later call back into the context (timers, fetches, crypto). */
  pending: number;
  timers: Map<number, NodeJS.Timeout>;
  nextTimerId: number;
  /** Cancels the task's in-flight fetches when it ends (created by the first fetch). */
  abort: AbortController | null;
  done: boolean;
}

/** The task lifecycle's side: ending a task, and draining its context's microtasks after host work. */
export interface BridgeHooks<E extends BridgeTask> {
  finish(execution: E, outcome: WorkerOutcome, settled: boolean): void;
  schedulePump(execution: E): void;
}

/** Made once per context; each call acts for the task the context serves at the time. */
export function createBridge<E extends BridgeTask>(sandbox: Sandbox<E>, hooks: BridgeHooks<E>): Bridge {
  const task = () => sandbox.execution as E;
  return {
    log: (level, text) => appendLog(task(), level, text),
    settle: (ok, text) => settle(hooks, task(), ok, text),
    setTimer: (ms, fire) => setTimer(hooks, task(), ms, fire),
    clearTimer: (id) => clearTimer(task(), id),
    fetch: (request, resolve, reject) => void bridgeFetch(hooks, task(), request, resolve, reject),
    subtle: (method, args, resolve, reject) =>
      void bridgeSubtle(hooks, task(), method, args, resolve, reject),
    url: (input, base) => parseUrl(input, base),
    urlSet: (href, part, value) => setUrlPart(href, part, value),
    randomBytes: (length) => randomLatin1(length),
    randomUUID: () => webcrypto.randomUUID(),
  };
}

function settle<E extends BridgeTask>(hooks: BridgeHooks<E>, execution: E, ok: boolean, text: string): void {
  if (typeof text !== 'string') return;
  const outcome: WorkerOutcome =
    ok === true ? { ok: true, json: text, logs: [] } : { ok: false, error: text, logs: [] };
  hooks.finish(execution, outcome, true);
}

function appendLog(execution: BridgeTask, level: string, text: string): boolean {
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

function setTimer<E extends BridgeTask>(
  hooks: BridgeHooks<E>,
  execution: E,
  ms: number,
  fire: () => void,
): number {
  if (execution.done || typeof fire !== 'function') return 0;
  const delay = Number.isFinite(ms) ? Math.min(Math.max(ms, 0), MAX_TIMER_MS) : 0;
  const id = execution.nextTimerId++;
  execution.pending++;
  const timer = setTimeout(() => {
    execution.timers.delete(id);
    execution.pending--;
    if (execution.done) return;
    fire();
    hooks.schedulePump(execution);
  }, delay);
  execution.timers.set(id, timer);
  return id;
}

function clearTimer(execution: BridgeTask, id: number): void {
  const timer = execution.timers.get(id);
  if (!timer) return;
  clearTimeout(timer);
  execution.timers.delete(id);
  execution.pending--;
}

/** Runs host work that ends by resolving or rejecting a promise inside the context. */
async function settleLater<E extends BridgeTask>(
  hooks: BridgeHooks<E>,
  execution: E,
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
  hooks.schedulePump(execution);
}

// fetch -------------------------------------------------------------------------------------------------

interface FetchRequest {
  url: string;
  method: string;
  headers: [string, string][];
  body: string | null;
  redirect: RequestRedirect;
}

function bridgeFetch<E extends BridgeTask>(
  hooks: BridgeHooks<E>,
  execution: E,
  request: string,
  resolve: (response: string) => void,
  reject: (message: string) => void,
): Promise<void> {
  return settleLater(
    hooks,
    execution,
    () => performFetch(execution, request),
    resolve,
    reject,
    fetchErrorMessage,
  );
}

async function performFetch(execution: BridgeTask, requestJson: string): Promise<string> {
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

function bridgeSubtle<E extends BridgeTask>(
  hooks: BridgeHooks<E>,
  execution: E,
  method: string,
  args: string,
  resolve: (result: string) => void,
  reject: (error: string) => void,
): Promise<void> {
  return settleLater(
    hooks,
    execution,
    () => performSubtle(execution, method, args),
    resolve,
    reject,
    cryptoError,
  );
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
