// The rate limit of the endpoints other than execute (which judges its own sync and async buckets
// as it admits executions): /api/v1 requests each take a token from the caller's `api` bucket, and
// are refused with 429 and Retry-After when it is empty; other authenticated requests (job polls,
// usage figures) only show that bucket in their X-RateLimit-* headers.
import { createMiddleware } from 'hono/factory';
import type { Principal } from '../../db/api-keys.ts';
import { createBatcher } from '../../db/batcher.ts';
import { onLane } from '../../db/client.ts';
import { type BucketFigures, bucketFigures, takeRateTokens } from '../../db/rate-limits.ts';
import { principalBillingContext } from '../../db/usage.ts';
import { ServiceError } from '../../errors.ts';
import type { ApiDeps, ApiEnv } from '../context.ts';

/** The X-RateLimit-* headers of a bucket (Reset in Unix seconds, as most clients parse it). */
export function rateLimitHeaders(f: BucketFigures): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(f.requestsPerMinute),
    'X-RateLimit-Remaining': String(f.remaining),
    'X-RateLimit-Reset': String(Math.ceil(f.resetAt.getTime() / 1000)),
  };
}

export function apiRateLimit({ db, config, clock }: Pick<ApiDeps, 'db' | 'config' | 'clock'>) {
  // Requests arriving together take their tokens together, in one statement (on the lane: onLane).
  const lane = onLane(db);
  const take = createBatcher(async (asks: { principal: Principal; wanted: number }[]) => {
    const states = await takeRateTokens(
      lane,
      asks.map((a) => {
        const ctx = principalBillingContext(a.principal);
        return { subject: ctx.subject, kind: 'api' as const, rate: ctx.limits.api, wanted: a.wanted };
      }),
      clock(),
      undefined,
      // A token spent is no answer a client relies on: see db/rate-limits.ts UNFLUSHED.
      { unflushed: true },
    );
    return states.map((s) => ({ granted: s.granted, figures: bucketFigures(s) }));
  });

  return createMiddleware<ApiEnv>(async (c, next) => {
    if (!config.BILLING_ENABLED) return next();
    const draws = c.req.path.startsWith('/api/v1/');
    const { granted, figures } = await take({ principal: c.get('principal'), wanted: draws ? 1 : 0 });
    // Set on the context, so error answers from the route carry them too.
    for (const [k, v] of Object.entries(rateLimitHeaders(figures))) c.header(k, v);
    if (draws && granted < 1) {
      throw new ServiceError(
        429,
        `Rate limit exceeded: ${figures.requestsPerMinute} API requests per minute; retry in ${figures.retryAfterSeconds} s`,
        { headers: { 'Retry-After': String(Math.max(1, figures.retryAfterSeconds)) } },
      );
    }
    await next();
  });
}
