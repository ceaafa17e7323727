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
  // The filter and sort are compiled against the columns as read first; the rows are read in a
  // later statement, which a column renamed or retyped in between (db/tables/columns.ts) would
  // leave reading keys the rows no longer carry. So that statement reads the columns again, in its
  // own snapshot, and a page read against changed columns is read again.
  for (let attempt = 1; ; attempt++) {
    const columns = await columnsOf(db, ref);
    const page = await pageOf(db, ref, columns, q.filter, q.sort, limit, offset, attempt === 3);
    if (page) return page;
  }
}

/**
 * One page of rows, or null when the table's columns are no longer `columns` (the caller reads
 * them again); `anyway` answers the page even then (a table whose columns keep changing).
 */
async function pageOf(
  db: Queryable,
  ref: TableRef,
  columns: ColumnDef[],
  filter: unknown,
  sort: unknown,
  limit: number,
  offset: number,
  anyway = false,
): Promise<{ rows: TableRow[]; total: number } | null> {
  const params: unknown[] = [ref.id];
  const where = compileFilter(columns, filter, params);
  const order = compileSort(columns, sort, params);
  params.push(JSON.stringify(columns), limit, offset);
  const n = params.length;
  // One statement, one snapshot: the table's columns as this read sees them, beside the page.
  const found = await db.query<{ current: boolean } & Partial<RowRecord> & { total: number | null }>(
    `select t.columns = $${n - 2}::jsonb as current, r.*
       from user_tables t
       left join lateral (
         select ${ROW_COLUMNS}, count(*) over () as total from table_rows
          where table_id = t.id and ${where}
          order by ${order} limit $${n - 1} offset $${n}
       ) r on true
      where t.id = $1`,
    params,
  );
  if (!found.length) throw notFound('Table');
  if (!anyway && !found[0]?.current) return null;
  const rows = found.filter((r) => r.id).map((r) => toRow(r as RowRecord));
  let total = Number(found[0]?.total ?? 0);
  if (!rows.length && offset > 0) {
    const [c] = await db.query<{ n: number }>(
      `select count(*)::int as n from table_rows where table_id = $1 and ${where}`,
      params.slice(0, -3),
    );
    total = c?.n ?? 0;
  }
  return { rows, total };
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
