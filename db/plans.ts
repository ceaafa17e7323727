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
const GiB = 1024 ** 3;

export const PLANS: Record<PlanName, Limits> = {
  free: {
    sync: rate(10),
    async: rate(50),
    api: rate(60),
    usageLimit: 10,
    storageLimitBytes: 5 * GiB,
    maxRowsPerTable: 10_000,
    maxTables: 5,
  },
  pro: {
    sync: rate(25),
    async: rate(200),
    api: rate(300),
    usageLimit: 50,
    storageLimitBytes: 50 * GiB,
    maxRowsPerTable: 100_000,
    maxTables: 50,
  },
  team: {
    sync: rate(75),
    async: rate(500),
    api: rate(600),
    usageLimit: 500,
    storageLimitBytes: 500 * GiB,
    maxRowsPerTable: 1_000_000,
    maxTables: 200,
  },
  enterprise: {
    sync: rate(150),
    async: rate(1000),
    api: rate(1200),
    usageLimit: 5000,
    storageLimitBytes: 1024 * GiB,
    maxRowsPerTable: 10_000_000,
    maxTables: 1000,
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
  return { plan: row.plan, limits: { ...PLANS[row.plan], ...(row.overrides ?? {}) } };
}
