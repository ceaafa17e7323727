// What every row operation shares: the reference to a table, a row as the API shows it, and the
// lock a writer takes on the table's row (lockTable) with what a write must respect: the columns,
// the row count and cap, the last position given out.
import { notFound } from '../../errors.ts';
import type { Queryable } from '../client.ts';
import { isUuid } from '../ids.ts';
import { limitsOf, type PlanName, type QuotaOverrides } from '../plans.ts';
import type { ColumnDef } from './values.ts';

/** Which table, and the workspace it must be in: what every table and row operation takes. */
export interface TableRef {
  id: string;
  workspaceId: string;
}

export interface TableRow {
  id: string;
  data: Record<string, unknown>;
  /** 1-based, in insertion order; gaps stay where rows were deleted. */
  position: number;
  createdAt: string;
  updatedAt: string;
}

/** Where a value is in a request, for the issues that name it ('rows', 3, 'email'). */
export type Path = (string | number)[];

/** A ref whose ids are not UUIDs names no table (and must not reach a uuid cast as a 500). */
export function checkRef(ref: TableRef): void {
  if (!isUuid(ref.id) || !isUuid(ref.workspaceId)) throw notFound('Table');
}

export type RowRecord = {
  id: string;
  position: number;
  data: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
};
export const ROW_COLUMNS = 'id, position, data, created_at, updated_at';

export const toRow = (r: RowRecord): TableRow => ({
  id: r.id,
  data: r.data,
  position: Number(r.position),
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

export const byPosition = (a: { position: number }, b: { position: number }) =>
  Number(a.position) - Number(b.position);

/**
 * A table locked for a write to its rows, with what the write must respect. The writes of a group
 * (./write-groups.ts) share one: each keeps rowCount and lastPosition current for the next.
 */
export interface LockedTable {
  id: string;
  workspaceId: string;
  organizationId: string;
  columns: ColumnDef[];
  rowCount: number;
  /** The position of the last row inserted (0 before the first). */
  lastPosition: number;
  /** The row cap of the organization's plan now. */
  maxRows: number;
}

/**
 * Locks the table's row until the end of the transaction `tx`; every writer of a table takes this
 * lock first. 404 when the table is not in the workspace.
 */
export async function lockTable(tx: Queryable, ref: TableRef): Promise<LockedTable> {
  checkRef(ref);
  const [row] = await tx.query<{
    columns: ColumnDef[];
    row_count: number;
    next_position: number;
    organization_id: string;
    plan: PlanName;
    overrides: QuotaOverrides | null;
  }>(
    `select t.columns, t.row_count, t.next_position, w.organization_id, o.plan, q.overrides
       from user_tables t join workspaces w on w.id = t.workspace_id join organizations o on o.id = w.organization_id
       left join quota_overrides q on q.organization_id = o.id
      where t.id = $1 and t.workspace_id = $2 for update of t`,
    [ref.id, ref.workspaceId],
  );
  if (!row) throw notFound('Table');
  return {
    id: ref.id,
    workspaceId: ref.workspaceId,
    organizationId: row.organization_id,
    columns: row.columns,
    rowCount: row.row_count,
    lastPosition: Number(row.next_position),
    maxRows: limitsOf(row.plan, row.overrides).maxRowsPerTable,
  };
}
