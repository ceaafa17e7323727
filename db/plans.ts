// Subscription plans and their limits, and the effective limits of an organization: its plan's,
// with any admin quota overrides laid over them.
import { z } from 'zod';
import type { Queryable } from './client.ts';

export const PLAN_NAMES = ['free', 'pro', 'team', 'enterprise'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

export const rateSchema = z.object({
  requestsPerMinute: z.number().int().min(1).max(1_000_000),
  maxBurst: z.number().int().min(1).max(2_000_000),
});
export type Rate = z.infer<typeof rateSchema>;

export const quotaOverridesSchema = z
  .object({
    sync: rateSchema,
    async: rateSchema,
    api: rateSchema,
    /** Spend allowed per billing period, in US dollars. */
    usageLimit: z.number().min(0),
    storageLimitBytes: z.number().int().min(0),
    maxRowsPerTable: z.number().int().min(1),
    maxTables: z.number().int().min(1),
  })
  .partial()
  .strict();
export type QuotaOverrides = z.infer<typeof quotaOverridesSchema>;
export type Limits = Required<QuotaOverrides>;

// Token buckets hold twice the per-minute rate, so a client may burst after a quiet minute.
const rate = (requestsPerMinute: number): Rate => ({ requestsPerMinute, maxBurst: requestsPerMinute * 2 });
// Storage is billed in decimal gigabytes, as providers bill it.
const GB = 1_000_000_000;

export const PLANS: Record<PlanName, Limits> = {
  free: {
    sync: rate(50),
    async: rate(200),
    api: rate(30),
    usageLimit: 5,
    storageLimitBytes: 5 * GB,
    maxRowsPerTable: 50_000,
    maxTables: 5,
  },
  pro: {
    sync: rate(150),
    async: rate(1000),
    api: rate(100),
    usageLimit: 20,
    storageLimitBytes: 50 * GB,
    maxRowsPerTable: 100_000,
    maxTables: 100,
  },
  team: {
    sync: rate(300),
    async: rate(2500),
    api: rate(200),
    usageLimit: 40,
    storageLimitBytes: 500 * GB,
    maxRowsPerTable: 500_000,
    maxTables: 1_000,
  },
  enterprise: {
    sync: rate(600),
    async: rate(5000),
    api: rate(500),
    usageLimit: 200,
    storageLimitBytes: 500 * GB,
    maxRowsPerTable: 1_000_000,
    maxTables: 10_000,
  },
};

/** The plan and limits in force for an organization, overrides included. */
export async function effectiveLimits(
  db: Queryable,
  organizationId: string,
): Promise<{ plan: PlanName; limits: Limits }> {
  const [row] = await db.query<{ plan: PlanName; overrides: QuotaOverrides | null }>(
    `select o.plan, q.overrides from organizations o
       left join quota_overrides q on q.organization_id = o.id where o.id = $1`,
    [organizationId],
  );
  if (!row) throw new Error(`organization ${organizationId} does not exist`);
  return { plan: row.plan, limits: limitsOf(row.plan, row.overrides) };
}

/** A plan's limits with an organization's overrides laid over them. */
export function limitsOf(plan: PlanName, overrides: QuotaOverrides | null): Limits {
  return { ...PLANS[plan], ...(overrides ?? {}) };
}
