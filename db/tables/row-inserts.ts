// Inserting rows: one, or a batch all or nothing. insertChecked is the one way rows go into a
// locked table (inserts, upserts, imports): it keeps the row cap, unique values and positions.
import { randomUUID } from 'node:crypto';
import { type FieldIssue, invalidField, ServiceError } from '../../errors.ts';
import type { Queryable } from '../client.ts';
import type { Path, TableRef, TableRow } from './locked-table.ts';
import { duplicateIssues, slotsOf, takenIssues } from './unique-values.ts';
import { checkRow, invalidRows } from './values.ts';
import type { WriteContext } from './write-context.ts';
import { writeTable } from './write-groups.ts';

export const MAX_BATCH_ROWS = 1000;

/** A row checked against the columns (checkRow), and where it is in the request. */
export interface RowToInsert {
  values: Record<string, unknown>;
  path: Path;
}

/**
 * Inserts checked rows into a locked table: the row cap, then uniqueness (against the table and
 * each other), then the rows with their unique slots and the new row_count in one statement; the
 * table's figures in `ctx` follow. A 400 naming the row cap at `capPath`, or each value taken.
 */
export async function insertChecked(
  tx: Queryable,
  ctx: WriteContext,
  rows: RowToInsert[],
  capPath: Path,
): Promise<TableRow[]> {
  const { table } = ctx;
  if (table.rowCount + rows.length > table.maxRows) {
    throw new ServiceError(400, `Row limit reached: the table holds at most ${table.maxRows} rows`, {
      details: [
        {
          code: 'too_big',
          path: capPath,
          message: `The plan allows ${table.maxRows} rows per table; the table has ${table.rowCount} and this adds ${rows.length}`,
        },
      ],
    });
  }
  const ids = rows.map(() => randomUUID());
  const slots = rows.flatMap((r, i) => slotsOf(table.columns, ids[i] as string, r.values, r.path));
  const issues: FieldIssue[] = [];
  duplicateIssues(slots, issues);
  await takenIssues(tx, table.id, slots, issues, ctx.slots);
  if (issues.length) throw invalidRows(issues, 'Unique constraint violated');
  // The rows' data goes as one JSON array (cheaper to send than an array of JSON texts), the ids
  // as one comma-separated text (the client's array encoding cost half a millisecond a thousand
  // ids), and nothing per row comes back: ids are made here, positions follow the locked counter, and every
  // row of the statement has the transaction's timestamp.
  const sent = tx.query<{ at: Date }>(
    `with inserted as (
       insert into table_rows (id, table_id, position, data)
       select i.id, $1, $2::bigint + t.ord, t.value
         from jsonb_array_elements($3::jsonb) with ordinality as t(value, ord)
         join unnest(string_to_array($4, ',')::uuid[]) with ordinality as i(id, ord) on i.ord = t.ord
     ), slots as (
       insert into table_unique_values (table_id, column_name, value_key, row_id)
       select $1, c, k, r from unnest($5::text[], $6::text[], $7::uuid[]) as s(c, k, r)
     )
     update user_tables set row_count = row_count + $8::int, next_position = next_position + $8::int
      where id = $1 returning now() as at`,
    [
      table.id,
      table.lastPosition,
      JSON.stringify(rows.map((r) => r.values)),
      ids.join(','),
      slots.map((s) => s.column),
      slots.map((s) => s.key),
      slots.map((s) => s.rowId),
      rows.length,
    ],
  );
  const first = table.lastPosition + 1;
  table.rowCount += rows.length;
  table.lastPosition += rows.length;
  ctx.slots.claimed(slots);
  ctx.decided();
  const [stamp] = await sent;
  const at = (stamp?.at ?? new Date()).toISOString();
  return rows.map((r, i) => ({
    id: ids[i] as string,
    data: { ...r.values },
    position: first + i,
    createdAt: at,
    updatedAt: at,
  }));
}

async function insertData(db: Queryable, ref: TableRef, rows: unknown[], root: Path, batch: boolean) {
  if (batch && (rows.length < 1 || rows.length > MAX_BATCH_ROWS)) {
    throw invalidField(root.join('.'), `Give 1 to ${MAX_BATCH_ROWS} rows`, 'too_big');
  }
  return writeTable(
    db,
    ref,
    (table) => {
      const issues: FieldIssue[] = [];
      const checked = rows.map((data, i) => {
        const path = batch ? [...root, i] : root;
        return { values: checkRow(table.columns, data, path, issues).values, path };
      });
      if (issues.length) throw invalidRows(issues);
      return {
        lookups: () => checked.flatMap((r) => slotsOf(table.columns, '', r.values, r.path)),
        run: (tx, ctx) => insertChecked(tx, ctx, checked, root),
      };
    },
    rows.length,
  );
}

/** Inserts one row (issues under ['data', column]). Answers it with its position. */
export async function insertRow(db: Queryable, ref: TableRef, data: unknown): Promise<TableRow> {
  const [row] = await insertData(db, ref, [data], ['data'], false);
  return row as TableRow;
}

/**
 * Inserts 1 to 1000 rows, all or nothing: any invalid row, any unique value taken (by a row of the
 * table or an earlier row of the batch), or passing the row cap, and nothing is written; issues
 * under ['rows', index, column]. Answers the rows in position order.
 */
export function insertRows(db: Queryable, ref: TableRef, rows: unknown[]): Promise<TableRow[]> {
  return insertData(db, ref, rows, ['rows'], true);
}
