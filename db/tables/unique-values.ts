// The slots that make unique columns unique: one row of table_unique_values per value of a unique
// column, keyed by the value's canonical text (uniqueKey). Writers check the slots a request needs
// under the table's lock, to name each offending row and column; the primary key of the slots is
// the guarantee should anything slip past.
import { type FieldIssue, isUniqueViolation } from '../../errors.ts';
import type { Queryable } from '../client.ts';
import { type ColumnDef, uniqueKey } from './values.ts';

type Path = (string | number)[];

/** True for the error of a slot already taken. */
export const isSlotTaken = (err: unknown) => isUniqueViolation(err, 'table_unique_values_pkey');

/** A value of a unique column in a row: what table_unique_values holds. */
export interface Slot {
  column: string;
  key: string;
  rowId: string;
  /** Where the row is in the request, for the issue. */
  path: Path;
}

export function slotsOf(
  columns: readonly ColumnDef[],
  rowId: string,
  values: Record<string, unknown>,
  path: Path,
) {
  return columns
    .filter((c) => c.unique && Object.hasOwn(values, c.name))
    .map((c): Slot => ({ column: c.name, key: uniqueKey(values[c.name]), rowId, path }));
}

/** Issues for values given twice in one request, on each row after the first. */
export function duplicateIssues(slots: Slot[], issues: FieldIssue[]) {
  const first = new Map<string, Slot>();
  for (const s of slots) {
    const k = `${s.column}\u0000${s.key}`;
    const earlier = first.get(k);
    if (!earlier) first.set(k, s);
    else {
      issues.push({
        code: 'not_unique',
        path: [...s.path, s.column],
        message: `Unique column ${s.column}: the same value is given at ${earlier.path.join('.')}`,
      });
    }
  }
}

/** Issues for values another row already holds. */
export async function takenIssues(tx: Queryable, tableId: string, slots: Slot[], issues: FieldIssue[]) {
  if (!slots.length) return;
  const taken = await tx.query<{ column_name: string; value_key: string; row_id: string }>(
    `select column_name, value_key, row_id from table_unique_values
      where table_id = $1 and (column_name, value_key) in (select * from unnest($2::text[], $3::text[]))`,
    [tableId, slots.map((s) => s.column), slots.map((s) => s.key)],
  );
  const owner = new Map(taken.map((t) => [`${t.column_name}\u0000${t.value_key}`, t.row_id]));
  for (const s of slots) {
    const held = owner.get(`${s.column}\u0000${s.key}`);
    if (held && held !== s.rowId) {
      issues.push({
        code: 'not_unique',
        path: [...s.path, s.column],
        message: `Unique column ${s.column} already holds this value (row ${held})`,
      });
    }
  }
}

export async function claimSlots(tx: Queryable, tableId: string, slots: Slot[]) {
  if (!slots.length) return;
  await tx.query(
    `insert into table_unique_values (table_id, column_name, value_key, row_id)
     select $1, c, k, r from unnest($2::text[], $3::text[], $4::uuid[]) as s(c, k, r)`,
    [tableId, slots.map((s) => s.column), slots.map((s) => s.key), slots.map((s) => s.rowId)],
  );
}

/** Frees the slots of the given columns held by the given rows. */
export async function releaseSlots(tx: Queryable, tableId: string, columns: string[], rowIds: string[]) {
  if (!columns.length || !rowIds.length) return;
  await tx.query(
    'delete from table_unique_values where table_id = $1 and column_name = any($2::text[]) and row_id = any($3::uuid[])',
    [tableId, columns, rowIds],
  );
}
