// GET /api/users/me/usage-limits: the caller's rate-limit buckets, spend this billing period and
// storage, against the limits of the plan that bills them. Clients of the original API also read
// isLimited, requestsPerMinute, maxBurst, resetAt and authType.
import { createRoute } from '@hono/zod-openapi';
import type { BucketFigures } from '../../../db/rate-limits.ts';
import { currentUsage, principalBillingContext } from '../../../db/usage.ts';
import type { ApiDeps } from '../../context.ts';
import { ok } from '../../openapi/components.ts';
import { errors } from '../../openapi/error-answers.ts';
import { type Guards, Router } from '../router.ts';
import { usageLimitsExample } from './examples.ts';
import { usageLimitsSchema } from './schemas.ts';

export const getUsageLimitsRoute = createRoute({
  method: 'get',
  path: '/api/users/me/usage-limits',
  operationId: 'getUsageLimits',
  // Any key reads its own limits: they describe the key, no workspace's data
  scope: null,
  tags: ['Usage'],
  summary: 'Get usage limits',
  description:
    "The caller's execution rate-limit buckets (sync and async), spend this billing period (UTC " +
    'calendar month) and storage use, against the limits of the plan that bills them. Does not draw ' +
    'from a rate-limit bucket.',
  responses: {
    200: ok(
      { description: 'The usage-limits record', schema: usageLimitsSchema, example: usageLimitsExample },
      'shown',
    ),
    ...errors({}, { metering: 'shown' }),
  },
});

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

export function usageLimitRoutes({ db, config, clock }: ApiDeps, guards: Guards) {
  return new Router(guards, { rateLimited: true }).openapi(getUsageLimitsRoute, async (c) => {
    const ctx = principalBillingContext(c.get('principal'));
    const usage = await currentUsage(db, ctx, clock());
    const limitBytes = ctx.limits.storageLimitBytes;
    return c.json(
      {
        success: true as const,
        rateLimit: {
          sync: bucket(usage.buckets.sync),
          async: bucket(usage.buckets.async),
          authType: 'api' as const,
        },
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
      },
      200,
    );
  }).app;
}
