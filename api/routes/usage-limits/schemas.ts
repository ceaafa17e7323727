// The answer of GET /api/users/me/usage-limits: the caller's rate-limit buckets, spend this billing
// period and storage, against the plan that bills them.
import { z } from 'zod';
import { PLAN_NAMES } from '../../../db/plans.ts';

const bucket = z.object({
  limit: z.number().int().meta({ description: 'Requests per minute' }),
  remaining: z.number().int(),
  reset: z.iso.datetime().meta({ description: 'When the bucket is full again' }),
  isLimited: z.boolean().meta({ description: 'true when not one request would pass now' }),
  requestsPerMinute: z.number().int(),
  maxBurst: z.number().int(),
  resetAt: z.iso.datetime(),
});

export const usageLimitsSchema = z
  .object({
    success: z.literal(true),
    rateLimit: z.object({ sync: bucket, async: bucket, authType: z.literal('api') }),
    usage: z.object({
      currentPeriodCost: z.number().meta({ description: 'Dollars spent this billing period' }),
      limit: z.number().meta({ description: 'Dollars the plan allows per period' }),
      plan: z.enum(PLAN_NAMES),
      isExceeded: z.boolean(),
      periodStart: z.iso.datetime(),
      periodEnd: z.iso.datetime(),
    }),
    storage: z.object({
      usedBytes: z.number().int(),
      limitBytes: z.number().int(),
      percentUsed: z.number().meta({ description: 'Two decimals' }),
    }),
  })
  .meta({ id: 'UsageLimits' });
