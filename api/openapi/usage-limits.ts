// OpenAPI: GET /api/users/me/usage-limits (3), the caller's rate-limit buckets, spend this billing
// period and storage, against the plan that bills them.
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { PLAN_NAMES } from '../../db/plans.ts';
import { EX, errors, ok } from './components.ts';

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

const bucketExample = (limit: number, remaining: number) => ({
  limit,
  remaining,
  reset: EX.reset,
  isLimited: false,
  requestsPerMinute: limit,
  maxBurst: limit * 2,
  resetAt: EX.reset,
});

export function registerUsageLimits(registry: OpenAPIRegistry) {
  registry.registerPath({
    method: 'get',
    path: '/api/users/me/usage-limits',
    operationId: 'getUsageLimits',
    tags: ['Usage'],
    summary: 'Get usage limits',
    description:
      "The caller's execution rate-limit buckets (sync and async), spend this billing period (UTC " +
      'calendar month) and storage use, against the limits of the plan that bills them. Does not draw ' +
      'from a rate-limit bucket.',
    responses: {
      200: ok(
        {
          description: 'The usage-limits record',
          schema: usageLimitsSchema,
          example: {
            success: true,
            rateLimit: { sync: bucketExample(50, 97), async: bucketExample(200, 400), authType: 'api' },
            usage: {
              currentPeriodCost: 0.015,
              limit: 5,
              plan: 'free',
              isExceeded: false,
              periodStart: '2026-01-01T00:00:00.000Z',
              periodEnd: '2026-02-01T00:00:00.000Z',
            },
            storage: { usedBytes: 48213, limitBytes: 5000000000, percentUsed: 0 },
          },
        },
        'shown',
      ),
      ...errors({}, { metering: 'shown' }),
    },
  });
}
