// GET /api/users/me/usage-limits: the caller's rate-limit buckets, spend this billing period and
// storage, against the limits of the plan that bills them. Clients of the original API also read
// isLimited, requestsPerMinute, maxBurst, resetAt and authType.
import { Hono } from 'hono';
import type { BucketFigures } from '../../db/rate-limits.ts';
import { currentUsage, principalBillingContext } from '../../db/usage.ts';
import type { ApiDeps, ApiEnv } from '../context.ts';

function bucket(f: BucketFigures) {
  const resetAt = f.resetAt.toISOString();
  return {
    limit: f.requestsPerMinute,
    remaining: f.remaining,
    reset: resetAt,
    isLimited: f.remaining < 1,
    requestsPerMinute: f.requestsPerMinute,
    maxBurst: f.maxBurst,
    resetAt,
  };
}

export function usageLimitRoutes({ db, config, clock }: ApiDeps) {
  return new Hono<ApiEnv>().get('/', async (c) => {
    const ctx = principalBillingContext(c.get('principal'));
    const usage = await currentUsage(db, ctx, clock());
    const limitBytes = ctx.limits.storageLimitBytes;
    return c.json({
      success: true,
      rateLimit: { sync: bucket(usage.buckets.sync), async: bucket(usage.buckets.async), authType: 'api' },
      usage: {
        currentPeriodCost: usage.spend,
        limit: ctx.limits.usageLimit,
        plan: ctx.plan,
        // With billing off nothing is metered, so nothing can be exceeded.
        isExceeded: config.BILLING_ENABLED && usage.spend >= ctx.limits.usageLimit,
        periodStart: usage.period.start.toISOString(),
        periodEnd: usage.period.end.toISOString(),
      },
      storage: {
        usedBytes: usage.storageUsedBytes,
        limitBytes,
        // Two decimals: 0.01 % of 5 GB is 500 kB.
        percentUsed: limitBytes ? Math.round((usage.storageUsedBytes / limitBytes) * 10_000) / 100 : 0,
      },
    });
  });
}
