// Idempotency-Key on the endpoints that do work (execute, row inserts, file and document uploads):
// a client that lost an answer sends the request again with the same key and gets the first
// answer back, with `Idempotent-Replayed: true`, instead of the work being done twice. The key is
// the caller's (one API key's), kept 24 hours from its first use.
//
// - The same key for another method or path, or another body: 422. While the first request is
//   still in flight: 409 with Retry-After (nothing is done). A malformed key: 400.
// - A streamed execute (an event stream, never kept) replays as a reconnect to the execution it
//   started: its events from the first (or after the retry's Last-Event-ID), then live.
// - The body is fingerprinted as it streams to the route (never buffered here: uploads reach
//   100 MB), and a retry's body is read and hashed to decide between replay and 422.
// - Registered before the rate limit, so a replay takes no token; execute admits (tokens, spend)
//   inside its route, which a replay never reaches.
import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { createBatcher } from '../../db/batcher.ts';
import {
  type BodyFingerprint,
  type Claim,
  type ClaimAsk,
  type Completion,
  claimIdempotencyKeys,
  completeIdempotencyKeys,
  type IdempotencyRecord,
  type IdempotencyScope,
  type IdempotentRequest,
  purgeIdempotencyKeys,
  releaseIdempotencyKey,
  renewIdempotencyClaim,
  type StoredAnswer,
} from '../../db/idempotency-keys.ts';
import { ServiceError } from '../../errors.ts';
import type { ApiDeps, ApiEnv } from '../context.ts';

/** How long a key remembers its request and answer. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * How long a pending claim holds its key without news from its request: the request renews it
 * every third of this while it runs (a sync execution may wait minutes, an upload stream longer),
 * so only a process that died mid-request leaves a claim behind, and then for at most this long.
 */
export const IDEMPOTENCY_LEASE_MS = 60_000;
/**
 * The largest answer body kept for replays. Most answers are a few hundred bytes; a sync
 * execution's output can be megabytes (it is kept in full in the execution's row anyway), and a
 * day of such copies would bloat the table. An answer over this is recorded without its body: the
 * work is still never done twice, and a replay answers 410 saying so.
 */
export const MAX_REPLAY_BODY_BYTES = 1024 * 1024;
/** Expired records are purged by the first keyed request after this much (clock) time. */
const PURGE_INTERVAL_MS = 10 * 60 * 1000;

const KEY_FORMAT = /^[\x20-\x7e]{1,255}$/;
export const REPLAYED_HEADER = 'Idempotent-Replayed';
// The headers that describe the answer itself. Per-request ones are not replayed: a replay has its
// own X-Request-Id, and takes no token, so the bucket figures of the first answer would be stale.
// X-Execution-Id names the execution a streamed execute follows: its replay follows it again.
const KEPT_HEADERS = [
  'content-type',
  'content-disposition',
  'content-language',
  'location',
  'etag',
  'x-execution-id',
];
/** Request headers that steer what a request does (execute's mode, streaming): fingerprinted with its body. */
const STEERING_HEADERS = ['x-execution-mode', 'x-stream-response'];

/**
 * Which answers are kept for replay. A 2xx did the work: it must replay, or a retry would do it
 * again (that includes the 202 of a sync execution that outlasted its wait: its job link stays
 * good). 400 and 422 judge the request itself (its body and path: the same request gets the same
 * verdict, and nothing was done); a few 400s depend on state (a table's row cap, a unique value
 * taken, a workflow not deployed), and like Stripe's keys they too replay until the key expires:
 * a client that changes things sends a new key. Every other answer releases the key, so a retry
 * does the work once its cause has passed, and nothing was done meanwhile (each route's work is
 * one transaction; a refused upload removes its bytes): 5xx (our failure), 429 and 402 (limits that
 * refill or lift), 409 (a conflict with other state: a file name taken), 401/403/404 (keys and
 * grants an admin may change) and 413 (storage can be freed; a body over a size cap is never read
 * whole, so it has no fingerprint to keep anyway).
 */
const replays = (status: number) => (status >= 200 && status < 300) || status === 400 || status === 422;

/**
 * Answers the replay of a kept answer whose body was a stream (api/execution-stream-replay.ts), or
 * null when it cannot (the key then answers 410).
 */
export type StreamReplayer = (
  c: Context<ApiEnv>,
  answer: StoredAnswer,
  replayedHeaders: Record<string, string>,
) => Promise<Response | null>;

