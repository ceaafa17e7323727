// Writes to the rows of user tables, the store's entry for them: insert (./row-inserts.ts), update
// by filter or by id (./row-patches.ts), upsert on a unique column, delete by id or filter; reads
// are ./row-queries.ts. Every write runs under the lock of its table's row, in a group with the
// table's other concurrent writes (./write-groups.ts): row_count stays equal to the number of rows,
// the plan's row cap holds however many race, and positions only grow. Values of unique columns
// each hold a slot (./unique-values.ts).
import { type FieldIssue, invalidField, notFound, ServiceError } from '../../errors.ts';
import type { Queryable } from '../client.ts';
import { isUuid } from '../ids.ts';
import { compileFilter } from './filters.ts';
import { byPosition, checkRef, type Path, type TableRef, type TableRow } from './locked-table.ts';
import { insertChecked } from './row-inserts.ts';
import { patchRows } from './row-patches.ts';
import { checkRow, checkValue, invalidRows, uniqueKey } from './values.ts';
import type { WriteContext } from './write-context.ts';
import { writeTable } from './write-groups.ts';

/**
 * Updates the row whose unique column `conflictTarget` holds data's value of it (the columns given
 * only), or inserts data as a new row (counting toward the row cap). conflictTarget may be left out
 * when the table has exactly one unique column. 400 for a table without one, for several and no
 * conflictTarget, for a conflictTarget that is not a unique column, and for data without its value.
 */
export function upsertRow(
  db: Queryable,
  ref: TableRef,
  data: unknown,
  conflictTarget?: string,
): Promise<{ row: TableRow; operation: 'insert' | 'update' }> {
  return writeTable(db, ref, (table) => {
    const unique = table.columns.filter((c) => c.unique);
    const refuse = (path: Path, message: string) =>
      new ServiceError(400, message, { details: [{ code: 'custom', path, message }] });
    if (!unique.length) throw refuse([], 'Upsert needs a table with a unique column');
    const names = unique.map((c) => c.name).join(', ');
    const target = conflictTarget === undefined ? unique[0] : unique.find((c) => c.name === conflictTarget);
    if (!target || (conflictTarget === undefined && unique.length > 1)) {
      throw refuse(
        ['conflictTarget'],
        conflictTarget === undefined
          ? `The table has several unique columns: name one in conflictTarget (${names})`
          : `conflictTarget must name a unique column (${names})`,
      );
    }
    const given =
      typeof data === 'object' && data !== null && Object.hasOwn(data, target.name)
        ? (data as Record<string, unknown>)[target.name]
        : null;
    const value = given === undefined || given === null ? null : checkValue(target, given);
    if (value === null) throw refuse(['data', target.name], `Upsert needs a value of ${target.name}`);
    // An invalid value matches no row: checkRow names it below.
    const slot = value.ok ? { column: target.name, key: uniqueKey(value.value) } : null;
    return {
      lookups: () => (slot ? [slot] : []),
      async run(tx, ctx) {
        const existing = slot ? await ctx.slots.holder(tx, table.id, slot) : null;
        const issues: FieldIssue[] = [];
        const checked = checkRow(table.columns, data, ['data'], issues, existing !== null);
        if (issues.length) throw invalidRows(issues);
        // The target's slot stays as it is (updated) or is known free (inserted).
        if (existing !== null) {
          const [row] = await patchRows(tx, ctx, [existing], checked, ['data']);
          return { row: row as TableRow, operation: 'update' as const };
        }
        const [row] = await insertChecked(tx, ctx, [{ values: checked.values, path: ['data'] }], ['data']);
        return { row: row as TableRow, operation: 'insert' as const };
      },
    };
  });
}

/**
 * Deletes the rows of the locked table matching `where` (over `params`, $1 the table) and counts
 * them off in one statement; their unique slots go with them (on delete cascade). Answers the ids
 * deleted, in position order.
 */
async function deleteWhere(tx: Queryable, ctx: WriteContext, where: string, params: unknown[]) {
  const deleted = await tx.query<{ id: string; position: number }>(
    `with deleted as (delete from table_rows where table_id = $1 and ${where} returning id, position),
          counted as (update user_tables set row_count = row_count - (select count(*)::int from deleted)
                       where id = $1 and exists (select from deleted))
     select id, position from deleted`,
    params,
  );
  const ids = deleted.sort(byPosition).map((r) => r.id);
  ctx.table.rowCount -= ids.length;
  ctx.slots.released(ids);
  return ids;
}

/**
 * Deletes the rows named by id and/or selected by a filter (both given: rows matching both); ids
 * not in the table are passed over. Answers the ids deleted, in position order.
 */
export async function deleteRows(
  db: Queryable,
  ref: TableRef,
  selection: { ids?: string[]; filter?: unknown },
): Promise<{ deletedCount: number; deletedRowIds: string[] }> {
  const bad = (selection.ids ?? []).findIndex((id) => !isUuid(id));
  if (bad >= 0) throw invalidField(`rowIds.${bad}`, 'Must be a UUID', 'invalid_format');
  if (selection.ids === undefined && selection.filter === undefined) {
    throw invalidField('rowIds', 'Give rowIds or a filter');
  }
  return writeTable(db, ref, (table) => {
    const params: unknown[] = [table.id];
    const where: string[] = [];
    if (selection.ids !== undefined) {
      params.push(selection.ids);
      where.push('id = any($2::uuid[])');
    }
    if (selection.filter !== undefined) where.push(compileFilter(table.columns, selection.filter, params));
    return {
      async run(tx, ctx) {
        const ids = await deleteWhere(tx, ctx, where.join(' and '), params);
        return { deletedCount: ids.length, deletedRowIds: ids };
      },
    };
  });
}

/** Deletes one row; 404 naming the table or the row, whichever is missing. */
export async function deleteRow(db: Queryable, ref: TableRef, rowId: string): Promise<void> {
  checkRef(ref);
  if (!isUuid(rowId)) throw notFound('Row');
  await writeTable(db, ref, () => ({
    async run(tx, ctx) {
      const [deleted] = await deleteWhere(tx, ctx, 'id = $2', [ctx.table.id, rowId]);
      if (!deleted) throw notFound('Row');
    },
  }));
}
