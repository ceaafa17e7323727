// Retries per block (DESIGN.md "Run control"): the `retry` field every block may carry, and the loop
// that runs a block's attempts. What is retried is decided by the kind of failure a block throws
// (runner/blocks/failures.ts); a cancelled or timed-out run is never retried, and stops the loop at
// once, in a delay too. The delay between attempts is one call (`RetryDelay`), so that waiting
// in-process can later be replaced by parking the execution for long delays.
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { CodeFailure, TransientFailure } from '../blocks/failures.ts';
import type { PendingRetry } from './park.ts';

/** Longest delay between two attempts, for delayMs and maxDelayMs. */
export const MAX_RETRY_DELAY_MS = 3_600_000;
const DEFAULT_MAX_DELAY_MS = 30_000;

export const retrySchema = z
  .object({
    maxAttempts: z.number().int().min(1).max(10).default(3),
    delayMs: z.number().int().min(0).max(MAX_RETRY_DELAY_MS).default(1000),
    backoff: z.enum(['fixed', 'exponential']).default('exponential'),
    maxDelayMs: z.number().int().min(0).max(MAX_RETRY_DELAY_MS).optional(),
    jitter: z.boolean().default(true),
    /** Failures retried besides the transient ones: "error" = whatever a function's code raises. */
    retryOn: z
      .array(z.enum(['error']))
      .max(1)
      .optional(),
  })
  .strict()
  .refine((r) => r.maxDelayMs === undefined || r.maxDelayMs >= r.delayMs, {
    message: 'maxDelayMs must not be below delayMs',
    path: ['maxDelayMs'],
  });

export interface RetryPolicy {
  maxAttempts: number;
  delayMs: number;
  backoff: 'fixed' | 'exponential';
  maxDelayMs: number;
  jitter: boolean;
  retryCodeErrors: boolean;
}

/** Block types whose `retry` may name `retryOn`: their failures come from user code. */
export const RETRY_ON_TYPES = new Set(['function']);

/** Waits `ms` before the next attempt; rejects with the signal's reason as soon as it aborts. */
export type RetryDelay = (ms: number, signal: AbortSignal) => Promise<void>;

export const waitInProcess: RetryDelay = (ms, signal) => sleep(ms, undefined, { signal });

// Definitions are cached per deployed version: their block objects live on, so parse each once.
const policies = new WeakMap<object, RetryPolicy>();

/** The block's policy, or undefined when it carries no `retry`. Definitions were validated at deploy. */
export function retryPolicy(block: { readonly [field: string]: unknown }): RetryPolicy | undefined {
  if (block.retry === undefined || block.retry === null) return undefined;
  const known = policies.get(block);
  if (known) return known;
  const r = retrySchema.parse(block.retry);
  const policy: RetryPolicy = {
    maxAttempts: r.maxAttempts,
    delayMs: r.delayMs,
    backoff: r.backoff,
    maxDelayMs: r.maxDelayMs ?? Math.max(DEFAULT_MAX_DELAY_MS, r.delayMs),
    jitter: r.jitter,
    retryCodeErrors: r.retryOn?.includes('error') ?? false,
  };
  policies.set(block, policy);
  return policy;
}

/**
 * The wait before attempt `next` (2, 3, …): the server's Retry-After when it gave one, else delayMs
 * (fixed) or delayMs·2^(next−2) (exponential); capped by maxDelayMs. Full jitter draws uniformly from
 * [0, that]; a Retry-After is kept as asked (capped), since the server named the moment.
 */
export function retryDelayMs(
  policy: RetryPolicy,
  next: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, policy.maxDelayMs);
  const base = policy.backoff === 'fixed' ? policy.delayMs : policy.delayMs * 2 ** (next - 2);
  const capped = Math.min(base, policy.maxDelayMs);
  return policy.jitter ? Math.floor(random() * (capped + 1)) : capped;
}

/** Why an attempt failed, for the list in the final error; null when the failure is not retried. */
function retryableReason(err: unknown, policy: RetryPolicy): string | null {
  if (err instanceof TransientFailure) return err.reason;
  if (err instanceof CodeFailure && policy.retryCodeErrors) return err.message;
  return null;
}

/**
 * Runs `attempt(1)`, `attempt(2)`, … until one succeeds, a failure is not retryable, or maxAttempts
 * are spent: then the block fails with an error that lists each attempt's cause. `from`: a parked
 * retry going on (runner/executor/park.ts). `park` is offered each delay first; it throws to park.
 */
export async function withRetries<T>(
  policy: RetryPolicy,
  signal: AbortSignal,
  delay: RetryDelay,
  attempt: (n: number) => Promise<T>,
  from?: PendingRetry,
  park?: (ms: number, next: PendingRetry) => void,
): Promise<T> {
  const causes: string[] = [...(from?.causes ?? [])];
  for (let n = from?.attempt ?? 1; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      const reason = signal.aborted ? null : retryableReason(err, policy);
      if (reason === null) throw err;
      causes.push(reason);
      if (n >= policy.maxAttempts) throw exhausted(causes);
      const retryAfter = err instanceof TransientFailure ? err.retryAfterMs : undefined;
      const ms = retryDelayMs(policy, n + 1, retryAfter);
      park?.(ms, { attempt: n + 1, causes: [...causes] });
      await delay(ms, signal);
      // A wait that ends on its own as the run stops must not start another attempt.
      signal.throwIfAborted();
    }
  }
}

function exhausted(causes: string[]): Error {
  const list = causes.map((c, i) => `#${i + 1} ${c}`).join('; ');
  const n = causes.length;
  return new Error(`gave up after ${n} attempt${n === 1 ? '' : 's'}: ${list}`);
}
