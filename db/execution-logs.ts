// The execution log, read side: a finished execution (ended_at set) is one log entry, written by the
// runner into its executions row. Filtered, cursor-paged lists behind GET /api/v1/logs, and one
// entry with its workflow, execution data and cost behind GET /api/v1/logs/{id}.
import { invalidField } from '../errors.ts';
import type { Queryable } from './client.ts';
import type { ExecutionCost } from './executions.ts';
import type { WorkspacePermission, WorkspaceRow } from './workspaces.ts';

export type LogLevel = 'info' | 'error';

export interface LogEntry {
  id: string;
  workflowId: string;
  executionId: string;
  level: LogLevel;
  trigger: string;
  totalDurationMs: number;
  startedAt: string;
  endedAt: string;
  createdAt: string;
  cost: { total: number };
}

/**
 * One block run, as the runner records it in the trace column (runner/executor/trace.ts writes
 * them); large values are cut there.
 */
export interface TraceSpan {
  blockId: string;
  type: string;
  /** Set inside loop and parallel bodies: the iteration's index. */
  iteration?: number;
  /** The loop or parallel block this span ran inside. */
  parent?: string;
  /** Set on blocks that carry `retry`: which attempt this span is (1, 2, …). */
  attempt?: number;
  status: 'success' | 'error';
  startedAt: string;
  endedAt: string;
  durationMs: number;
  input?: unknown;
  output?: unknown;
  error?: string;
  cost?: number;
  logs?: string[];
  /** The spans of a child workflow run by a `workflow` block (documented as opaque objects). */
  children?: unknown[];
}

export interface LogEntryDetail extends Omit<LogEntry, 'cost'> {
  cost: ExecutionCost;
  workflow: { id: string; name: string; description: string };
  executionData: {
    traceSpans: TraceSpan[];
    /** Present only when the execution completed. */
    finalOutput?: unknown;
    /** Present only when the execution failed. */
    error?: string | null;
    inputs: Record<string, unknown>;
  };
}

export interface LogQuery {
  workspaceId: string;
  workflowIds?: string[] | undefined;
  level?: LogLevel | undefined;
  triggers?: string[] | undefined;
  /** On startedAt, inclusive, at the millisecond precision of the timestamps we answer. */
  startDate?: Date | undefined;
  endDate?: Date | undefined;
  executionId?: string | undefined;
  minDurationMs?: number | undefined;
  maxDurationMs?: number | undefined;
  details: 'basic' | 'full';
  limit: number;
  cursor?: string | undefined;
}

export interface LogPage<E> {
  data: E[];
  /** Absent on the last page. */
  nextCursor?: string;
}

// Rows carry the entry's columns under names no workspaces column has: the detail query selects
// them beside `s.*`.
const ENTRY_COLUMNS = `e.log_id, e.id as execution_id, e.workflow_id, e.status, e.trigger, e.duration_ms,
  e.created_at as entry_created_at, e.started_at, e.ended_at`;
const DETAIL_COLUMNS = `e.cost, e.inputs, e.output, e.error, e.trace, w.name as workflow_name,
  w.description as workflow_description`;

type EntryRow = {
  log_id: string;
  execution_id: string;
  workflow_id: string;
  status: 'completed' | 'failed';
  trigger: string;
  duration_ms: number | null;
  entry_created_at: Date;
  started_at: Date | null;
  ended_at: Date;
};

type DetailRow = EntryRow & {
  cost: ExecutionCost | null;
  inputs: Record<string, unknown>;
  output: unknown;
  error: string | null;
  trace: TraceSpan[] | null;
  workflow_name: string;
  workflow_description: string;
};

// Rows written before the runner recorded cost (or runs that never reached it) cost nothing known.
const NO_COST: ExecutionCost = {
  total: 0,
  base: 0,
  tokens: { prompt: 0, completion: 0, total: 0 },
  models: {},
};

function toEntry(r: EntryRow): Omit<LogEntry, 'cost'> {
  // An abandoned execution gets its started_at when it is failed; a row is never finished unstarted.
  const startedAt = r.started_at ?? r.entry_created_at;
  return {
    id: r.log_id,
    workflowId: r.workflow_id,
    executionId: r.execution_id,
    level: r.status === 'failed' ? 'error' : 'info',
    trigger: r.trigger,
    totalDurationMs: r.duration_ms ?? r.ended_at.getTime() - startedAt.getTime(),
    startedAt: startedAt.toISOString(),
    endedAt: r.ended_at.toISOString(),
    createdAt: r.entry_created_at.toISOString(),
  };
}

function toDetail(r: DetailRow): LogEntryDetail {
  return {
    ...toEntry(r),
    cost: r.cost ?? NO_COST,
    workflow: { id: r.workflow_id, name: r.workflow_name, description: r.workflow_description },
    executionData: {
      traceSpans: r.trace ?? [],
      ...(r.status === 'completed' ? { finalOutput: r.output } : { error: r.error }),
      inputs: r.inputs,
    },
  };
}

// The cursor is the (created_at, id) of the last entry served, the order of executions_log_page_idx,
// so pages stay stable while executions finish. created_at has microseconds and executions inserted
// in one batch share it exactly, so the cursor keeps all six digits: rounded to milliseconds it would
// skip the rest of such a batch. Opaque to clients: base64url of JSON.
interface CursorPosition {
  t: string;
  id: string;
}

const encodeCursor = (p: CursorPosition) =>
  Buffer.from(JSON.stringify({ t: p.t, id: p.id })).toString('base64url');

