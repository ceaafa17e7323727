// The `http` block: one HTTP request to a user-given URL, through the SSRF guard. A non-2xx answer is
// an output (the workflow branches on its status); only failures to get an answer at all are errors.
// With `retry` (ctx.retried), a 408, 429 or 5xx answer is a transient failure instead, as are network
// errors and time-outs, so that the executor asks again.
import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { decompressed, guardedRequest, NetworkError, parseAllowList } from '../../net/network-guard.ts';
import { untilAborted } from '../until-aborted.ts';
import type { BlockType } from './block.ts';
import { isTransientStatus, parseRetryAfter, TransientFailure } from './failures.ts';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const;

// A URL may be templated ("https://<start.host>/x"); it is checked again once references are resolved.
const REFERENCE = /<[^<>\s]+>|\{\{[^{}]+\}\}/;

const schema = z.object({
  method: z.enum(METHODS).default('GET'),
  url: z
    .string()
    .min(1)
    .refine((url) => REFERENCE.test(url) || httpUrlProblem(url) === null, {
      message: 'url must be an absolute http:// or https:// URL',
    }),
  headers: z.record(z.string(), z.string()).optional(),
  query: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  body: z.json().optional(),
  timeoutMs: z.number().int().min(1).max(300_000).default(30_000),
});

export type HttpConfig = z.infer<typeof schema>;

export interface HttpOutput {
  status: number;
  statusText?: string;
  headers: Record<string, string>;
  /** Parsed JSON when the response says it is JSON (and is), else the text. */
  data: unknown;
}

export const httpBlock: BlockType<HttpConfig> = {
  type: 'http',
  schema,
  async run(config, ctx) {
    const url = new URL(checkedUrl(config.url));
    for (const [key, value] of Object.entries(config.query ?? {}))
      url.searchParams.append(key, String(value));

    const headers: Record<string, string> = {};
    for (const [key, value] of Object.entries(config.headers ?? {})) headers[key.toLowerCase()] = value;
    let body: string | undefined;
    // null is what an unset reference resolves to: treat it as no body rather than the text "null".
    if (config.body !== undefined && config.body !== null) {
      const isText = typeof config.body === 'string';
      body = isText ? (config.body as string) : JSON.stringify(config.body);
      headers['content-type'] ??= isText ? 'text/plain; charset=utf-8' : 'application/json';
    }

    const timeoutMs = config.timeoutMs ?? 30_000;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = AbortSignal.any([ctx.signal, timeout]);
    const failure = () =>
      timeout.aborted && !ctx.signal.aborted
        ? new TransientFailure(`request timed out after ${timeoutMs} ms`, `timed out after ${timeoutMs} ms`)
        : new Error('request aborted: the execution was cancelled or timed out');

    const maxBytes = ctx.settings.httpMaxResponseBytes;
    let response: IncomingMessage | undefined;
    try {
      // DNS lookups do not take a signal: without this a slow resolver would outlive the timeout.
      const answer = await untilAborted(
        guardedRequest({
          url,
          method: config.method ?? 'GET',
          headers,
          ...(body === undefined ? {} : { body }),
          allowList: parseAllowList(ctx.settings.httpAllowList),
          signal,
        }),
        signal,
      );
      response = answer.response;
      if (answer.url.href !== url.href) ctx.log(`redirected to ${answer.url.href}`);
      const status = response.statusCode ?? 0;
      if (ctx.retried && isTransientStatus(status)) throw statusFailure(response, answer.url);
      const bytes = await readCapped(response, maxBytes, config.method === 'HEAD');
      return {
        output: {
          status,
          ...(response.statusMessage ? { statusText: response.statusMessage } : {}),
          headers: flattenHeaders(response.headers),
          data: decode(bytes, response.headers['content-type']),
        } satisfies HttpOutput,
      };
    } catch (err) {
      response?.destroy();
      if (signal.aborted) throw failure();
      throw transient(err);
    }
  },
};

/** A 408, 429 or 5xx answer as a failure worth retrying, with the wait the server asked for. */
function statusFailure(response: IncomingMessage, url: URL): TransientFailure {
  const status = `HTTP ${response.statusCode}${response.statusMessage ? ` ${response.statusMessage}` : ''}`;
  const retryAfter = parseRetryAfter(response.headers['retry-after']);
  return new TransientFailure(`${url.origin} answered ${status}`, status, retryAfter);
}

/** Failures to get (or finish reading) an answer are transient; anything else stays as it is. */
function transient(err: unknown): unknown {
  if (err instanceof NetworkError) return new TransientFailure(err.message, err.message);
  // A connection cut while the body streams in surfaces as the socket's own error (ECONNRESET, …).
  const code = (err as { code?: unknown } | null)?.code;
  if (err instanceof Error && typeof code === 'string' && /^(E[A-Z]+|ERR_STREAM_PREMATURE_CLOSE)$/.test(code))
    return new TransientFailure(`reading the response failed: ${err.message}`, `${code}: ${err.message}`);
  return err;
}

function checkedUrl(url: string): string {
  const problem = httpUrlProblem(url);
  if (problem) throw new Error(problem);
  return url;
}

function httpUrlProblem(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `invalid url: ${url}`;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return `url must be http:// or https://, not ${parsed.protocol}//`;
  }
  return null;
}

/** Reads the (decompressed) body, stopping as soon as it passes the cap rather than buffering it all. */
async function readCapped(response: IncomingMessage, maxBytes: number, isHead: boolean): Promise<Buffer> {
  const tooLarge = () => new Error(`response larger than ${maxBytes} bytes`);
  // A HEAD answer declares the length of a body it does not send.
  const declared = isHead ? Number.NaN : Number(response.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge();
  const stream = decompressed(response);
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > maxBytes) throw tooLarge();
      chunks.push(chunk);
    }
  } finally {
    if (stream !== response) stream.destroy();
  }
  return Buffer.concat(chunks, total);
}

function decode(bytes: Buffer, contentType: string | undefined): unknown {
  const text = new TextDecoder(charsetOf(contentType)).decode(bytes);
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase() ?? '';
  if (mediaType === 'application/json' || mediaType.endsWith('+json')) {
    try {
      return JSON.parse(text);
    } catch {
      // A body that claims to be JSON but is not is still an answer: hand over its text.
      return text;
    }
  }
  return text;
}

function charsetOf(contentType: string | undefined): string {
  const charset = /;\s*charset="?([^";\s]+)/i.exec(contentType ?? '')?.[1];
  if (!charset) return 'utf-8';
  try {
    new TextDecoder(charset);
    return charset;
  } catch {
    return 'utf-8';
  }
}

function flattenHeaders(headers: IncomingMessage['headers']): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers)) {
    if (value !== undefined) flat[key] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}
