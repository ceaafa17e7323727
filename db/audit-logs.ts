// Audit log: one entry per mutating action, written inside the action's own transaction, and the
// filtered, cursor-paged read behind GET /api/v1/audit-logs.
import { invalidField } from '../errors.ts';
import type { Queryable } from './client.ts';

/** Who acted: a user (through a personal key), or a non-person: the admin plane, a workspace key. */
export type Actor = { userId: string; name: string; email: string } | { userId: null; name: string };

export const ADMIN_ACTOR: Actor = { userId: null, name: 'admin plane' };

export interface AuditEntryInput {
  organizationId: string;
  workspaceId?: string | null;
  action: `${string}.${string}`;
  resourceType: string;
  resourceId?: string | null;
  metadata?: Record<string, unknown>;
}

export async function recordAudit(tx: Queryable, actor: Actor, entry: AuditEntryInput): Promise<void> {
  await recordAudits(tx, [{ actor, ...entry }]);
}

/** Records many entries in one statement: the hot path (workflow.execute) writes one per execution. */
export async function recordAudits(
  tx: Queryable,
  entries: (AuditEntryInput & { actor: Actor })[],
): Promise<void> {
  if (!entries.length) return;
  const col = <T>(f: (e: AuditEntryInput & { actor: Actor }) => T) => entries.map(f);
  await tx.query(
    `insert into audit_logs (organization_id, workspace_id, actor_id, actor_name, actor_email, action,
       resource_type, resource_id, metadata)
     select organization_id, workspace_id, actor_id, actor_name, actor_email, action, resource_type, resource_id,
            metadata::jsonb
       from unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
         $9::text[]) as t(organization_id, workspace_id, actor_id, actor_name, actor_email, action, resource_type,
         resource_id, metadata)`,
    [
      col((e) => e.organizationId),
      col((e) => e.workspaceId ?? null),
      col((e) => e.actor.userId),
      col((e) => e.actor.name),
      col((e) => (e.actor.userId ? e.actor.email : null)),
      col((e) => e.action),
      col((e) => e.resourceType),
      col((e) => e.resourceId ?? null),
      col((e) => JSON.stringify(e.metadata ?? {})),
    ],
  );
}

export interface AuditLogEntry {
  id: string;
  action: string;
  actorId: string | null;
  actorName: string | null;
  actorEmail: string | null;
  resourceType: string;
  resourceId: string | null;
  workspaceId: string | null;
  metadata: Record<string, unknown>;
  createdAt: string;
}

export interface AuditQuery {
  organizationId: string;
  workspaceId: string;
  action?: string;
  resourceType?: string;
  resourceId?: string;
  actorId?: string;
  startDate?: Date;
  endDate?: Date;
  includeDeparted: boolean;
  limit: number;
  cursor?: string;
}

// The cursor is the (created_at, id) of the last entry served, so pages stay stable while new
// entries arrive. Opaque to clients: base64url of JSON.
interface CursorPosition {
  t: string;
  id: string;
}

function encodeCursor(p: CursorPosition): string {
  return Buffer.from(JSON.stringify(p)).toString('base64url');
}

// Only what encodeCursor writes: anything looser (a dashes-only "uuid", a `t` Date.parse reads but
// Postgres does not, year 0) would reach the casts in the query and fail there as a 500.
const CURSOR_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const CURSOR_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function decodeCursor(cursor: string): CursorPosition {
  try {
    const p = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<CursorPosition>;
    if (
      typeof p.t === 'string' &&
      CURSOR_TIME.test(p.t) &&
      !p.t.startsWith('0000') &&
      new Date(p.t).toISOString() === p.t &&
      typeof p.id === 'string' &&
      CURSOR_ID.test(p.id)
    ) {
      return { t: p.t, id: p.id };
    }
  } catch {}
  throw invalidField('cursor', 'Not a cursor returned by this endpoint');
}

/**
 * Entries of the organization recorded in the workspace, plus organization-level entries (members,
 * plans) that belong to no workspace, newest first.
 */
export async function listAuditLogs(
  db: Queryable,
  q: AuditQuery,
): Promise<{ data: AuditLogEntry[]; nextCursor: string | null }> {
  const where = ['a.organization_id = $1', '(a.workspace_id = $2 or a.workspace_id is null)'];
  const params: unknown[] = [q.organizationId, q.workspaceId];
  const add = (clause: (n: string) => string, value: unknown) => {
    params.push(value);
    where.push(clause(`$${params.length}`));
  };
  if (q.action) add((n) => `a.action = ${n}`, q.action);
  if (q.resourceType) add((n) => `a.resource_type = ${n}`, q.resourceType);
  if (q.resourceId) add((n) => `a.resource_id = ${n}`, q.resourceId);
  if (q.actorId) add((n) => `a.actor_id = ${n}::uuid`, q.actorId);
  if (q.startDate) add((n) => `a.created_at >= ${n}::timestamptz`, q.startDate.toISOString());
  if (q.endDate) add((n) => `a.created_at <= ${n}::timestamptz`, q.endDate.toISOString());
  if (!q.includeDeparted) {
    // Entries of people who left the organization are hidden unless asked for; entries of the
    // admin plane (no actor) are always shown.
    where.push(`(a.actor_id is null or exists (select 1 from members m where m.organization_id = a.organization_id
      and m.user_id = a.actor_id and m.departed_at is null))`);
  }
  if (q.cursor) {
    const c = decodeCursor(q.cursor);
    params.push(c.t, c.id);
    where.push(`(a.created_at, a.id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`);
  }
  params.push(q.limit + 1);
  const rows = await db.query<AuditRow>(
    `select a.* from audit_logs a where ${where.join(' and ')}
      order by a.created_at desc, a.id desc limit $${params.length}`,
    params,
  );
  const page = rows.slice(0, q.limit);
  const last = page.at(-1);
  return {
    data: page.map(toEntry),
    nextCursor:
      rows.length > q.limit && last ? encodeCursor({ t: last.created_at.toISOString(), id: last.id }) : null,
  };
}

type AuditRow = {
  id: string;
  action: string;
  actor_id: string | null;
  actor_name: string | null;
  actor_email: string | null;
  resource_type: string;
  resource_id: string | null;
  workspace_id: string | null;
  metadata: Record<string, unknown>;
  created_at: Date;
};

function toEntry(r: AuditRow): AuditLogEntry {
  return {
    id: r.id,
    action: r.action,
    actorId: r.actor_id,
    actorName: r.actor_name,
    actorEmail: r.actor_email,
    resourceType: r.resource_type,
    resourceId: r.resource_id,
    workspaceId: r.workspace_id,
    metadata: r.metadata,
    createdAt: r.created_at.toISOString(),
  };
}

/** One entry by its id, with its organization (whose admins may read it); null when there is none. */
export async function getAuditLog(
  db: Queryable,
  id: string,
): Promise<{ entry: AuditLogEntry; organizationId: string } | null> {
  const [row] = await db.query<AuditRow & { organization_id: string }>(
    'select * from audit_logs where id = $1::uuid',
    [id],
  );
  return row ? { entry: toEntry(row), organizationId: row.organization_id } : null;
}
