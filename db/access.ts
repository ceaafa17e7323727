// Who may act where: the key-scope rules every workspace-scoped request passes through.
// A workspace key acts only in its own workspace; a personal key acts for its user where the user
// holds a permission and the workspace allows personal keys.
import { forbidden, notFound } from '../errors.ts';
import type { Principal } from './api-keys.ts';
import type { Actor } from './audit-logs.ts';
import { createBatcher } from './batcher.ts';
import { type Db, isDb, type Queryable } from './client.ts';
import type { WorkspacePermission, WorkspaceRow } from './workspaces.ts';

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

type Resolved =
  | { ok: true; workspace: WorkspaceRow; permission: WorkspacePermission }
  | { ok: false; reason: 'missing' | 'other_workspace' | 'no_permission' | 'personal_keys_disabled' };

type LoadedRow = WorkspaceRow & { user_permission: WorkspacePermission | null };
type AccessAsk = { workspaceId: string; userId: string | null };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// Every workspace-scoped request reads its workspace and the caller's permission there before any
// work: under load that was one statement per request, the largest share of the admission path's
// round trips. Requests arriving together read theirs in one statement (one batcher per database;
// inside a transaction the read stays in the transaction, alone).
const batchers = new WeakMap<Db, (ask: AccessAsk) => Promise<LoadedRow | undefined>>();

function loader(db: Db) {
  let load = batchers.get(db);
  if (!load) {
    load = createBatcher(async (asks: AccessAsk[]) => {
      // On the lane (client.ts onLane).
      const rows = await db.pipelined<LoadedRow & { ask_ord: string }>(
        `select a.ask_ord, w.*, p.permission as user_permission
           from unnest($1::uuid[], $2::uuid[]) with ordinality as a(workspace_id, user_id, ask_ord)
           join workspaces w on w.id = a.workspace_id
           left join workspace_permissions p on p.workspace_id = w.id and p.user_id = a.user_id`,
        [asks.map((a) => a.workspaceId), asks.map((a) => a.userId)],
      );
      const byOrd = new Map(rows.map(({ ask_ord, ...row }) => [Number(ask_ord), row as LoadedRow]));
      return asks.map((_, i) => byOrd.get(i + 1));
    });
    batchers.set(db, load);
  }
  return load;
}

// A request that names its workspace has that read sent ahead (readAccessAhead), beside the
// rate-limit take that stands before its route, so that the two go out together on the lane: one
// round trip of admission fewer. Keyed by the request's principal, which the key lookup makes for
// each request, so a read is only ever used by the request that sent it, after that request
// arrived: never one another request made earlier. Unused (a 429, a 400, a route that checks another
// workspace) it goes with the principal.
const aheads = new WeakMap<Principal, { db: Db; workspaceId: string; row: Promise<LoadedRow | undefined> }>();

const userOf = (principal: Principal) => (principal.type === 'personal' ? principal.userId : null);

/**
 * Sends the read of the caller's access to a workspace now, for the request's own check to use. Not
 * on the embedded database: it runs one statement at a time in process, so there is no round trip
 * to share, and a read the route then does not use (an audit-log page checks membership instead)
 * would be pure cost.
 */
export function readAccessAhead(db: Db, principal: Principal, workspaceId: string): void {
  if (db.backend !== 'postgres' || !UUID.test(workspaceId)) return;
  const row = loader(db)({ workspaceId, userId: userOf(principal) });
  // Awaited by the check, if the route makes one; a failure meanwhile must not count as unhandled.
  row.catch(() => {});
  aheads.set(principal, { db, workspaceId, row });
}

