// Who may act where: the key-scope rules every workspace-scoped request passes through.
// A workspace key acts only in its own workspace; a personal key acts for its user where the user
// holds a permission and the workspace allows personal keys.
import type { Principal } from './api-keys.ts';
import type { Actor } from './audit-logs.ts';
import type { Queryable } from './client.ts';
import { forbidden, notFound } from './errors.ts';
import { findWorkspace, type WorkspacePermission, type WorkspaceRow } from './workspaces.ts';

const RANK: Record<WorkspacePermission, number> = { read: 1, write: 2, admin: 3 };

export interface WorkspaceAccess {
  workspace: WorkspaceRow;
  permission: WorkspacePermission;
  actor: Actor;
}

/** The actor an audit entry names for a request made with this key. */
export function actorOf(principal: Principal): Actor {
  return principal.type === 'personal'
    ? { userId: principal.userId, name: principal.userName, email: principal.userEmail }
    : { userId: null, name: `workspace key ${principal.keyId}` };
}

/**
 * Resolves the caller's permission in a workspace, or throws: 404 when the workspace does not exist,
 * 403 when the key may not act there or holds less than `need`.
 */
export async function authorizeWorkspace(
  db: Queryable,
  principal: Principal,
  workspaceId: string,
  need: WorkspacePermission,
): Promise<WorkspaceAccess> {
  const workspace = await findWorkspace(db, workspaceId);
  if (!workspace) throw notFound('Workspace');
  let permission: WorkspacePermission;
  if (principal.type === 'workspace') {
    if (principal.workspaceId !== workspace.id)
      throw forbidden('This workspace key belongs to another workspace');
    // Workspace keys are created by workspace admins for automation: they read and write, not administer.
    permission = 'write';
  } else {
    if (!workspace.allow_personal_api_keys) {
      throw forbidden('Personal API keys are disabled in this workspace; use a workspace key');
    }
    const [row] = await db.query<{ permission: WorkspacePermission }>(
      'select permission from workspace_permissions where workspace_id = $1 and user_id = $2',
      [workspace.id, principal.userId],
    );
    if (!row) throw forbidden('You do not have access to this workspace');
    permission = row.permission;
  }
  if (RANK[permission] < RANK[need]) throw forbidden(`This action needs ${need} permission on the workspace`);
  if (workspace.archived_at && need !== 'read') throw forbidden('The workspace is archived');
  return { workspace, permission, actor: actorOf(principal) };
}
