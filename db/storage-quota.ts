// The storage quota: what a new stored object (a file, a knowledge document) may take from the
// bytes of whoever its workspace is billed to. Checked under a lock on that subject, inside the
// transaction that records the object, so racing uploads cannot together pass the limit.
import { notFound, ServiceError } from '../errors.ts';
import type { Queryable } from './client.ts';
import type { PlanName, QuotaOverrides } from './plans.ts';
import { billingContext, storageUsedBytes } from './usage.ts';

/**
 * Locks the workspace's billed subject for the rest of the transaction and refuses (413) when
 * `bytes` more would pass its storage limit; `what` names the object in the message.
 */
export async function reserveStorage(
  tx: Queryable,
  workspaceId: string,
  bytes: number,
  what: string,
): Promise<{ organizationId: string }> {
  const [ws] = await tx.query<{
    organization_id: string;
    billed_account_user_id: string;
    plan: PlanName;
    overrides: QuotaOverrides | null;
  }>(
    `select w.organization_id, w.billed_account_user_id, o.plan, q.overrides
       from workspaces w join organizations o on o.id = w.organization_id
       left join quota_overrides q on q.organization_id = o.id
      where w.id = $1`,
    [workspaceId],
  );
  if (!ws) throw notFound('Workspace');
  const ctx = billingContext(ws.plan, ws.overrides, ws.organization_id, ws.billed_account_user_id);
  await tx.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [`storage:${ctx.subject}`]);
  const used = await storageUsedBytes(tx, ctx.subject);
  const limit = ctx.limits.storageLimitBytes;
  if (used + bytes > limit) {
    throw new ServiceError(
      413,
      `Storage limit reached: ${used} of ${limit} bytes used and ${what} has ${bytes} (${ctx.plan} plan)`,
    );
  }
  return { organizationId: ws.organization_id };
}
