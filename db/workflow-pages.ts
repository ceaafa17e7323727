// A workspace's workflows one cursor page at a time (GET /api/v1/workflows), oldest first, so a
// client that pages through while others create workflows sees each existing one exactly once.
import { invalidField } from '../errors.ts';
import type { Queryable } from './client.ts';

export interface WorkflowSummary {
  id: string;
  workspaceId: string;
  name: string;
  description: string;
  folderId: string | null;
  isDeployed: boolean;
  deployedVersion: number | null;
  deployedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface WorkflowPageQuery {
  workspaceId: string;
  deployedOnly: boolean;
  /** Only the workflows in this folder (the caller checks that it is one of the workspace's). */
  folderId?: string | undefined;
  limit: number;
  cursor?: string | undefined;
}

// The cursor is the (created_at, id) of the last workflow served, created_at with its microseconds
// (workflows made in one transaction share it exactly). Opaque to clients: base64url of JSON.
interface Position {
  t: string;
  id: string;
}

const encodeCursor = (p: Position) => Buffer.from(JSON.stringify({ t: p.t, id: p.id })).toString('base64url');

const CURSOR_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const CURSOR_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

// Only what encodeCursor writes (re-encoding gives it back): anything looser would reach the casts
// in the query and fail there as a 500 instead of this 400.
function decodeCursor(cursor: string): Position {
  try {
    const p = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<Position>;
    if (
      typeof p.t === 'string' &&
      CURSOR_TIME.test(p.t) &&
      !Number.isNaN(Date.parse(p.t)) &&
      typeof p.id === 'string' &&
      CURSOR_ID.test(p.id) &&
      encodeCursor({ t: p.t, id: p.id }) === cursor
    )
      return { t: p.t, id: p.id };
  } catch {}
  throw invalidField('cursor', 'Not a cursor returned by this endpoint');
}

type Row = {
  id: string;
  workspace_id: string;
  name: string;
  description: string;
  folder_id: string | null;
  deployed_version: number | null;
  deployed_at: Date | null;
  created_at: Date;
  updated_at: Date;
  position: string;
};

/** One page; `nextCursor` only when more follow. Definitions are left out (they may be large). */
export async function listWorkflowPage(
  db: Queryable,
  q: WorkflowPageQuery,
): Promise<{ data: WorkflowSummary[]; nextCursor?: string }> {
  const where = ['workspace_id = $1', 'archived_at is null'];
  const params: unknown[] = [q.workspaceId];
  if (q.deployedOnly) where.push('deployed_version is not null');
  if (q.folderId) {
    params.push(q.folderId);
    where.push(`folder_id = $${params.length}::uuid`);
  }
  if (q.cursor) {
    const c = decodeCursor(q.cursor);
    params.push(c.t, c.id);
    // Bound as text: a timestamptz parameter sent through Date would lose the microseconds.
    where.push(`(created_at, id) > ($${params.length - 1}::text::timestamptz, $${params.length}::uuid)`);
  }
  params.push(q.limit + 1);
  const rows = await db.query<Row>(
    `select id, workspace_id, name, description, folder_id, deployed_version, deployed_at, created_at, updated_at,
        to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as position
       from workflows where ${where.join(' and ')}
      order by created_at, id limit $${params.length}`,
    params,
  );
  const page = rows.slice(0, q.limit);
  const last = page.at(-1);
  return {
    data: page.map((r) => ({
      id: r.id,
      workspaceId: r.workspace_id,
      name: r.name,
      description: r.description,
      folderId: r.folder_id,
      isDeployed: r.deployed_version !== null,
      deployedVersion: r.deployed_version,
      deployedAt: r.deployed_at?.toISOString() ?? null,
      createdAt: r.created_at.toISOString(),
      updatedAt: r.updated_at.toISOString(),
    })),
    ...(rows.length > q.limit && last ? { nextCursor: encodeCursor({ t: last.position, id: last.id }) } : {}),
  };
}
