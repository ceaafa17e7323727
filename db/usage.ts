// The `limits` object of execution responses: the caller's rate-limit figures and spend against the
// plan. Until live accounting lands (rate limits and usage issue) the figures are the plan's own,
// with full buckets and nothing spent.
import type { Limits, PlanName, Rate } from './plans.ts';

export function limitsObject(plan: PlanName, limits: Limits) {
  const resetAt = new Date(Date.now() + 60_000).toISOString();
  const bucket = (r: Rate) => ({
    requestsPerMinute: r.requestsPerMinute,
    maxBurst: r.maxBurst,
    remaining: r.maxBurst,
    resetAt,
  });
  return {
    workflowExecutionRateLimit: { sync: bucket(limits.sync), async: bucket(limits.async) },
    usage: { currentPeriodCost: 0, limit: limits.usageLimit, plan, isExceeded: false },
  };
}
