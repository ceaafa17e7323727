// Changing rows in place: a patch of checked values applied to rows of a locked table (bulk update
// by filter, the update of one row by id, an upsert that finds its row), keeping unique values
// unique and their slots current.
import { type FieldIssue, notFound } from '../../errors.ts';
import type { Queryable } from '../client.ts';
import { isUuid } from '../ids.ts';
import { compileFilter } from './filters.ts';
import {
  byPosition,
  checkRef,
  type Path,
  ROW_COLUMNS,
  type RowRecord,
  type TableRef,
  type TableRow,
  toRow,
} from './locked-table.ts';
import { slotsOf, takenIssues } from './unique-values.ts';
import { type CheckedRow, type ColumnDef, checkRow, invalidRows } from './values.ts';
import type { WriteContext } from './write-context.ts';
import { writeTable } from './write-groups.ts';

/**
 * Applies a checked patch to rows of a locked table: a unique column may take a value on one row
 * only, and one no other row holds; the rows' slots of the unique columns whose value it changes or
 * clears are replaced. The rows and their slots change in one statement, and only for rows in the
 * table. Answers the updated rows in position order; 404 when a row named is not in the table.
 * `named`: the ids are the caller's, not found under the lock (from a slot, or a select).
 */
export async function patchRows(
  tx: Queryable,
  ctx: WriteContext,
  ids: string[],
  patch: CheckedRow,
  path: Path,
  named = false,
): Promise<TableRow[]> {
  if (!ids.length) return [];
  const { table } = ctx;
  const setUnique = table.columns.filter((c) => c.unique && Object.hasOwn(patch.values, c.name));
  const issues: FieldIssue[] = [];
  const wanted = ids.length === 1 ? slotsOf(setUnique, ids[0] as string, patch.values, path) : [];
  if (ids.length > 1) {
    for (const c of setUnique) {
      issues.push({
        code: 'not_unique',
        path: [...path, c.name],
        message: `Unique column ${c.name} cannot take one value on ${ids.length} rows`,
      });
    }
  }
  await takenIssues(tx, table.id, wanted, issues, ctx.slots);
  if (issues.length) throw invalidRows(issues, 'Unique constraint violated');
  // A value the row holds already keeps its slot; the others are claimed, and the slots of the
  // columns they replace or clear released.
  const claims = wanted.filter((s) => ctx.slots.known(s) !== s.rowId);
  const kept = wanted.filter((s) => !claims.includes(s)).map((s) => s.column);
  const released = uniqueTouched(table.columns, patch).filter((c) => !kept.includes(c));
  const sent = tx.query<RowRecord>(
    `with updated as (
       update table_rows set data = (data || $3::jsonb) - $4::text[], updated_at = now()
        where table_id = $1 and id = any($2::uuid[]) returning ${ROW_COLUMNS}
     ), released as (
       delete from table_unique_values
        where table_id = $1 and column_name = any($5::text[]) and row_id in (select id from updated)
     ), claimed as (
       insert into table_unique_values (table_id, column_name, value_key, row_id)
       select $1, c, k, r from unnest($6::text[], $7::text[], $8::uuid[]) as s(c, k, r)
        where exists (select from updated)
     )
     select ${ROW_COLUMNS} from updated`,
    [
      table.id,
      ids,
      JSON.stringify(patch.values),
      patch.cleared,
      released,
      claims.map((s) => s.column),
      claims.map((s) => s.key),
      claims.map((s) => s.rowId),
    ],
  );
  ctx.slots.released(ids, released);
  ctx.slots.claimed(claims);
  // Rows found under the lock are there: the statement does what was decided. Named ones may not
  // be, and the 404 must come before the writes after it are decided on the slots changed here.
  if (!named) ctx.decided();
  const updated = await sent;
  if (updated.length < ids.length) throw notFound('Row');
  return updated.map(toRow).sort(byPosition);
}

/** The unique columns a patch sets or clears: their slots change. */
const uniqueTouched = (columns: readonly ColumnDef[], patch: CheckedRow) =>
  columns
    .filter((c) => c.unique && (Object.hasOwn(patch.values, c.name) || patch.cleared.includes(c.name)))
    .map((c) => c.name);

/** Writes a patch to the rows of table $1 matching `where` (over `params`), in one statement. */
async function applyPatch<R>(
  tx: Queryable,
  patch: CheckedRow,
  where: string,
  params: unknown[],
  returning: string,
): Promise<R[]> {
  const n = params.push(JSON.stringify(patch.values), patch.cleared);
  return tx.query<R>(
    `update table_rows set data = (data || $${n - 1}::jsonb) - $${n}::text[], updated_at = now()
      where table_id = $1 and ${where} returning ${returning}`,
    params,
  );
}

/** The patch `data` makes (null clears an optional column); a 400 for bad values or no column. */
function checkPatch(columns: readonly ColumnDef[], data: unknown): CheckedRow {
  const issues: FieldIssue[] = [];
  const patch = checkRow(columns, data, ['data'], issues, true);
  if (!issues.length && !Object.keys(patch.values).length && !patch.cleared.length) {
    issues.push({ code: 'custom', path: ['data'], message: 'Give at least one column to set' });
  }
  if (issues.length) throw invalidRows(issues);
  return patch;
}

/**
 * Sets the columns given in `data` (null clears an optional column) on every row `filter` selects
 * (see filters.ts; {} selects all). A unique column set on several rows is a 400 and nothing
 * changes. Answers the ids of the updated rows in position order (none matched: 0, not an error).
 */
export function updateRows(
  db: Queryable,
  ref: TableRef,
  filter: unknown,
  data: unknown,
): Promise<{ updatedCount: number; updatedRowIds: string[] }> {
  return writeTable(db, ref, (table) => {
    const patch = checkPatch(table.columns, data);
    const params: unknown[] = [table.id];
    const where = compileFilter(table.columns, filter, params);
    return {
      async run(tx, ctx) {
        // Without unique columns to re-check, the filter and the write are one statement, and only
        // the ids come back (an update may touch many rows).
        if (!uniqueTouched(table.columns, patch).length) {
          const sent = applyPatch<{ id: string; position: number }>(tx, patch, where, params, 'id, position');
          ctx.decided();
          const updated = await sent;
          const ids = updated.sort(byPosition).map((r) => r.id);
          return { updatedCount: ids.length, updatedRowIds: ids };
        }
        const matched = await tx.query<{ id: string }>(
          `select id from table_rows where table_id = $1 and ${where} order by position`,
          params,
        );
        const ids = matched.map((r) => r.id);
        await patchRows(tx, ctx, ids, patch, ['data']);
        return { updatedCount: ids.length, updatedRowIds: ids };
      },
    };
  });
}

/**
 * Sets the columns given in `data` (null clears an optional column) on one row, checked as a bulk
 * update's are: a unique value another row holds is a 400. 404 naming the table or the row.
 * Answers the row as it is now.
 */
export async function updateRow(
  db: Queryable,
  ref: TableRef,
  rowId: string,
  data: unknown,
): Promise<TableRow> {
  checkRef(ref);
  if (!isUuid(rowId)) throw notFound('Row');
  return writeTable(db, ref, (table) => {
    const patch = checkPatch(table.columns, data);
    return {
      lookups: () => slotsOf(table.columns, rowId, patch.values, ['data']),
      run: async (tx, ctx) => (await patchRows(tx, ctx, [rowId], patch, ['data'], true))[0] as TableRow,
    };
  });
}
