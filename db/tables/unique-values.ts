// The slots that make unique columns unique: one row of table_unique_values per value of a unique
// column, keyed by the value's canonical text (uniqueKey). Writers check the slots a request needs
// under the table's lock, to name each offending row and column; the primary key of the slots is
// the guarantee should anything slip past. The writes of a group share what they learn of the
// slots in a SlotCache, so that a group looks its values up in one query.
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

/** A value of a unique column, as table_unique_values keys it. */
export interface SlotKey {
  column: string;
  key: string;
}

/** Who holds a value of a column: a row, or none (null). */
type Held = { column: string; rowId: string | null };

const keyOf = (s: SlotKey) => `${s.column}\u0000${s.key}`;

/**
 * What a locked table's slots hold, as far as its writers have seen: a value's row, or null for a
 * value known free; values never looked up are unknown. Valid only under the table's lock, where
 * the writers that hold it are the only ones to change the slots, and each tells the cache.
 */
export class SlotCache {
  #held = new Map<string, Held>();
  /** Each change with what it replaced, to undo the changes of a write that is rolled back. */
  #journal: [string, Held | undefined][] = [];

  #set(k: string, column: string, rowId: string | null) {
    this.#journal.push([k, this.#held.get(k)]);
    this.#held.set(k, { column, rowId });
  }

  /** Looks up the unknown among `wanted` in one query. */
  async load(tx: Queryable, tableId: string, wanted: readonly SlotKey[]): Promise<void> {
    const unknown = new Map<string, SlotKey>();
    for (const s of wanted) if (!this.#held.has(keyOf(s))) unknown.set(keyOf(s), s);
    if (!unknown.size) return;
    const list = [...unknown.values()];
    const taken = await tx.query<{ column_name: string; value_key: string; row_id: string }>(
      `select column_name, value_key, row_id from table_unique_values
        where table_id = $1 and (column_name, value_key) in (select * from unnest($2::text[], $3::text[]))`,
      [tableId, list.map((s) => s.column), list.map((s) => s.key)],
    );
    const owner = new Map(taken.map((t) => [`${t.column_name}\u0000${t.value_key}`, t.row_id]));
    for (const [k, s] of unknown) this.#set(k, s.column, owner.get(k) ?? null);
  }

  /** The row holding a value (null: free); looked up if unknown. */
  async holder(tx: Queryable, tableId: string, slot: SlotKey): Promise<string | null> {
    await this.load(tx, tableId, [slot]);
    return this.known(slot) ?? null;
  }

  /** The row holding a value, null when free, undefined when never looked up. */
  known(slot: SlotKey): string | null | undefined {
    return this.#held.get(keyOf(slot))?.rowId;
  }

  claimed(slots: readonly Slot[]) {
    for (const s of slots) this.#set(keyOf(s), s.column, s.rowId);
  }

  /** The slots of these rows (of the given columns, or all) are free now. */
  released(rowIds: readonly string[], columns?: readonly string[]) {
    const rows = new Set(rowIds);
    for (const [k, held] of this.#held) {
      if (held.rowId && rows.has(held.rowId) && (!columns || columns.includes(held.column))) {
        this.#set(k, held.column, null);
      }
    }
  }

  /** A point to go back to (undo) when the write that follows is rolled back. */
  mark(): number {
    return this.#journal.length;
  }

  undo(mark: number) {
    while (this.#journal.length > mark) {
      const [k, before] = this.#journal.pop() as [string, Held | undefined];
      if (before) this.#held.set(k, before);
      else this.#held.delete(k);
    }
  }
}

/** Issues for values another row already holds. */
export async function takenIssues(
  tx: Queryable,
  tableId: string,
  slots: Slot[],
  issues: FieldIssue[],
  cache = new SlotCache(),
) {
  if (!slots.length) return;
  await cache.load(tx, tableId, slots);
  for (const s of slots) {
    const held = cache.known(s);
    if (held && held !== s.rowId) {
      issues.push({
        code: 'not_unique',
        path: [...s.path, s.column],
        message: `Unique column ${s.column} already holds this value (row ${held})`,
      });
    }
  }
}

export async function claimSlots(tx: Queryable, tableId: string, slots: Slot[], cache?: SlotCache) {
  if (!slots.length) return;
  cache?.claimed(slots);
  await tx.query(
    `insert into table_unique_values (table_id, column_name, value_key, row_id)
     select $1, c, k, r from unnest($2::text[], $3::text[], $4::uuid[]) as s(c, k, r)`,
    [tableId, slots.map((s) => s.column), slots.map((s) => s.key), slots.map((s) => s.rowId)],
  );
}

/** Frees the slots of the given columns held by the given rows. */
export async function releaseSlots(
  tx: Queryable,
  tableId: string,
  columns: string[],
  rowIds: string[],
  cache?: SlotCache,
) {
  if (!columns.length || !rowIds.length) return;
  cache?.released(rowIds, columns);
  await tx.query(
    'delete from table_unique_values where table_id = $1 and column_name = any($2::text[]) and row_id = any($3::uuid[])',
    [tableId, columns, rowIds],
  );
}