export function idempotency(
  { db, log, clock }: Pick<ApiDeps, 'db' | 'log' | 'clock'>,
  replayStream: StreamReplayer = async () => null,
) {
  let nextPurgeAt = 0;
  // Claims and answers of concurrent requests share statements: each is a commit, and under load
  // one commit per request would cost keyed requests most of their throughput.
  const claimKey = createBatcher((asks: ClaimAsk[]) => claimIdempotencyKeys(db, asks));
  const completeKey = createBatcher((done: Completion[]) => completeIdempotencyKeys(db, done));

  async function claim(scope: IdempotencyScope, request: IdempotentRequest, now: Date): Promise<Claim> {
    const times = {
      now,
      leaseUntil: new Date(now.getTime() + IDEMPOTENCY_LEASE_MS),
      expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
    };
    // A record committed by a racing request while the claim ran is not in its snapshot: ask again.
    for (let attempt = 0; attempt < 3; attempt++) {
      const claimed = await claimKey({ scope, request, times });
      if (claimed) return claimed;
    }
    throw inFlight();
  }

  return createMiddleware<ApiEnv>(async (c, next) => {
    const key = c.req.header('idempotency-key');
    if (key === undefined) return next();
    if (!KEY_FORMAT.test(key)) {
      throw new ServiceError(400, 'Invalid Idempotency-Key header', {
        details: [
          {
            code: 'invalid_format',
            path: ['Idempotency-Key'],
            message: 'Must be 1 to 255 printable ASCII characters',
          },
        ],
      });
    }
    const now = clock();
    // On write rather than on a schedule: every API process keys requests, but not every process
    // runs pg-boss maintenance; concurrent purges by several processes are harmless. A failed purge
    // only leaves expired records for the next one (a claim takes an expired key over anyway).
    if (now.getTime() >= nextPurgeAt) {
      nextPurgeAt = now.getTime() + PURGE_INTERVAL_MS;
      await purgeIdempotencyKeys(db, now).catch((err: unknown) =>
        log.error('could not purge expired idempotency keys', { err }),
      );
    }
    const scope = { apiKeyId: c.get('principal').keyId, key };
    const url = new URL(c.req.url);
    const request = { method: c.req.method, path: url.pathname + url.search };
    const hash = new BodyHash(multipartBoundary(c.req.header('content-type')));
    // Headers that change what the request does are part of it: the same body sent sync, then
    // with `X-Execution-Mode: async`, is another request.
    for (const name of STEERING_HEADERS) {
      hash.update(Buffer.from(`${name}: ${c.req.header(name)?.trim().toLowerCase() ?? ''}\n`, 'latin1'));
    }

    const claimed = await claim(scope, request, now);
    if (!claimed.claimed) return answerRetry(c, claimed.record, request, hash, replayStream);

    const { token } = claimed;
    const original = c.req.raw;
    if (original.body) {
      c.req.raw = new Request(original, {
        body: original.body.pipeThrough(hashing(hash)),
        duplex: 'half',
      } as RequestInit);
    } else {
      hash.end();
    }
    const renew = () =>
      renewIdempotencyClaim(db, scope, token, new Date(clock().getTime() + IDEMPOTENCY_LEASE_MS)).catch(
        (err: unknown) => log.warn('could not renew an idempotency claim', { err }),
      );
    const heartbeat = setInterval(renew, IDEMPOTENCY_LEASE_MS / 3);
    heartbeat.unref?.();
    try {
      await next();
    } catch (err) {
      clearInterval(heartbeat);
      await release(scope, token);
      throw err;
    }
    clearInterval(heartbeat);

    const status = c.res.status;
    const fingerprint = hash.fingerprint;
    // A 2xx is kept even without a fingerprint (the route answered before reading the body to its
    // end): its work is done, and a retry is then judged by its method and path alone.
    if (!replays(status) || (status >= 300 && !fingerprint)) {
      await release(scope, token);
      return;
    }
    try {
      const answer = await answerOf(c.res);
      if (!(await completeKey({ scope, token, fingerprint, answer }))) {
        log.warn('an idempotency claim was taken over before its request answered', {
          method: request.method,
          path: request.path,
        });
      }
    } catch (err) {
      // The work is done and the client gets its answer; a retry after the lease finds the key free.
      log.error('could not store an idempotent answer', { err });
    }
  });

  async function release(scope: IdempotencyScope, token: string) {
    await releaseIdempotencyKey(db, scope, token).catch((err: unknown) => {
      // The claim then lapses with its lease.
      log.error('could not release an idempotency claim', { err });
    });
  }
}

const inFlight = () =>
  new ServiceError(
    409,
    'A request with this Idempotency-Key is still in progress: retry once it has been answered',
    { headers: { 'Retry-After': '1' } },
  );

/** A retry of a key someone holds: 422 for another request, 409 while in flight, else the replay. */
async function answerRetry(
  c: Context<ApiEnv>,
  record: IdempotencyRecord,
  request: IdempotentRequest,
  hash: BodyHash,
  replayStream: StreamReplayer,
) {
  if (record.method !== request.method || record.path !== request.path) {
    throw new ServiceError(
      422,
      `This Idempotency-Key was used for ${record.method} ${record.path}: send a new key for a new request`,
    );
  }
  if (record.state === 'pending' || !record.answer) throw inFlight();
  if (record.fingerprint && !(await bodyMatches(c.req.raw.body, hash, record.fingerprint))) {
    throw new ServiceError(
      422,
      'This Idempotency-Key was used with a different request body (or X-Execution-Mode): send a new key for a new request',
    );
  }
  return replay(c, record.answer, record.createdAt, replayStream);
}

