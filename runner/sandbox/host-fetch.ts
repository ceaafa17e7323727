// The host side of the sandbox's fetch (runner/sandbox/worker.ts relays the prelude's requests here): an
// HTTP client that goes through the http block's SSRF guard (net/network-guard.ts) and answers
// with a Web Response, as the host's fetch would, so that the sandbox's fetch behaves like the real one.
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
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
} from '../../net/network-guard.ts';
import { untilAborted } from '../until-aborted.ts';

/** What the sandbox's fetch hands to `sandboxFetch`, already checked and normalized by the prelude. */
export interface SandboxFetchInit {
  method: string;
  headers: [string, string][];
  body: Uint8Array | null;
  redirect: RequestRedirect;
  /** Aborted when the task ends: cancels the request, and the response body being read. */
  signal: AbortSignal;
}

// The operator's allow-list, as the pool gives it in `workerData` (WorkerData.httpAllowList).
const allowList = parseAllowList(
  (workerData as { httpAllowList?: string[] } | undefined)?.httpAllowList ?? [],
);
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
 * (net/network-guard.ts): every hop's destination is vetted against private, loopback and
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
