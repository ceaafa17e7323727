// Archiving a workflow (DELETE /api/v1/workflows/{id}): the row stays, so its executions, logs and
// audit trail keep their workflow, but it is undeployed at once (executions, schedules, webhooks and
// MCP tools stop: they all run the deployed version) and the v1 routes and deployments treat it as gone.
import { notFound } from '../errors.ts';
import { type Actor, recordAudit } from './audit-logs.ts';
import type { Queryable } from './client.ts';

/** Whether the workflow is archived; null when there is no such workflow. */
export async function isArchived(db: Queryable, id: string): Promise<boolean | null> {
  const [row] = await db.query<{ archived: boolean }>(
    'select archived_at is not null as archived from workflows where id = $1',
    [id],
  );
  return row ? row.archived : null;
}

/** Archives and undeploys a workflow, recording workflow.deleted; 404 when absent or already archived. */
export async function archiveWorkflow(
  db: Queryable,
  actor: Actor,
  id: string,
): Promise<{ id: string; archivedAt: string }> {
  return db.transaction(async (tx) => {
    // The row lock a deployment takes (db/workflows.ts lockWorkflow): one racing this commits first
    // (and is undeployed here) or waits and finds the workflow archived.
    const [before] = await tx.query<{ deployed_version: number | null }>(
      'select deployed_version from workflows where id = $1 and archived_at is null for update',
      [id],
    );
    if (!before) throw notFound('Workflow');
    const [row] = await tx.query<{
      workspace_id: string;
      organization_id: string;
      name: string;
      archived_at: Date;
    }>(
      `update workflows w set archived_at = now(), deployed_version = null, deployed_at = null
         from workspaces s where w.id = $1 and s.id = w.workspace_id
        returning w.workspace_id, s.organization_id, w.name, w.archived_at`,
      [id],
    );
    if (!row) throw notFound('Workflow');
    await recordAudit(tx, actor, {
      organizationId: row.organization_id,
      workspaceId: row.workspace_id,
      action: 'workflow.deleted',
      resourceType: 'workflow',
      resourceId: id,
      metadata: { name: row.name, deployedVersion: before.deployed_version },
    });
    return { id, archivedAt: row.archived_at.toISOString() };
  });
}