async function resolve(db: Queryable, principal: Principal, workspaceId: string): Promise<Resolved> {
  const userId = userOf(principal);
  let row: LoadedRow | undefined;
  if (isDb(db) && UUID.test(workspaceId)) {
    const ahead = aheads.get(principal);
    if (ahead?.db === db && ahead.workspaceId === workspaceId) {
      aheads.delete(principal);
      row = await ahead.row;
    } else {
      row = await loader(db)({ workspaceId, userId });
    }
  } else {
    // The workspace and the user's permission there in one round trip.
    [row] = await db.query<LoadedRow>(
      `select w.*, p.permission as user_permission from workspaces w
         left join workspace_permissions p on p.workspace_id = w.id and p.user_id = $2
        where w.id = $1`,
      [workspaceId, userId],
    );
  }
  if (!row) return { ok: false, reason: 'missing' };
  const { user_permission, ...workspace } = row;
  return judge(principal, workspace, user_permission);
}

/** The rules themselves, over a workspace and the user's permission there (null: none). */
function judge(
  principal: Principal,
  workspace: WorkspaceRow,
  permission: WorkspacePermission | null,
): Resolved {
  if (principal.type === 'workspace') {
    if (principal.workspaceId !== workspace.id) return { ok: false, reason: 'other_workspace' };
    // Workspace keys are created by workspace admins for automation: they read and write, not administer.
    return { ok: true, workspace, permission: 'write' };
  }
  if (!permission) return { ok: false, reason: 'no_permission' };
  if (!workspace.allow_personal_api_keys) return { ok: false, reason: 'personal_keys_disabled' };
  return { ok: true, workspace, permission };
}

const DENIALS = {
  other_workspace: 'This workspace key belongs to another workspace',
  no_permission: 'You do not have access to this workspace',
  personal_keys_disabled: 'Personal API keys are disabled in this workspace; use a workspace key',
} as const;

function granted(
  principal: Principal,
  r: Extract<Resolved, { ok: true }>,
  need: WorkspacePermission,
): WorkspaceAccess {
  if (RANK[r.permission] < RANK[need])
    throw forbidden(`This action needs ${need} permission on the workspace`);
  if (r.workspace.archived_at && need !== 'read') throw forbidden('The workspace is archived');
  return { workspace: r.workspace, permission: r.permission, actor: actorOf(principal) };
}

/**
 * The caller's access to a workspace named in the request, or throws: 404 when the workspace does
 * not exist, 403 when the key may not act there or holds less than `need`.
 */
export async function authorizeWorkspace(
  db: Queryable,
  principal: Principal,
  workspaceId: string,
  need: WorkspacePermission,
): Promise<WorkspaceAccess> {
  const r = await resolve(db, principal, workspaceId);
  if (!r.ok) throw r.reason === 'missing' ? notFound('Workspace') : forbidden(DENIALS[r.reason]);
  return granted(principal, r, need);
}

/**
 * Access to a resource (workflow, job, table…) in a workspace, found by its own id. A key that
 * cannot act in that workspace at all learns nothing: 404, as if the resource did not exist. A key
 * that reaches the workspace but lacks the permission, or whose kind the workspace refuses, gets 403.
 */
export async function authorizeResource(
  db: Queryable,
  principal: Principal,
  workspaceId: string,
  need: WorkspacePermission,
  what: string,
): Promise<WorkspaceAccess> {
  return resourceAccess(principal, await resolve(db, principal, workspaceId), need, what);
}

/**
 * authorizeResource for a hot path that loaded the workspace and the caller's permission in its own
 * query (a personal key's user's permission; ignored for workspace keys).
 */
export function authorizeLoadedResource(
  principal: Principal,
  workspace: WorkspaceRow,
  permission: WorkspacePermission | null,
  need: WorkspacePermission,
  what: string,
): WorkspaceAccess {
  return resourceAccess(principal, judge(principal, workspace, permission), need, what);
}

function resourceAccess(principal: Principal, r: Resolved, need: WorkspacePermission, what: string) {
  if (!r.ok) throw r.reason === 'personal_keys_disabled' ? forbidden(DENIALS[r.reason]) : notFound(what);
  return granted(principal, r, need);
}
