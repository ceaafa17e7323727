// Admin quota overrides per organization: stored as a partial set of limits over the plan's.
import { notFound } from '../errors.ts';
import { ADMIN_ACTOR, recordAudit } from './audit-logs.ts';
import type { Queryable } from './client.ts';
import { effectiveLimits, type QuotaOverrides } from './plans.ts';

export async function getQuotas(db: Queryable, organizationId: string) {
  const [row] = await db.query<{ overrides: QuotaOverrides | null }>(
    `select q.overrides from organizations o left join quota_overrides q on q.organization_id = o.id where o.id = $1`,
    [organizationId],
  );
  if (!row) throw notFound('Organization');
  const { plan, limits } = await effectiveLimits(db, organizationId);
  return { organizationId, plan, overrides: row.overrides ?? {}, limits };
}

/** Merges the given overrides into the stored ones; a field set to null returns to the plan's value. */
export async function setQuotas(
  db: Queryable,
  organizationId: string,
  changes: { [K in keyof QuotaOverrides]?: QuotaOverrides[K] | null },
) {
  await db.transaction(async (tx) => {
    const [org] = await tx.query('select id from organizations where id = $1 for update', [organizationId]);
    if (!org) throw notFound('Organization');
    const [current] = await tx.query<{ overrides: QuotaOverrides }>(
      'select overrides from quota_overrides where organization_id = $1',
      [organizationId],
    );
    const next: Record<string, unknown> = { ...(current?.overrides ?? {}) };
    for (const [k, v] of Object.entries(changes)) {
      if (v === null) delete next[k];
      else if (v !== undefined) next[k] = v;
    }
    await tx.query(
      `insert into quota_overrides (organization_id, overrides) values ($1, $2::jsonb)
       on conflict (organization_id) do update set overrides = excluded.overrides, updated_at = now()`,
      [organizationId, JSON.stringify(next)],
    );
    await recordAudit(tx, ADMIN_ACTOR, {
      organizationId,
      action: 'quota.updated',
      resourceType: 'organization',
      resourceId: organizationId,
      metadata: { changes },
    });
  });
  return getQuotas(db, organizationId);
}
