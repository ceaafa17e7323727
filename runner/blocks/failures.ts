// The kinds of block failure the executor's retry loop (runner/executor/retry.ts) tells apart. A block
// throws one of these to say what its failure was; any other error is final: a bad config, a refused
// destination, a response too large, a cancellation.

/**
 * A failure that may pass on its own: a network error, a time-out, or an answer of 408, 429 or 5xx.
 * Retried when the block carries `retry`. `reason` is the short cause for the attempt list ("HTTP 503",
 * "connection refused"); `retryAfterMs` is what the other side asked for in `Retry-After`.
 */
export class TransientFailure extends Error {
  readonly reason: string;
  readonly retryAfterMs: number | undefined;
  constructor(message: string, reason: string, retryAfterMs?: number) {
    super(message);
    this.name = 'TransientFailure';
    this.reason = reason;
    this.retryAfterMs = retryAfterMs;
  }
}

/** An error the block's user code raised (a function's throw or limit): retried only on `retryOn: ["error"]`. */
export class CodeFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CodeFailure';
  }
}

/** Statuses worth asking again: the server timed out, is rate limiting, or failed on its side. */
export function isTransientStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status <= 599);
}

/**
 * A `Retry-After` header in milliseconds from `now`: delay-seconds or an HTTP date (RFC 9110 10.2.3).
 * Undefined when absent or unreadable; a date in the past means "now" (0).
 */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}
