// What executing a workflow needs to know before it enqueues (the workspace, the deployed version,
// the caller's permission, the plan), read in one query for a batch of requests.
import type { Queryable } from './client.ts';
import type { PlanName, QuotaOverrides } from './plans.ts';
import type { WorkspacePermission, WorkspaceRow } from './workspaces.ts';

export interface ExecutionTarget {
  workspace: WorkspaceRow;
  deployedVersion: number | null;
  /** The permission of `userId` in the workspace; null without one (or without a user). */
  permission: WorkspacePermission | null;
  plan: PlanName;
  overrides: QuotaOverrides | null;
}

/**
 * What executing a workflow needs to know before it enqueues, in one query for all the requests
 * that arrived together (this is the hot path): the workspace, the deployed version, the caller's
 * permission, and the organization's plan. Null where the workflow does not exist.
 */
export async function loadExecutionTargets(
  db: Queryable,
  wanted: { workflowId: string; userId: string | null }[],
): Promise<(ExecutionTarget | null)[]> {
  const rows = await db.query<
    WorkspaceRow & {
      ord: number;
      deployed_version: number | null;
      permission: WorkspacePermission | null;
      plan: PlanName;
      overrides: QuotaOverrides | null;
    }
  >(
    `select t.ord::int as ord, s.*, w.deployed_version, p.permission, o.plan, q.overrides
       from unnest($1::uuid[], $2::uuid[]) with ordinality as t(workflow_id, user_id, ord)
       join workflows w on w.id = t.workflow_id
       join workspaces s on s.id = w.workspace_id
       join organizations o on o.id = s.organization_id
       left join quota_overrides q on q.organization_id = o.id
       left join workspace_permissions p on p.workspace_id = s.id and p.user_id = t.user_id`,
    [wanted.map((w) => w.workflowId), wanted.map((w) => w.userId)],
  );
  const byOrd = new Map(rows.map((r) => [r.ord, r]));
  return wanted.map((_, i) => {
    const row = byOrd.get(i + 1);
    if (!row) return null;
    const { ord: _ord, deployed_version, permission, plan, overrides, ...workspace } = row;
    return { workspace, deployedVersion: deployed_version, permission, plan, overrides };
  });
}
