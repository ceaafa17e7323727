// Token-bucket rate limits kept in Postgres, so every API process draws from the same buckets.
// A bucket holds up to maxBurst tokens and refills at requestsPerMinute; each request takes one.
// The arithmetic runs in the database (take_rate_tokens, migration 0003) under the bucket's row
// lock: of a burst of concurrent requests, exactly as many pass as there were tokens.
import { isDb, type Queryable } from './client.ts';
import type { Rate } from './plans.ts';

/** The buckets a billed subject has: sync and async executions, and the /api/v1 endpoints. */
export type BucketKind = 'sync' | 'async' | 'api';

export interface TokenRequest {
  /** The billed subject ('user:<id>' or 'org:<id>'). */
  subject: string;
  kind: BucketKind;
  rate: Rate;
  /** Tokens to take; 0 only reads the bucket. */
  wanted: number;
  /** When set, nothing is granted once the subject's spend in the period reaches it (dollars). */
  spendLimit?: number;
}

/** A bucket after a take: how many of the wanted tokens it gave, and what it held after giving them. */
export interface BucketState {
  granted: number;
  rate: Rate;
  /** Tokens left (fractional: refill is continuous). */
  tokens: number;
  /** The moment `tokens` was computed for. */
  asOf: Date;
  /** The subject's spend in the period, when a spend limit was asked about. */
  spent: number | null;
}

/** What a client is told about a bucket: the figures of the limits object and the headers. */
export interface BucketFigures {
  requestsPerMinute: number;
  maxBurst: number;
  /** Whole requests that would pass now. */
  remaining: number;
  /** When the bucket is full again. */
  resetAt: Date;
  /** Seconds until one more request would pass (0 when one would pass now). */
  retryAfterSeconds: number;
}

export const bucketKey = (subject: string, kind: BucketKind) => `${subject}:${kind}`;

const perMs = (rate: Rate) => rate.requestsPerMinute / 60_000;

// Run alone (not in a caller's transaction), a take is a transaction of its own, and its commit
// waited for the WAL to reach disk: 3.5 ms on the 2-core bench machine's disk, most of an `api`
// bucket's admission and the largest share of a table upsert's latency at concurrency 16. Taken
// `unflushed`, the statement turns `synchronous_commit` off for its own transaction (set_config's
// local setting lasts until the commit, which reads it). What a crash can lose is a take whose
// request changed nothing durable since: WAL is flushed in order, so the durable commit of a
// request's own write (a table upsert's group, an execution's enqueue) makes its take durable too.
// A lost take leaves a bucket fuller than it should be after a crash, never emptier.
const UNFLUSHED = `(select set_config('synchronous_commit', 'off', true)) as unflushed, `;

/**
 * Takes tokens for many requests in one statement. Requests for the same bucket are summed and
 * granted in the order given: `take(...)[i].granted` says how many of request i's tokens it got.
 * `periodStart` (YYYY-MM-DD) is the billing period whose spend a request's `spendLimit` is held to.
 * `unflushed` commits the take without waiting for the disk (see UNFLUSHED); only for a database,
 * never an open transaction, whose every commit it would make unflushed (ignored there).
 */
export async function takeRateTokens(
  db: Queryable,
  requests: TokenRequest[],
  now: Date,
  periodStart?: string,
  options: { unflushed?: boolean } = {},
): Promise<BucketState[]> {
  const byKey = new Map<string, { subject: string; rate: Rate; wanted: number; spendLimit: number | null }>();
  for (const r of requests) {
    const key = bucketKey(r.subject, r.kind);
    const entry = byKey.get(key);
    if (entry) {
      entry.wanted += r.wanted;
      entry.spendLimit ??= r.spendLimit ?? null;
    } else {
      byKey.set(key, {
        subject: r.subject,
        rate: r.rate,
        wanted: r.wanted,
        spendLimit: r.spendLimit ?? null,
      });
    }
  }
  // Sorted, so two batches lock shared buckets in the same order and never deadlock.
  const keys = [...byKey.keys()].sort();
  const entries = keys.map((k) => byKey.get(k) as NonNullable<ReturnType<typeof byKey.get>>);
  const rows = await db.query<{
    bucket_key: string;
    granted: number;
    remaining: number;
    as_of: Date;
    spent: string | null;
  }>(
    `select bucket_key, granted, remaining, as_of, spent
       from ${options.unflushed && isDb(db) ? UNFLUSHED : ''}take_rate_tokens($1::text[], $2::float8[], $3::float8[], $4::int[], $5, $6::text[], $7::numeric[], $8::date)`,
    [
      keys,
      entries.map((e) => e.rate.maxBurst),
      entries.map((e) => perMs(e.rate)),
      entries.map((e) => e.wanted),
      now,
      entries.map((e) => e.subject),
      entries.map((e) => e.spendLimit),
      periodStart ?? null,
    ],
  );
  const left = new Map(rows.map((r) => [r.bucket_key, { ...r, unhanded: r.granted }]));
  return requests.map((r) => {
    const row = left.get(bucketKey(r.subject, r.kind));
    if (!row) throw new Error(`take_rate_tokens returned no row for ${bucketKey(r.subject, r.kind)}`);
    const granted = Math.min(r.wanted, row.unhanded);
    row.unhanded -= granted;
    // As this request sees it: what the bucket held once it, and those before it, took theirs.
    return {
      granted,
      rate: r.rate,
      tokens: row.remaining + row.unhanded,
      asOf: row.as_of,
      spent: row.spent === null ? null : Number(row.spent),
    };
  });
}

/** The client-facing figures of a bucket's state. */
export function bucketFigures(state: Pick<BucketState, 'rate' | 'tokens' | 'asOf'>): BucketFigures {
  const { rate, tokens, asOf } = state;
  const msToFull = Math.max(0, rate.maxBurst - tokens) / perMs(rate);
  const msToNext = tokens >= 1 ? 0 : (1 - tokens) / perMs(rate);
  return {
    requestsPerMinute: rate.requestsPerMinute,
    maxBurst: rate.maxBurst,
    remaining: Math.floor(tokens),
    resetAt: new Date(asOf.getTime() + Math.ceil(msToFull)),
    retryAfterSeconds: Math.ceil(msToNext / 1000),
  };
}

/** The figures of a bucket nobody has drawn from: full. */
export function fullBucket(rate: Rate, now: Date): BucketFigures {
  return bucketFigures({ rate, tokens: rate.maxBurst, asOf: now });
}
