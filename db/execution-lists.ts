// A workspace's executions listed for the runs endpoint and the admin plane: filtered, newest first,
// cursor-paged. (The state machine itself is executions.ts.)
import { invalidField } from '../errors.ts';
import type { Queryable } from './client.ts';
import type { ExecutionRow, ExecutionStatus } from './executions.ts';

/** An execution in a listing: its state and timings, without inputs, output or trace. */
export interface ExecutionSummary {
  id: string;
  workflowId: string;
  version: number;
  status: ExecutionStatus;
  mode: 'sync' | 'async';
  trigger: string;
  error: string | null;
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
}

/**
 * A workspace's executions, newest first, whatever their state (the log lists finished ones only),
 * paged by keyset over executions_workspace_idx: the cursor is the last id served. `since` and
 * `until` bound the creation time (a range on the same index).
 */
export async function listExecutions(
  db: Queryable,
  q: {
    workspaceId: string;
    workflowId?: string | undefined;
    status?: ExecutionStatus | undefined;
    trigger?: string | undefined;
    /** Created at or after this instant. */
    since?: Date | undefined;
    /** Created before this instant. */
    until?: Date | undefined;
    limit: number;
    cursor?: string | undefined;
  },
): Promise<{ data: ExecutionSummary[]; nextCursor: string | null }> {
  const where = ['e.workspace_id = $1'];
  const params: unknown[] = [q.workspaceId];
  const add = (clause: (n: string) => string, value: unknown) => {
    params.push(value);
    where.push(clause(`$${params.length}`));
  };
  if (q.workflowId) add((n) => `e.workflow_id = ${n}::uuid`, q.workflowId);
  if (q.status) add((n) => `e.status = ${n}`, q.status);
  if (q.trigger) add((n) => `e.trigger = ${n}`, q.trigger);
  if (q.since) add((n) => `e.created_at >= ${n}::timestamptz`, q.since.toISOString());
  if (q.until) add((n) => `e.created_at < ${n}::timestamptz`, q.until.toISOString());
  if (q.cursor) {
    // A cursor of another listing (another workflow's) would page from a foreign position: refused.
    const [at] = await db.query(
      'select 1 from executions where id = $1 and workspace_id = $2 and ($3::uuid is null or workflow_id = $3)',
      [q.cursor, q.workspaceId, q.workflowId ?? null],
    );
    if (!at) throw invalidField('cursor', 'Not a cursor returned by this listing');
    add(
      (n) => `(e.created_at, e.id) < (select created_at, id from executions where id = ${n}::uuid)`,
      q.cursor,
    );
  }
  params.push(q.limit + 1);
  const rows = await db.query<ExecutionRow>(
    `select e.id, e.workflow_id, e.version, e.status, e.mode, e.trigger, e.error, e.created_at, e.started_at,
            e.ended_at
       from executions e where ${where.join(' and ')}
      order by e.created_at desc, e.id desc limit $${params.length}`,
    params,
  );
  const page = rows.slice(0, q.limit);
  return {
    data: page.map((r) => ({
      id: r.id,
      workflowId: r.workflow_id,
      version: r.version,
      status: r.status,
      mode: r.mode,
      trigger: r.trigger,
      error: r.error,
      createdAt: r.created_at.toISOString(),
      startedAt: r.started_at?.toISOString() ?? null,
      endedAt: r.ended_at?.toISOString() ?? null,
    })),
    nextCursor: rows.length > q.limit ? (page.at(-1)?.id ?? null) : null,
  };
}
