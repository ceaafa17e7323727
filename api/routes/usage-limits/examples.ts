// The example answer of GET /api/users/me/usage-limits (a free plan, a little spent).
import { EX } from '../../openapi/components.ts';

const bucketExample = (limit: number, remaining: number) => ({
  limit,
  remaining,
  reset: EX.reset,
  isLimited: false,
  requestsPerMinute: limit,
  maxBurst: limit * 2,
  resetAt: EX.reset,
});

export const usageLimitsExample = {
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
};
