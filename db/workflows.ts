// Workflows: an editable draft definition, and immutable deployed versions. Executions run the
// deployed version, never the draft. Every definition stored is a valid one: its callers parse it
// (runner/executor/definition.ts) before it is stored, and hand the parser in where a stored one is
// checked again, so this store knows only the shape it reads back. Deploying, undeploying and
// rolling back are in ./workflow-deployments.ts.
import { notFound } from '../errors.ts';
import { type Actor, recordAudit } from './audit-logs.ts';
import type { Queryable } from './client.ts';
import { inWorkflowFolder, requireWorkflowFolder } from './workflow-folders.ts';

/** One declared input of a stored definition (runner/executor/definition.ts's InputSpec). */
export interface StoredInputSpec {
  type: 'string' | 'number' | 'boolean' | 'object' | 'any' | 'array';
  required: boolean;
  default?: unknown;
  description?: string;
}

/** A definition as stored: always one its caller parsed (runner/executor/definition.ts). */
export interface StoredDefinition {
  inputs: Record<string, StoredInputSpec>;
  blocks: { id: string; type: string; [field: string]: unknown }[];
  edges: unknown[];
  /** The concurrency limit (runner/executor/concurrency.ts), checked when the definition was parsed. */
  concurrency?: { limit: number; key?: string | undefined } | undefined;
}

/** Checks a stored definition again (block types and rules may have changed since it was stored). */
export type DefinitionParser = (raw: unknown) => StoredDefinition;

/** The agent workflow every new workspace starts with, unless asked not to: one chat turn. */
export const DEFAULT_AGENT_WORKFLOW = {
  inputs: { message: { type: 'string', required: true, description: 'What to ask the agent' } },
  blocks: [
    {
      id: 'agent',
      type: 'agent',
      model: 'gpt-4o-mini',
      systemPrompt: 'You are a helpful assistant.',
      prompt: '<start.message>',
    },
    { id: 'respond', type: 'response', data: { content: '<agent.content>', model: '<agent.model>' } },
  ],
  edges: [{ from: 'agent', to: 'respond' }],
};

export interface Workflow {
  id: string;
  workspaceId: string;
  name: string;
  description: string;
  /** Its workflow folder (db/folders.ts); null at the top of the workspace. */
  folderId: string | null;
  definition: StoredDefinition;
  deployedVersion: number | null;
  deployedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export type WorkflowRow = {
  id: string;
  workspace_id: string;
  name: string;
  description: string;
  folder_id: string | null;
  definition: StoredDefinition;
  deployed_version: number | null;
  deployed_at: Date | null;
  created_at: Date;
  updated_at: Date;
};

export const toWorkflow = (r: WorkflowRow): Workflow => ({
  id: r.id,
  workspaceId: r.workspace_id,
  name: r.name,
  description: r.description,
  folderId: r.folder_id,
  definition: r.definition,
  deployedVersion: r.deployed_version,
  deployedAt: r.deployed_at?.toISOString() ?? null,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

export async function createWorkflow(
  db: Queryable,
  actor: Actor,
  input: {
    workspaceId: string;
    name: string;
    description?: string;
    folderId?: string | null;
    definition: StoredDefinition;
  },
): Promise<Workflow> {
  const definition = input.definition;
  return db.transaction(async (tx) => {
    const [ws] = await tx.query<{ organization_id: string }>(
      'select organization_id from workspaces where id = $1',
      [input.workspaceId],
    );
    if (!ws) throw notFound('Workspace');
    const { id } = await insertWorkflow(tx, actor, {
      ...input,
      organizationId: ws.organization_id,
      definition,
    });
    return (await getWorkflow(tx, id)) as Workflow;
  });
}

/** Inserts a workflow whose definition is already valid, recording workflow.created. */
export async function insertWorkflow(
  tx: Queryable,
  actor: Actor,
  input: {
    organizationId: string;
    workspaceId: string;
    name: string;
    description?: string;
    folderId?: string | null;
    definition: unknown;
  },
): Promise<{ id: string }> {
  const folderId = input.folderId ?? null;
  if (folderId) await requireWorkflowFolder(tx, input.workspaceId, folderId);
  const [row] = await inWorkflowFolder(() =>
    tx.query<{ id: string }>(
      `insert into workflows (workspace_id, name, description, definition, created_by, folder_id)
       values ($1, $2, $3, $4::jsonb, $5, $6) returning id`,
      [
        input.workspaceId,
        input.name,
        input.description ?? '',
        JSON.stringify(input.definition),
        actor.userId,
        folderId,
      ],
    ),
  );
  const id = (row as { id: string }).id;
  await recordAudit(tx, actor, {
    organizationId: input.organizationId,
    workspaceId: input.workspaceId,
    action: 'workflow.created',
    resourceType: 'workflow',
    resourceId: id,
    metadata: { name: input.name, ...(folderId ? { folderId } : {}) },
  });
  return { id };
}

export async function updateWorkflow(
  db: Queryable,
  actor: Actor,
  id: string,
  changes: {
    name?: string;
    description?: string;
    /** A workflow folder of its workspace, or null for the top; absent leaves it where it is. */
    folderId?: string | null;
    definition?: StoredDefinition;
  },
): Promise<Workflow> {
  const definition = changes.definition;
  return db.transaction(async (tx) => {
    if (changes.folderId) {
      const [at] = await tx.query<{ workspace_id: string }>(
        'select workspace_id from workflows where id = $1',
        [id],
      );
      if (!at) throw notFound('Workflow');
      await requireWorkflowFolder(tx, at.workspace_id, changes.folderId);
    }
    const [row] = await inWorkflowFolder(() =>
      tx.query<WorkflowRow & { organization_id: string }>(
        `update workflows w set name = coalesce($2, w.name), description = coalesce($3, w.description),
           definition = coalesce($4::jsonb, w.definition),
           folder_id = case when $5::boolean then $6::uuid else w.folder_id end, updated_at = now()
         from workspaces s where w.id = $1 and s.id = w.workspace_id returning w.*, s.organization_id`,
        [
          id,
          changes.name ?? null,
          changes.description ?? null,
          definition ? JSON.stringify(definition) : null,
          changes.folderId !== undefined,
          changes.folderId ?? null,
        ],
      ),
    );
    if (!row) throw notFound('Workflow');
    await recordAudit(tx, actor, {
      organizationId: row.organization_id,
      workspaceId: row.workspace_id,
      action: 'workflow.updated',
      resourceType: 'workflow',
      resourceId: id,
      metadata: {
        fields: Object.keys(changes),
        ...(changes.folderId !== undefined ? { folderId: changes.folderId } : {}),
      },
    });
    return toWorkflow(row);
  });
}

export async function getWorkflow(db: Queryable, id: string): Promise<Workflow | null> {
  const [row] = await db.query<WorkflowRow>('select * from workflows where id = $1', [id]);
  return row ? toWorkflow(row) : null;
}

/** A workspace's workflows, oldest first; with `folderId`, only those in that folder (null: at the top). */
export async function listWorkflows(
  db: Queryable,
  workspaceId: string,
  folderId?: string | null,
): Promise<Workflow[]> {
  const rows = await db.query<WorkflowRow>(
    `select * from workflows where workspace_id = $1
        and (not $2::boolean or folder_id is not distinct from $3::uuid)
      order by created_at, id`,
    [workspaceId, folderId !== undefined, folderId ?? null],
  );
  return rows.map(toWorkflow);
}