// Only what encodeCursor writes: anything looser would reach the casts in the query and fail there
// as a 500. Re-encoding must give the cursor back, which also refuses extra members and padding.
const CURSOR_TIME = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3})\d{3}Z$/;
const CURSOR_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function decodeCursor(cursor: string): CursorPosition {
  try {
    const p = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<CursorPosition>;
    const ms = typeof p.t === 'string' ? CURSOR_TIME.exec(p.t)?.[1] : undefined;
    if (
      ms &&
      !ms.startsWith('0000') &&
      new Date(`${ms}Z`).toISOString() === `${ms}Z` &&
      typeof p.id === 'string' &&
      CURSOR_ID.test(p.id) &&
      encodeCursor({ t: p.t as string, id: p.id }) === cursor
    ) {
      return { t: p.t as string, id: p.id };
    }
  } catch {}
  throw invalidField('cursor', 'Not a cursor returned by this endpoint');
}

/**
 * One page of a workspace's log, newest first, in one query over executions_log_page_idx. Filters
 * are added only when given, so each combination gets a plan of its own.
 */
export async function listExecutionLogs(
  db: Queryable,
  q: LogQuery,
): Promise<LogPage<LogEntry> | LogPage<LogEntryDetail>> {
  const full = q.details === 'full';
  // `e.ended_at is not null` must stay literal: it is what lets the planner use the partial index.
  const where = ['e.workspace_id = $1', 'e.ended_at is not null'];
  const params: unknown[] = [q.workspaceId];
  const add = (clause: (n: string) => string, value: unknown) => {
    params.push(value);
    where.push(clause(`$${params.length}`));
  };
  if (q.workflowIds) add((n) => `e.workflow_id = any(${n}::uuid[])`, q.workflowIds);
  if (q.level) where.push(q.level === 'error' ? `e.status = 'failed'` : `e.status <> 'failed'`);
  if (q.triggers) add((n) => `e.trigger = any(${n}::text[])`, q.triggers);
  if (q.startDate) add((n) => `e.started_at >= ${n}::timestamptz`, q.startDate.toISOString());
  // Entries show milliseconds: an end given as an entry's startedAt must include that entry.
  if (q.endDate)
    add((n) => `e.started_at < ${n}::timestamptz + interval '1 millisecond'`, q.endDate.toISOString());
  if (q.executionId) add((n) => `e.id = ${n}::uuid`, q.executionId);
  if (q.minDurationMs !== undefined) add((n) => `e.duration_ms >= ${n}::int`, q.minDurationMs);
  if (q.maxDurationMs !== undefined) add((n) => `e.duration_ms <= ${n}::int`, q.maxDurationMs);
  if (q.cursor) {
    const c = decodeCursor(q.cursor);
    params.push(c.t, c.id);
    // Bound as text: postgres.js sends a timestamptz parameter through Date, which drops microseconds.
    where.push(`(e.created_at, e.id) < ($${params.length - 1}::text::timestamptz, $${params.length}::uuid)`);
  }
  params.push(q.limit + 1);
  const rows = await db.query<
    (EntryRow & { cost_total: number | null; position: string }) | (DetailRow & { position: string })
  >(
    `select ${ENTRY_COLUMNS},
        to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as position,
        ${full ? DETAIL_COLUMNS : `e.cost -> 'total' as cost_total`}
       from executions e ${full ? 'join workflows w on w.id = e.workflow_id' : ''}
      where ${where.join(' and ')}
      order by e.created_at desc, e.id desc
      limit $${params.length}`,
    params,
  );
  const page = rows.slice(0, q.limit);
  const last = page.at(-1);
  const nextCursor =
    rows.length > q.limit && last
      ? { nextCursor: encodeCursor({ t: last.position, id: last.execution_id }) }
      : {};
  if (full) return { data: (page as DetailRow[]).map(toDetail), ...nextCursor };
  return {
    data: (page as (EntryRow & { cost_total: number | null })[]).map((r) => ({
      ...toEntry(r),
      cost: { total: r.cost_total ?? 0 },
    })),
    ...nextCursor,
  };
}

export interface LoadedLogEntry {
  entry: LogEntryDetail;
  /** The entry's workspace and the user's permission there, for authorizeLoadedResource. */
  workspace: WorkspaceRow;
  permission: WorkspacePermission | null;
}

/**
 * A finished execution's log entry by its log id, with what deciding access needs, in one query:
 * the workspace, and the permission there of `userId` (null for a workspace key). Null when no
 * finished execution has that id.
 */
export async function getExecutionLog(
  db: Queryable,
  logId: string,
  userId: string | null,
): Promise<LoadedLogEntry | null> {
  return loadLog(db, 'log_id', logId, userId);
}

/** getExecutionLog by the execution's own id (GET /api/v1/logs/executions/{executionId}). */
export async function getExecutionLogByExecution(
  db: Queryable,
  executionId: string,
  userId: string | null,
): Promise<LoadedLogEntry | null> {
  return loadLog(db, 'id', executionId, userId);
}

async function loadLog(
  db: Queryable,
  column: 'log_id' | 'id',
  value: string,
  userId: string | null,
): Promise<LoadedLogEntry | null> {
  const [row] = await db.query<WorkspaceRow & DetailRow & { permission: WorkspacePermission | null }>(
    `select s.*, p.permission, ${ENTRY_COLUMNS}, ${DETAIL_COLUMNS}
       from executions e
       join workflows w on w.id = e.workflow_id
       join workspaces s on s.id = e.workspace_id
       left join workspace_permissions p on p.workspace_id = s.id and p.user_id = $2::uuid
      where e.${column} = $1::uuid and e.ended_at is not null`,
    [value, userId],
  );
  if (!row) return null;
  // The row is the workspace's, with the entry's columns beside it: each half reads what it needs.
  return { entry: toDetail(row), workspace: row, permission: row.permission };
}
