// Reads every row a filter selects, in position order, a page at a time (for an export): each page
// is one statement that starts after the last position read, so memory holds one page whatever the
// table's size, and no offset is counted through. No transaction spans the pages (one would hold a
// connection, and embedded the whole database, for as long as the reader is slow): every row that
// is there from the first page to the last is read exactly once (positions never change), and a
// row written or deleted meanwhile may or may not be.
import type { Queryable } from '../client.ts';
import { compileFilter } from './filters.ts';
import type { TableRef } from './locked-table.ts';
import { getTable, type Table } from './tables.ts';

export const SCAN_PAGE_ROWS = 1000;

export interface RowScan {
  /** The table as it was when the scan was opened: its columns name the fields. */
  table: Table;
  /** The pages of row data, in position order; none when no row matches. */
  pages(): AsyncGenerator<Record<string, unknown>[]>;
}

/**
 * Opens a scan of the rows `filter` selects (see filters.ts; undefined selects all). The table is
 * found (404) and the filter checked (400) here, before a page is read.
 */
export async function scanRows(
  db: Queryable,
  ref: TableRef,
  filter: unknown,
  pageRows = SCAN_PAGE_ROWS,
): Promise<RowScan> {
  const table = await getTable(db, ref);
  const params: unknown[] = [table.id];
  const where = compileFilter(table.schema.columns, filter, params);
  const after = `$${params.length + 1}`;
  const limit = `$${params.length + 2}`;
  return {
    table,
    async *pages() {
      let last = 0;
      for (;;) {
        const rows = await db.query<{ position: string | number; data: Record<string, unknown> }>(
          `select position, data from table_rows
            where table_id = $1 and position > ${after}::bigint and ${where}
            order by position limit ${limit}`,
          [...params, last, pageRows],
        );
        if (rows.length) yield rows.map((r) => r.data);
        if (rows.length < pageRows) return;
        last = Number((rows[rows.length - 1] as { position: string | number }).position);
      }
    },
  };
}
