// Usage against the plan: whom use is billed to, spend per billing period, admission of new
// executions (spend limit, then the rate limit of their mode), and the figures clients are shown:
// the `limits` object of execution responses and the usage-limits record.
import type { Principal } from './api-keys.ts';
import type { Queryable } from './client.ts';
import { type Limits, limitsOf, type PlanName, type QuotaOverrides } from './plans.ts';
import {
  type BucketFigures,
  type BucketKind,
  type BucketState,
  bucketFigures,
  fullBucket,
  takeRateTokens,
} from './rate-limits.ts';

/** Every execution costs this much, in US dollars, before the model tokens it used. */
export const COST_PER_EXECUTION = 0.005;

/** Who pays for an organization's use, and under which plan and limits. */
export interface BillingContext {
  organizationId: string | null;
  plan: PlanName;
  limits: Limits;
  /** 'user:<id>' on free and pro, 'org:<id>' on team and enterprise: the key of buckets and spend. */
  subject: string;
}

/** Team and enterprise plans pool their members' use under the organization; others bill the user. */
export function billingContext(
  plan: PlanName,
  overrides: QuotaOverrides | null,
  organizationId: string | null,
  billedUserId: string | null,
): BillingContext {
  const pooled = plan === 'team' || plan === 'enterprise' || billedUserId === null;
  return {
    organizationId,
    plan,
    limits: limitsOf(plan, overrides),
    subject: pooled && organizationId ? `org:${organizationId}` : `user:${billedUserId}`,
  };
}

/** The billing context of a key outside any one workspace (its /api/v1 bucket, its usage figures). */
export function principalBillingContext(principal: Principal): BillingContext {
  const { organizationId, plan, overrides } = principal.billing;
  return billingContext(
    plan,
    overrides,
    organizationId,
    principal.type === 'personal' ? principal.userId : principal.billedUserId,
  );
}

/** The billing period an instant falls in: its calendar month, UTC. */
export function billingPeriod(now: Date): { start: Date; end: Date } {
  return {
    start: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)),
    end: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)),
  };
}

/** The first day of the billing period of `now`, as a date. */
const periodStartOf = (now: Date) => billingPeriod(now).start.toISOString().slice(0, 10);

/**
 * The CTE (named `spent`) that adds runs' cost to their billed subjects' spend for the period each
 * ended in: one place, so finishing and cancelling charge alike. `source` names an earlier CTE with
 * columns billing_subject, cost_total and ended_at, one row per run charged. Rows are grouped and
 * upserted in key order, so concurrent batches lock usage rows in the same order and never deadlock.
 */
export function chargeUsageCte(source: string): string {
  return `spent as (
       insert into usage_periods as u (subject, period_start, cost, executions)
       select billing_subject, date_trunc('month', ended_at at time zone 'UTC')::date, sum(cost_total), count(*)
         from ${source} where billing_subject is not null
        group by 1, 2 order by 1, 2
       on conflict (subject, period_start) do update
         set cost = u.cost + excluded.cost, executions = u.executions + excluded.executions, updated_at = now())`;
}

/** A subject's spend in the billing period of `now`, in dollars (0 when nothing was spent). */
async function periodSpend(db: Queryable, subject: string, now: Date): Promise<number> {
  const [row] = await db.query<{ cost: string }>(
    'select cost from usage_periods where subject = $1 and period_start = $2::date',
    [subject, periodStartOf(now)],
  );
  return Number(row?.cost ?? 0);
}

// The bytes billed to a subject: its files (archived ones too: they still take space) and knowledge
// documents. An organization pays for all its workspaces on team and enterprise; on free and pro
// each workspace's billed user does.
const STORED_SIZES = `select workspace_id, size from files
   union all select workspace_id, file_size from knowledge_documents`;
const STORAGE_USED_SQL = {
  org: `select coalesce(sum(s.size), 0)::bigint as used from (${STORED_SIZES}) s
          join workspaces w on w.id = s.workspace_id join organizations o on o.id = w.organization_id
         where o.id = $1::uuid and o.plan in ('team', 'enterprise')`,
  user: `select coalesce(sum(s.size), 0)::bigint as used from (${STORED_SIZES}) s
           join workspaces w on w.id = s.workspace_id join organizations o on o.id = w.organization_id
          where w.billed_account_user_id = $1::uuid and o.plan in ('free', 'pro')`,
} as const;

/** Storage used by a billed subject ('org:<id>' or 'user:<id>'), in bytes: its files and documents. */
export async function storageUsedBytes(db: Queryable, subject: string): Promise<number> {
  const [kind, id] = subject.split(':') as [string, string | undefined];
  if ((kind !== 'org' && kind !== 'user') || !id || id === 'null') return 0;
  const [row] = await db.query<{ used: number | string }>(STORAGE_USED_SQL[kind], [id]);
  return Number(row?.used ?? 0);
}

