// Reads of the rows of user tables: a query (filter, sort, limit and offset, with the total the
// filter selects) and one row by id. Reads take no lock: they see the rows as last committed.
import { invalidField, notFound } from '../../errors.ts';
import type { Queryable } from '../client.ts';
import { isUuid } from '../ids.ts';
import { compileFilter, compileSort } from './filters.ts';
import {
  checkRef,
  ROW_COLUMNS,
  type RowRecord,
  type TableRef,
  type TableRow,
  toRow,
} from './locked-table.ts';
import type { ColumnDef } from './values.ts';

export const MAX_QUERY_LIMIT = 1000;

export interface RowQuery {
  /** See filters.ts. */
  filter?: unknown;
  /** See filters.ts; position ascending by default. */
  sort?: unknown;
  /** 1 to 1000; 100 by default. */
  limit?: number;
  offset?: number;
}

async function columnsOf(db: Queryable, ref: TableRef): Promise<ColumnDef[]> {
  checkRef(ref);
  const [t] = await db.query<{ columns: ColumnDef[] }>(
    'select columns from user_tables where id = $1 and workspace_id = $2',
    [ref.id, ref.workspaceId],
  );
  if (!t) throw notFound('Table');
  return t.columns;
}

/** The rows a filter selects, sorted and paged, with how many it selects in all. */
export async function queryRows(
  db: Queryable,
  ref: TableRef,
  q: RowQuery = {},
): Promise<{ rows: TableRow[]; total: number }> {
  const limit = q.limit ?? 100;
  const offset = q.offset ?? 0;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_QUERY_LIMIT) {
    throw invalidField('limit', `Give a whole number from 1 to ${MAX_QUERY_LIMIT}`);
  }
  if (!Number.isInteger(offset) || offset < 0) throw invalidField('offset', 'Give a whole number, 0 or more');
  const columns = await columnsOf(db, ref);
  const params: unknown[] = [ref.id];
  const where = compileFilter(columns, q.filter, params);
  const order = compileSort(columns, q.sort, params);
  params.push(limit, offset);
  const rows = await db.query<RowRecord & { total: number }>(
    `select ${ROW_COLUMNS}, count(*) over () as total from table_rows where table_id = $1 and ${where}
      order by ${order} limit $${params.length - 1} offset $${params.length}`,
    params,
  );
  let total = Number(rows[0]?.total ?? 0);
  if (!rows.length && offset > 0) {
    const [c] = await db.query<{ n: number }>(
      `select count(*)::int as n from table_rows where table_id = $1 and ${where}`,
      params.slice(0, -2),
    );
    total = c?.n ?? 0;
  }
  return { rows: rows.map(toRow), total };
}

/** One row of the table; 404 naming the table or the row, whichever is missing. */
export async function getRow(db: Queryable, ref: TableRef, rowId: string): Promise<TableRow> {
  checkRef(ref);
  if (!isUuid(rowId)) throw notFound('Row');
  const [r] = await db.query<Partial<RowRecord> & { table_id: string }>(
    `select t.id as table_id, r.id, r.position, r.data, r.created_at, r.updated_at
       from user_tables t left join table_rows r on r.table_id = t.id and r.id = $3
      where t.id = $1 and t.workspace_id = $2`,
    [ref.id, ref.workspaceId, rowId],
  );
  if (!r) throw notFound('Table');
  if (!r.id) throw notFound('Row');
  return toRow(r as RowRecord);
}
