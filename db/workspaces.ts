// Workspaces: created under an organization with a unique slug there, the creator as admin, and
// by default an agent workflow; permissions per user; archive and restore.
import { z } from 'zod';
import { conflict, invalidField, isUniqueViolation, notFound } from '../errors.ts';
import { type Actor, recordAudit } from './audit-logs.ts';
import type { Queryable } from './client.ts';
import { activeMembership } from './members.ts';
import { freeSlug, slugify } from './slugs.ts';
import { isStorableText } from './tables/values.ts';
import { DEFAULT_AGENT_WORKFLOW, insertWorkflow } from './workflows.ts';

/** The fields a new workspace is made from, as both planes take them. */
export const newWorkspaceFields = z.object({
  // Postgres text holds no NUL and no lone surrogate: refused here rather than failing as a 500.
  name: z.string().trim().min(1).max(100).refine(isStorableText, 'Not storable text'),
  color: z
    .string()
    .regex(/^#[0-9A-Fa-f]{6}$/, 'Must be a colour in #RRGGBB form')
    .optional(),
  skipDefaultWorkflow: z.boolean().optional(),
  /** For a user in several organizations; defaults to the one they joined first. */
  organizationId: z.uuid().optional(),
});

export const WORKSPACE_PERMISSIONS = ['admin', 'write', 'read'] as const;
export type WorkspacePermission = (typeof WORKSPACE_PERMISSIONS)[number];
export const DEFAULT_WORKSPACE_COLOR = '#3972F6';

export interface Workspace {
  id: string;
  name: string;
  slug: string;
  color: string;
  ownerId: string;
  organizationId: string;
  billedAccountUserId: string;
  allowPersonalApiKeys: boolean;
  role: WorkspacePermission | null;
  createdAt: string;
  updatedAt: string;
  archivedAt: string | null;
}

export type WorkspaceRow = {
  id: string;
  organization_id: string;
  name: string;
  slug: string;
  color: string;
  owner_id: string;
  billed_account_user_id: string;
  allow_personal_api_keys: boolean;
  created_at: Date;
  updated_at: Date;
  archived_at: Date | null;
};

export const toWorkspace = (r: WorkspaceRow, role: WorkspacePermission | null): Workspace => ({
  id: r.id,
  name: r.name,
  slug: r.slug,
  color: r.color,
  ownerId: r.owner_id,
  organizationId: r.organization_id,
  billedAccountUserId: r.billed_account_user_id,
  allowPersonalApiKeys: r.allow_personal_api_keys,
  role,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
  archivedAt: r.archived_at?.toISOString() ?? null,
});

export interface CreateWorkspaceInput {
  organizationId: string;
  ownerId: string;
  name: string;
  color?: string;
  skipDefaultWorkflow?: boolean;
}

/** Creates a workspace; the owner must be an active member of the organization and becomes its admin. */
export async function createWorkspace(
  db: Queryable,
  actor: Actor,
  input: CreateWorkspaceInput,
): Promise<Workspace> {
  // Two creations of the same name can race to one slug: the unique index lets one win, and the
  // loser picks the next free slug.
  for (let attempt = 0; ; attempt++) {
    try {
      return await db.transaction((tx) => insertWorkspace(tx, actor, input));
    } catch (err) {
      if (!isUniqueViolation(err, 'workspaces_organization_id_slug_key') || attempt >= 4) throw err;
    }
  }
}

async function insertWorkspace(tx: Queryable, actor: Actor, input: CreateWorkspaceInput): Promise<Workspace> {
  if (!(await activeMembership(tx, input.organizationId, input.ownerId))) {
    throw invalidField('ownerId', 'The owner must be a member of the organization');
  }
  const slug = await freeSlug(
    tx,
    slugify(input.name),
    'select slug from workspaces where organization_id = $1 and (slug = $2 or slug like $3)',
    [input.organizationId],
  );
  const [row] = await tx.query<WorkspaceRow>(
    `insert into workspaces (organization_id, name, slug, color, owner_id, billed_account_user_id)
     values ($1, $2, $3, $4, $5, $5) returning *`,
    [input.organizationId, input.name, slug, input.color ?? DEFAULT_WORKSPACE_COLOR, input.ownerId],
  );
  const ws = row as WorkspaceRow;
  await tx.query(
    `insert into workspace_permissions (workspace_id, user_id, permission) values ($1, $2, 'admin')`,
    [ws.id, input.ownerId],
  );
  await recordAudit(tx, actor, {
    organizationId: ws.organization_id,
    workspaceId: ws.id,
    action: 'workspace.created',
    resourceType: 'workspace',
    resourceId: ws.id,
    metadata: { name: ws.name, slug: ws.slug },
  });
  if (!input.skipDefaultWorkflow) {
    await insertWorkflow(tx, actor, {
      organizationId: ws.organization_id,
      workspaceId: ws.id,
      name: 'Default agent',
      description: 'A chat agent: send {"message": "..."} as input.',
      definition: DEFAULT_AGENT_WORKFLOW,
    });
  }
  return toWorkspace(ws, 'admin');
}

export async function findWorkspace(db: Queryable, workspaceId: string): Promise<WorkspaceRow | null> {
  const [row] = await db.query<WorkspaceRow>('select * from workspaces where id = $1', [workspaceId]);
  return row ?? null;
}

export async function listWorkspaces(
  db: Queryable,
  filter: { organizationId?: string },
): Promise<Workspace[]> {
  const rows = await db.query<WorkspaceRow>(
    'select * from workspaces where ($1::uuid is null or organization_id = $1) order by created_at, id',
    [filter.organizationId ?? null],
  );
  return rows.map((r) => toWorkspace(r, null));
}

export async function updateWorkspace(
  db: Queryable,
  actor: Actor,
  workspaceId: string,
  changes: { name?: string; color?: string; allowPersonalApiKeys?: boolean },
): Promise<Workspace> {
  return db.transaction(async (tx) => {
    const [row] = await tx.query<WorkspaceRow>(
      `update workspaces set name = coalesce($2, name), color = coalesce($3, color),
         allow_personal_api_keys = coalesce($4, allow_personal_api_keys), updated_at = now()
       where id = $1 returning *`,
      [workspaceId, changes.name ?? null, changes.color ?? null, changes.allowPersonalApiKeys ?? null],
    );
    if (!row) throw notFound('Workspace');
    await recordAudit(tx, actor, {
      organizationId: row.organization_id,
      workspaceId,
      action: 'workspace.updated',
      resourceType: 'workspace',
      resourceId: workspaceId,
      metadata: { changes },
    });
    return toWorkspace(row, null);
  });
}

/** Grants (or changes) a user's permission on a workspace; the user must belong to its organization. */
export async function grantWorkspacePermission(
  db: Queryable,
  actor: Actor,
  input: { workspaceId: string; userId: string; permission: WorkspacePermission },
) {
  return db.transaction(async (tx) => {
    const ws = await findWorkspace(tx, input.workspaceId);
    if (!ws) throw notFound('Workspace');
    if (!(await activeMembership(tx, ws.organization_id, input.userId))) {
      throw invalidField('userId', 'The user must be a member of the workspace organization');
    }
    await tx.query(
      `insert into workspace_permissions (workspace_id, user_id, permission) values ($1, $2, $3)
       on conflict (workspace_id, user_id) do update set permission = excluded.permission`,
      [input.workspaceId, input.userId, input.permission],
    );
    await recordAudit(tx, actor, {
      organizationId: ws.organization_id,
      workspaceId: ws.id,
      action: 'permission.granted',
      resourceType: 'workspace',
      resourceId: ws.id,
      metadata: { userId: input.userId, permission: input.permission },
    });
    return { workspaceId: input.workspaceId, userId: input.userId, permission: input.permission };
  });
}

/** Archives (archived = true) or restores a workspace. */
export async function setWorkspaceArchived(
  db: Queryable,
  actor: Actor,
  workspaceId: string,
  archived: boolean,
) {
  return db.transaction(async (tx) => {
    const ws = await findWorkspace(tx, workspaceId);
    if (!ws) throw notFound('Workspace');
    if (archived === (ws.archived_at !== null)) {
      throw conflict(archived ? 'The workspace is already archived' : 'The workspace is not archived');
    }
    const [row] = await tx.query<WorkspaceRow>(
      `update workspaces set archived_at = ${archived ? 'now()' : 'null'}, updated_at = now() where id = $1 returning *`,
      [workspaceId],
    );
    await recordAudit(tx, actor, {
      organizationId: ws.organization_id,
      workspaceId,
      action: archived ? 'workspace.archived' : 'workspace.restored',
      resourceType: 'workspace',
      resourceId: workspaceId,
    });
    return toWorkspace(row as WorkspaceRow, null);
  });
}
