// An organization's standing against its limits, as the admin console shows it: the plan, the limits
// with overrides applied, and per billed subject the spend this billing period and the bytes stored,
// read with the same functions that admission and the usage-limits endpoint use. Team and enterprise
// pool everything under the organization (one subject); free and pro bill each workspace's billed
// user, so there is one subject per such user (the organization's owners first, even before they
// have a workspace), and each one's figures count that user's use in every free or pro organization:
// that is the total the limit is checked against.
import type { Queryable } from './client.ts';
import { getQuotas } from './quotas.ts';
import { billingContext, billingPeriod, currentUsage } from './usage.ts';

export interface SubjectUsage {
  /** 'org:<id>' or 'user:<id>': the key spend and storage are kept under. */
  subject: string;
  /** The billed user; null for the organization's pooled subject. */
  user: { id: string; name: string; email: string } | null;
  /** This organization's workspaces billed to the subject. */
  workspaceIds: string[];
  spend: { used: number; limit: number; isExceeded: boolean };
  storage: { usedBytes: number; limitBytes: number };
  /** The execution buckets now (read, not drawn from). */
  rateLimit: {
    sync: { requestsPerMinute: number; maxBurst: number; remaining: number; resetAt: string };
    async: { requestsPerMinute: number; maxBurst: number; remaining: number; resetAt: string };
  };
}

type SubjectRow = {
  user_id: string | null;
  name: string | null;
  email: string | null;
  workspace_ids: string[] | null;
};

/** The organization's quotas and each billed subject's use now; 404 for an unknown organization. */
export async function quotaUsage(db: Queryable, organizationId: string, now: Date, billingEnabled: boolean) {
  const quotas = await getQuotas(db, organizationId);
  const pooled = quotas.plan === 'team' || quotas.plan === 'enterprise';
  const rows = pooled
    ? await db.query<SubjectRow>(
        `select null::uuid as user_id, null::text as name, null::text as email,
                coalesce(array_agg(id::text order by created_at, id), '{}') as workspace_ids
           from workspaces where organization_id = $1`,
        [organizationId],
      )
    : await db.query<SubjectRow>(
        // The owners (current members), then every other user a workspace of the organization bills.
        `with billed as (
           select user_id, min(rank) as rank from (
             select m.user_id, 0 as rank from members m
              where m.organization_id = $1 and m.role = 'owner' and m.departed_at is null
             union all
             select w.billed_account_user_id, 1 from workspaces w where w.organization_id = $1) s
           group by user_id)
         select u.id as user_id, u.name, u.email,
                array(select w.id::text from workspaces w
                                where w.organization_id = $1 and w.billed_account_user_id = u.id
                                order by w.created_at, w.id) as workspace_ids
           from billed b join users u on u.id = b.user_id
          order by b.rank, u.name, u.id`,
        [organizationId],
      );
  const subjects = await Promise.all(
    rows.map(async (r): Promise<SubjectUsage> => {
      const ctx = billingContext(quotas.plan, quotas.overrides, organizationId, r.user_id);
      const usage = await currentUsage(db, ctx, now);
      const bucket = (b: typeof usage.buckets.sync) => ({
        requestsPerMinute: b.requestsPerMinute,
        maxBurst: b.maxBurst,
        remaining: b.remaining,
        resetAt: b.resetAt.toISOString(),
      });
      return {
        subject: ctx.subject,
        user: r.user_id ? { id: r.user_id, name: r.name ?? '', email: r.email ?? '' } : null,
        workspaceIds: r.workspace_ids ?? [],
        spend: {
          used: usage.spend,
          limit: ctx.limits.usageLimit,
          // With billing off nothing is metered, so nothing can be exceeded.
          isExceeded: billingEnabled && usage.spend >= ctx.limits.usageLimit,
        },
        storage: { usedBytes: usage.storageUsedBytes, limitBytes: ctx.limits.storageLimitBytes },
        rateLimit: { sync: bucket(usage.buckets.sync), async: bucket(usage.buckets.async) },
      };
    }),
  );
  const period = billingPeriod(now);
  const first = subjects[0];
  return {
    ...quotas,
    pooled,
    billingEnabled,
    period: { start: period.start.toISOString(), end: period.end.toISOString() },
    /** The first subject's figures (the organization's, or its first owner's): the headline bars. */
    spend: first?.spend ?? { used: 0, limit: quotas.limits.usageLimit, isExceeded: false },
    storage: first?.storage ?? { usedBytes: 0, limitBytes: quotas.limits.storageLimitBytes },
    subjects,
  };
}