async function replay(
  c: Context<ApiEnv>,
  answer: StoredAnswer,
  createdAt: Date,
  replayStream: StreamReplayer,
) {
  if (answer.body === null) {
    const stream = await replayStream(c, answer, { [REPLAYED_HEADER]: 'true' });
    if (stream) return stream;
    return c.json(
      {
        error:
          `The request with this Idempotency-Key was answered ${answer.status} at ${createdAt.toISOString()}, ` +
          `but its answer (${answer.bodySize === null ? 'a stream' : `${answer.bodySize} bytes`}) was too large ` +
          `to keep for replays; the work was done and is not repeated. Look its result up ` +
          '(an execution is listed by GET /api/v1/logs), or send a new key to do it again',
      },
      410,
      { [REPLAYED_HEADER]: 'true' },
    );
  }
  return c.body(answer.body as Uint8Array<ArrayBuffer>, answer.status as ContentfulStatusCode, {
    ...answer.headers,
    [REPLAYED_HEADER]: 'true',
  });
}

/** The answer as kept: status, descriptive headers, and a JSON body up to the size kept. */
async function answerOf(res: Response): Promise<StoredAnswer> {
  const headers: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = res.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  // Streams (event streams, downloads) are not read here: that would hold them up.
  if (!/^application\/([\w.+-]+\+)?json\b/i.test(res.headers.get('content-type') ?? '')) {
    return { status: res.status, headers, body: null, bodySize: null };
  }
  const body = new Uint8Array(await res.clone().arrayBuffer());
  return body.length > MAX_REPLAY_BODY_BYTES
    ? { status: res.status, headers, body: null, bodySize: body.length }
    : { status: res.status, headers, body, bodySize: body.length };
}

// Fingerprints. The body's raw bytes are hashed, JSON included: not canonicalised, since a client
// retrying sends the bytes it sent before, and what counts as the same JSON (key order, 1 vs 1.0,
// a key given twice) is not ours to guess; a mismatch is a loud 422, never a silent wrong replay.
// The one exception is a multipart boundary: clients (curl, browsers, most libraries) draw a new
// random one for every send, retries included, so every occurrence of it is blanked before hashing.

/** The boundary of a multipart Content-Type, or null. */
function multipartBoundary(contentType: string | undefined): string | null {
  if (!contentType?.toLowerCase().startsWith('multipart/')) return null;
  const m = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return m ? ((m[1] ?? m[2]) as string) : null;
}

/** SHA-256 of a body as it passes, chunk by chunk, with a multipart boundary blanked. */
class BodyHash {
  readonly #hash = createHash('sha256');
  readonly #boundary: Buffer | null;
  // The end of the last chunk, which may be the start of a boundary split across chunks.
  #carry: Buffer = Buffer.alloc(0);
  #fingerprint: BodyFingerprint | null = null;
  /** Bytes hashed so far. */
  length = 0;

  constructor(boundary: string | null) {
    this.#boundary = boundary ? Buffer.from(boundary, 'latin1') : null;
  }

  /** Set once the whole body has passed. */
  get fingerprint(): BodyFingerprint | null {
    return this.#fingerprint;
  }

  update(chunk: Uint8Array) {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const boundary = this.#boundary;
    if (!boundary) return this.#emit(bytes);
    const buf = this.#carry.length ? Buffer.concat([this.#carry, bytes]) : bytes;
    let from = 0;
    for (let at = buf.indexOf(boundary, from); at >= 0; at = buf.indexOf(boundary, from)) {
      this.#emit(buf.subarray(from, at));
      from = at + boundary.length;
    }
    const keep = Math.max(from, buf.length - (boundary.length - 1));
    this.#emit(buf.subarray(from, keep));
    this.#carry = Buffer.from(buf.subarray(keep));
  }

  end() {
    if (this.#fingerprint) return;
    this.#emit(this.#carry);
    this.#carry = Buffer.alloc(0);
    this.#fingerprint = { sha256: this.#hash.digest(), length: this.length };
  }

  #emit(bytes: Buffer) {
    if (!bytes.length) return;
    this.#hash.update(bytes);
    this.length += bytes.length;
  }
}

/** Passes a body on unchanged, hashing it on the way. */
function hashing(hash: BodyHash) {
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      hash.update(chunk);
      controller.enqueue(chunk);
    },
    flush() {
      hash.end();
    },
  });
}

/**
 * Reads and hashes a retry's body, comparing it with the first request's. Stops reading as soon as
 * it is longer than the first, so a wrong body is never read further than the right one would be.
 */
async function bodyMatches(
  body: ReadableStream<Uint8Array> | null,
  hash: BodyHash,
  first: BodyFingerprint,
): Promise<boolean> {
  if (body) {
    const reader = body.getReader();
    for (;;) {
      const { done, value } = await reader.read().catch(() => {
        throw new ServiceError(400, 'The request body was cut off');
      });
      if (done) break;
      hash.update(value);
      if (hash.length > first.length) {
        await reader.cancel().catch(() => undefined);
        return false;
      }
    }
  }
  hash.end();
  const fingerprint = hash.fingerprint as BodyFingerprint;
  return fingerprint.length === first.length && fingerprint.sha256.equals(first.sha256);
}
