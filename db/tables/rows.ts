// Writes to the rows of user tables: insert (one row, or a batch all or nothing), bulk update by
// filter, upsert on a unique column, delete; reads are ./row-queries.ts. Every write is one transaction that first locks the
// table's row (lockTable), so the writers of one table run one at a time: row_count stays equal to
// the number of rows, the plan's row cap holds however many race, and positions only grow. Values
// of unique columns each hold a slot (./unique-values.ts).
import { randomUUID } from 'node:crypto';
import { type FieldIssue, invalidField, notFound, ServiceError } from '../../errors.ts';
import type { Queryable } from '../client.ts';
import { isUuid } from '../ids.ts';
import { limitsOf, type PlanName, type QuotaOverrides } from '../plans.ts';
import { compileFilter } from './filters.ts';
import {
  claimSlots,
  duplicateIssues,
  isSlotTaken,
  releaseSlots,
  slotsOf,
  takenIssues,
} from './unique-values.ts';
import { type CheckedRow, type ColumnDef, checkRow, checkValue, invalidRows, uniqueKey } from './values.ts';

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

export const MAX_BATCH_ROWS = 1000;

/** A ref whose ids are not UUIDs names no table (and must not reach a uuid cast as a 500). */
export function checkRef(ref: TableRef): void {
  if (!isUuid(ref.id) || !isUuid(ref.workspaceId)) throw notFound('Table');
}

type Path = (string | number)[];
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
const byPosition = (a: TableRow, b: TableRow) => a.position - b.position;

/** A table locked for a write to its rows, with what the write must respect. */
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

/** A write in one transaction; a unique slot taken after all (the lock makes it moot) is a 400. */
async function write<T>(db: Queryable, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  try {
    return await db.transaction(fn);
  } catch (err) {
    throw isSlotTaken(err)
      ? invalidRows([
          { code: 'not_unique', path: [], message: 'A unique column already holds a value given' },
        ])
      : err;
  }
}

/**
 * Inserts checked rows into a locked table: the row cap, then uniqueness, then the rows with their
 * unique slots and the new row_count in one statement. `knownFree` names unique columns whose
 * values the caller has just found free under the lock (an upsert's target): not looked up again.
 */
