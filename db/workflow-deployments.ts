// Deployments of a workflow: each deploy snapshots the draft as an immutable, numbered version and
// makes it the one executions run; undeploy, rollback to an earlier version, and what runners and
// the MCP server read of the deployed versions. The drafts themselves are in ./workflows.ts.
import { conflict, notFound, ServiceError } from '../errors.ts';
import { type Actor, type AuditEntryInput, recordAudit } from './audit-logs.ts';
import type { Queryable } from './client.ts';
import {
  type DefinitionParser,
  getWorkflow,
  type StoredDefinition,
  toWorkflow,
  type Workflow,
  type WorkflowRow,
} from './workflows.ts';

type LockedWorkflow = WorkflowRow & { organization_id: string };

/**
 * A workflow's row (with its organization), locked until the transaction ends; 404 if there is none.
 * Deployments and rollbacks take it first, so those of one workflow never interleave: versions stay
 * 1, 2, 3, … and the deployed pointer moves in the order they commit.
 */
async function lockWorkflow(tx: Queryable, id: string): Promise<LockedWorkflow> {
  const [row] = await tx.query<LockedWorkflow>(
    `select w.*, s.organization_id from workflows w join workspaces s on s.id = w.workspace_id
      where w.id = $1 for update of w`,
    [id],
  );
  // An archived workflow (db/workflow-archive.ts) is never deployed again.
  if (!row || (row as { archived_at?: Date | null }).archived_at) throw notFound('Workflow');
  return row;
}

/**
 * Points a locked workflow (from lockWorkflow) at `version`, so new executions run it, and audits the
 * move as `action` in the same transaction. Deploy and rollback both end here; the answer is the new
 * deployed_at as ISO text.
 */
async function pointDeployment(
  tx: Queryable,
  row: LockedWorkflow,
  actor: Actor,
  version: number,
  action: 'workflow.deployed' | 'workflow.rolled_back',
  metadata: AuditEntryInput['metadata'],
): Promise<string> {
  const [done] = await tx.query<{ deployed_at: Date }>(
    'update workflows set deployed_version = $2, deployed_at = now() where id = $1 returning deployed_at',
    [row.id, version],
  );
  await recordAudit(tx, actor, {
    organizationId: row.organization_id,
    workspaceId: row.workspace_id,
    action,
    resourceType: 'workflow',
    resourceId: row.id,
    metadata,
  });
  return (done as { deployed_at: Date }).deployed_at.toISOString();
}

/** Snapshots the draft as the next version and makes it the one executions run. */
export async function deployWorkflow(
  db: Queryable,
  actor: Actor,
  id: string,
  parseDefinition: DefinitionParser,
): Promise<{ version: number; deployedAt: string }> {
  return db.transaction(async (tx) => {
    const row = await lockWorkflow(tx, id);
    // Block types and rules may have changed since the draft was saved: check it again.
    const definition = parseDefinition(row.definition);
    const [next] = await tx.query<{ version: number }>(
      'select coalesce(max(version), 0) + 1 as version from workflow_versions where workflow_id = $1',
      [id],
    );
    const version = (next as { version: number }).version;
    await tx.query(
      'insert into workflow_versions (workflow_id, version, definition, deployed_by) values ($1, $2, $3::jsonb, $4)',
      [id, version, JSON.stringify(definition), actor.userId],
    );
    const deployedAt = await pointDeployment(tx, row, actor, version, 'workflow.deployed', { version });
    return { version, deployedAt };
  });
}

export async function undeployWorkflow(db: Queryable, actor: Actor, id: string): Promise<Workflow> {
  return db.transaction(async (tx) => {
    const [row] = await tx.query<WorkflowRow & { organization_id: string }>(
      `update workflows w set deployed_version = null, deployed_at = null from workspaces s
        where w.id = $1 and s.id = w.workspace_id and w.deployed_version is not null returning w.*, s.organization_id`,
      [id],
    );
    if (!row) {
      if (!(await getWorkflow(tx, id))) throw notFound('Workflow');
      throw conflict('The workflow is not deployed');
    }
    await recordAudit(tx, actor, {
      organizationId: row.organization_id,
      workspaceId: row.workspace_id,
      action: 'workflow.undeployed',
      resourceType: 'workflow',
      resourceId: id,
    });
    return toWorkflow(row);
  });
}