/** The `limits` object of every execution response; spend null when billing is off (never exceeded). */
export function limitsObject(
  ctx: BillingContext,
  buckets: { sync: BucketFigures; async: BucketFigures },
  spend: number | null,
) {
  const bucket = (f: BucketFigures) => ({
    requestsPerMinute: f.requestsPerMinute,
    maxBurst: f.maxBurst,
    remaining: f.remaining,
    resetAt: f.resetAt.toISOString(),
  });
  return {
    workflowExecutionRateLimit: { sync: bucket(buckets.sync), async: bucket(buckets.async) },
    usage: {
      currentPeriodCost: roundMicro(spend ?? 0),
      limit: ctx.limits.usageLimit,
      plan: ctx.plan,
      isExceeded: spend !== null && spend >= ctx.limits.usageLimit,
    },
  };
}
export type LimitsObject = ReturnType<typeof limitsObject>;

// Spend is kept to the nanodollar; clients are shown it to a millionth of a dollar.
const roundMicro = (dollars: number) => Math.round(dollars * 1e6) / 1e6;

export interface ExecutionRequest {
  ctx: BillingContext;
  mode: 'sync' | 'async';
}

export type Admission =
  | { admitted: true; limits: LimitsObject; bucket: BucketFigures }
  | { admitted: false; status: 402 | 429; error: string; limits: LimitsObject; bucket: BucketFigures };

/**
 * Decides whether new executions may start: refused with 402 when the subject's spend has reached
 * its limit (no token is taken then), else with 429 when its bucket for the mode is empty. One
 * statement for the whole batch. Run it in the transaction that inserts the admitted executions,
 * so tokens are only spent on executions that exist.
 */
export async function admitExecutions(
  tx: Queryable,
  requests: ExecutionRequest[],
  now: Date,
): Promise<Admission[]> {
  const other = (mode: 'sync' | 'async'): BucketKind => (mode === 'sync' ? 'async' : 'sync');
  // Each request takes from its mode's bucket (unless its spend is used up) and reads the other,
  // for the limits object.
  const states = await takeRateTokens(
    tx,
    requests.flatMap((r) => [
      {
        subject: r.ctx.subject,
        kind: r.mode,
        rate: r.ctx.limits[r.mode],
        wanted: 1,
        spendLimit: r.ctx.limits.usageLimit,
      },
      { subject: r.ctx.subject, kind: other(r.mode), rate: r.ctx.limits[other(r.mode)], wanted: 0 },
    ]),
    now,
    periodStartOf(now),
  );
  return requests.map((r, i): Admission => {
    const own = states[2 * i];
    const peer = states[2 * i + 1];
    if (!own || !peer) throw new Error('takeRateTokens answered fewer states than asked');
    const bucket = bucketFigures(own);
    const figures = { [r.mode]: bucket, [other(r.mode)]: bucketFigures(peer) } as {
      sync: BucketFigures;
      async: BucketFigures;
    };
    const spent = own.spent ?? 0;
    const limits = limitsObject(r.ctx, figures, spent);
    if (spent >= r.ctx.limits.usageLimit) {
      const error = `Usage limit exceeded: $${limits.usage.currentPeriodCost} spent of $${r.ctx.limits.usageLimit} this billing period (${r.ctx.plan} plan)`;
      return { admitted: false, status: 402, error, limits, bucket };
    }
    if (own.granted < 1) {
      const error = `Rate limit exceeded for ${r.mode} executions: ${bucket.requestsPerMinute} per minute (${r.ctx.plan} plan); retry in ${bucket.retryAfterSeconds} s`;
      return { admitted: false, status: 429, error, limits, bucket };
    }
    return { admitted: true, limits, bucket };
  });
}

/** Admission when billing is off: everything passes; the limits shown are the plan's, unspent. */
export function admitUnmetered(requests: ExecutionRequest[], now: Date): Admission[] {
  return requests.map((r) => {
    const buckets = { sync: fullBucket(r.ctx.limits.sync, now), async: fullBucket(r.ctx.limits.async, now) };
    return { admitted: true, limits: limitsObject(r.ctx, buckets, null), bucket: buckets[r.mode] };
  });
}

/** A subject's standing now: both execution buckets (read, not drawn from), spend and storage. */
export async function currentUsage(db: Queryable, ctx: BillingContext, now: Date) {
  const [sync, async] = await takeRateTokens(
    db,
    (['sync', 'async'] as const).map((kind) => ({
      subject: ctx.subject,
      kind,
      rate: ctx.limits[kind],
      wanted: 0,
    })),
    now,
  );
  const spend = await periodSpend(db, ctx.subject, now);
  return {
    buckets: { sync: bucketFigures(sync as BucketState), async: bucketFigures(async as BucketState) },
    spend: roundMicro(spend),
    period: billingPeriod(now),
    storageUsedBytes: await storageUsedBytes(db, ctx.subject),
  };
}