async function insertChecked(
  tx: Queryable,
  table: LockedTable,
  rows: { values: Record<string, unknown>; path: Path }[],
  capPath: Path,
  knownFree: string[] = [],
): Promise<TableRow[]> {
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
  const unknown = slots.filter((s) => !knownFree.includes(s.column));
  await takenIssues(tx, table.id, unknown, issues);
  if (issues.length) throw invalidRows(issues, 'Unique constraint violated');
  // The rows' data goes as one JSON array (cheaper to send than an array of JSON texts), and
  // nothing per row comes back: ids are made here, positions follow the locked counter, and every
  // row of the statement has the transaction's timestamp.
  const [stamp] = await tx.query<{ at: Date }>(
    `with inserted as (
       insert into table_rows (id, table_id, position, data)
       select i.id, $1, $2::bigint + t.ord, t.value
         from jsonb_array_elements($3::jsonb) with ordinality as t(value, ord)
         join unnest($4::uuid[]) with ordinality as i(id, ord) on i.ord = t.ord
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
      ids,
      slots.map((s) => s.column),
      slots.map((s) => s.key),
      slots.map((s) => s.rowId),
      rows.length,
    ],
  );
  const at = (stamp?.at ?? new Date()).toISOString();
  const first = table.lastPosition + 1;
  table.rowCount += rows.length;
  table.lastPosition += rows.length;
  return rows.map((r, i) => ({
    id: ids[i] as string,
    data: { ...r.values },
    position: first + i,
    createdAt: at,
    updatedAt: at,
  }));
}

/**
 * Applies a checked patch to rows of a locked table: a unique column may take a value on one row
 * only, and one no other row holds; the rows' slots of the unique columns it sets or clears are
 * replaced, but for the `unchanged` ones, whose value the caller knows the row holds already.
 * Answers the updated rows in position order.
 */
async function patchRows(
  tx: Queryable,
  table: LockedTable,
  ids: string[],
  patch: CheckedRow,
  path: Path,
  unchanged: string[] = [],
): Promise<TableRow[]> {
  if (!ids.length) return [];
  const setUnique = table.columns.filter(
    (c) => c.unique && Object.hasOwn(patch.values, c.name) && !unchanged.includes(c.name),
  );
  const issues: FieldIssue[] = [];
  const slots = ids.length === 1 ? slotsOf(setUnique, ids[0] as string, patch.values, path) : [];
  if (ids.length > 1) {
    for (const c of setUnique) {
      issues.push({
        code: 'not_unique',
        path: [...path, c.name],
        message: `Unique column ${c.name} cannot take one value on ${ids.length} rows`,
      });
    }
  }
  await takenIssues(tx, table.id, slots, issues);
  if (issues.length) throw invalidRows(issues, 'Unique constraint violated');
  const touched = uniqueTouched(table.columns, patch).filter((c) => !unchanged.includes(c));
  await releaseSlots(tx, table.id, touched, ids);
  await claimSlots(tx, table.id, slots);
  const updated = await applyPatch<RowRecord>(
    tx,
    patch,
    'id = any($2::uuid[])',
    [table.id, ids],
    ROW_COLUMNS,
  );
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

async function insertData(db: Queryable, ref: TableRef, rows: unknown[], root: Path, batch: boolean) {
  if (batch && (rows.length < 1 || rows.length > MAX_BATCH_ROWS)) {
    throw invalidField(root.join('.'), `Give 1 to ${MAX_BATCH_ROWS} rows`, 'too_big');
  }
  return write(db, async (tx) => {
    const table = await lockTable(tx, ref);
    const issues: FieldIssue[] = [];
    const checked = rows.map((data, i) => {
      const path = batch ? [...root, i] : root;
      return { values: checkRow(table.columns, data, path, issues).values, path };
    });
    if (issues.length) throw invalidRows(issues);
    return insertChecked(tx, table, checked, root);
  });
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

/**
 * Sets the columns given in `data` (null clears an optional column) on every row `filter` selects
 * (see filters.ts; {} selects all). A unique column set on several rows is a 400 and nothing
 * changes. Answers the ids of the updated rows in position order (none matched: 0, not an error).
 */
export async function updateRows(
  db: Queryable,
  ref: TableRef,
  filter: unknown,
  data: unknown,
): Promise<{ updatedCount: number; updatedRowIds: string[] }> {
  return write(db, async (tx) => {
    const table = await lockTable(tx, ref);
    const issues: FieldIssue[] = [];
    const patch = checkRow(table.columns, data, ['data'], issues, true);
    if (!issues.length && !Object.keys(patch.values).length && !patch.cleared.length) {
      issues.push({ code: 'custom', path: ['data'], message: 'Give at least one column to set' });
    }
    if (issues.length) throw invalidRows(issues);
    const params: unknown[] = [table.id];
    const where = compileFilter(table.columns, filter, params);
    // Without unique columns to re-check, the filter and the write are one statement, and only the
    // ids come back (an update may touch many rows).
    if (!uniqueTouched(table.columns, patch).length) {
      const updated = await applyPatch<{ id: string; position: number }>(
        tx,
        patch,
        where,
        params,
        'id, position',
      );
      const ids = updated.sort((a, b) => Number(a.position) - Number(b.position)).map((r) => r.id);
      return { updatedCount: ids.length, updatedRowIds: ids };
    }
    const matched = await tx.query<{ id: string }>(
      `select id from table_rows where table_id = $1 and ${where} order by position`,
      params,
    );
    const ids = matched.map((r) => r.id);
    await patchRows(tx, table, ids, patch, ['data']);
    return { updatedCount: ids.length, updatedRowIds: ids };
  });
}

/**
 * Updates the row whose unique column `conflictTarget` holds data's value of it (the columns given
 * only), or inserts data as a new row (counting toward the row cap). conflictTarget may be left out
 * when the table has exactly one unique column. 400 for a table without one, for several and no
 * conflictTarget, for a conflictTarget that is not a unique column, and for data without its value.
 */
export async function upsertRow(
  db: Queryable,
  ref: TableRef,
  data: unknown,
  conflictTarget?: string,
): Promise<{ row: TableRow; operation: 'insert' | 'update' }> {
  return write(db, async (tx) => {
    const table = await lockTable(tx, ref);
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
    const [existing] = value.ok
      ? await tx.query<{ row_id: string }>(
          'select row_id from table_unique_values where table_id = $1 and column_name = $2 and value_key = $3',
          [table.id, target.name, uniqueKey(value.value)],
        )
      : [];
    const issues: FieldIssue[] = [];
    const checked = checkRow(table.columns, data, ['data'], issues, existing !== undefined);
    if (issues.length) throw invalidRows(issues);
    // The target's slot stays as it is (updated) or is known free (inserted).
    if (existing) {
      const [row] = await patchRows(tx, table, [existing.row_id], checked, ['data'], [target.name]);
      return { row: row as TableRow, operation: 'update' };
    }
    const rows = [{ values: checked.values, path: ['data'] }];
    const [row] = await insertChecked(tx, table, rows, ['data'], [target.name]);
    return { row: row as TableRow, operation: 'insert' };
  });
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
  return write(db, async (tx) => {
    const table = await lockTable(tx, ref);
    const params: unknown[] = [table.id];
    const where: string[] = [];
    if (selection.ids !== undefined) {
      params.push(selection.ids);
      where.push('id = any($2::uuid[])');
    }
    if (selection.filter !== undefined) where.push(compileFilter(table.columns, selection.filter, params));
    // Slots of unique values go with their rows (on delete cascade).
    const deleted = await tx.query<{ id: string; position: number }>(
      `delete from table_rows where table_id = $1 and ${where.join(' and ')} returning id, position`,
      params,
    );
    if (deleted.length) {
      await tx.query('update user_tables set row_count = row_count - $2::int where id = $1', [
        table.id,
        deleted.length,
      ]);
    }
    const ids = deleted.sort((a, b) => Number(a.position) - Number(b.position)).map((r) => r.id);
    return { deletedCount: ids.length, deletedRowIds: ids };
  });
}