/** Every deployed version of a workflow, oldest first; `deployed` marks the one executions run. */
export async function listVersions(db: Queryable, id: string) {
  const workflow = await getWorkflow(db, id);
  if (!workflow) throw notFound('Workflow');
  const rows = await db.query<{
    version: number;
    definition: StoredDefinition;
    deployed_by: string | null;
    created_at: Date;
  }>(
    'select version, definition, deployed_by, created_at from workflow_versions where workflow_id = $1 order by version',
    [id],
  );
  return rows.map((r) => ({
    version: r.version,
    definition: r.definition,
    deployedBy: r.deployed_by,
    /** When this version was first deployed (made). */
    deployedAt: r.created_at.toISOString(),
    createdAt: r.created_at.toISOString(),
    deployed: r.version === workflow.deployedVersion,
  }));
}

/**
 * Deploys an earlier (or any existing) version again: the deployed pointer moves to it, so new
 * executions run it; no version is made and the draft is left as it is. The version is checked
 * again, as a deployment checks the draft (block types and rules may have changed since).
 */
export async function rollbackWorkflow(
  db: Queryable,
  actor: Actor,
  id: string,
  version: number,
  parseDefinition: DefinitionParser,
): Promise<{ version: number; deployedAt: string; previousVersion: number | null }> {
  return db.transaction(async (tx) => {
    const row = await lockWorkflow(tx, id);
    const [target] = await tx.query<{ definition: StoredDefinition }>(
      'select definition from workflow_versions where workflow_id = $1 and version = $2',
      [id, version],
    );
    if (!target) throw new ServiceError(404, `Version ${version} of this workflow not found`);
    parseDefinition(target.definition);
    const previousVersion = row.deployed_version;
    const deployedAt = await pointDeployment(tx, row, actor, version, 'workflow.rolled_back', {
      version,
      previousVersion,
    });
    return { version, deployedAt, previousVersion };
  });
}

/** Which version of a workflow is deployed, and where: null when it is not deployed. */
export async function deployedVersion(
  db: Queryable,
  workflowId: string,
): Promise<{ workspaceId: string; version: number } | null> {
  const [row] = await db.query<{ workspace_id: string; deployed_version: number | null }>(
    'select workspace_id, deployed_version from workflows where id = $1',
    [workflowId],
  );
  return row && row.deployed_version !== null
    ? { workspaceId: row.workspace_id, version: row.deployed_version }
    : null;
}

/** A deployed workflow as its callers see it: the declared inputs of the version it runs. */
export interface DeployedWorkflow {
  id: string;
  name: string;
  description: string;
  version: number;
  inputs: StoredDefinition['inputs'];
}

/** The deployed workflows of a workspace, oldest first (drafts never deployed are left out). */
export async function listDeployedWorkflows(db: Queryable, workspaceId: string): Promise<DeployedWorkflow[]> {
  // Only the inputs of each deployed definition: the blocks may be large and are not needed here.
  const rows = await db.query<{
    id: string;
    name: string;
    description: string;
    version: number;
    inputs: StoredDefinition['inputs'] | null;
  }>(
    `select w.id, w.name, w.description, w.deployed_version as version, v.definition -> 'inputs' as inputs
       from workflows w
       join workflow_versions v on v.workflow_id = w.id and v.version = w.deployed_version
      where w.workspace_id = $1
      order by w.created_at, w.id`,
    [workspaceId],
  );
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    description: r.description,
    version: r.version,
    inputs: r.inputs ?? {},
  }));
}
