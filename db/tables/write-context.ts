// What a write to a table's rows is to the group that runs it (./write-groups.ts): prepared against
// the locked table's columns, then run with the context the writes of its group share.
import type { Queryable } from '../client.ts';
import type { LockedTable } from './locked-table.ts';
import { SlotCache, type SlotKey } from './unique-values.ts';

/** What a write of a group works with: the locked table and what is known of its unique slots. */
export interface WriteContext {
  table: LockedTable;
  slots: SlotCache;
  /**
   * To call once the write has made its changes to `table` and `slots` and sent its statements:
   * the next write of the group is then decided while this one awaits its answers. After it the
   * write may fail only by a statement's failure (which fails the transaction). A write that never
   * calls it is awaited whole before the next (it needs an answer to decide, or may yet refuse).
   * A write that refuses (throws) before calling it must have changed nothing in the database, its
   * statements having read or found nothing to change: a pipelined group runs its writes without
   * savepoints (./group-runs.ts) and undoes only the figures and slots in memory.
   */
  decided(): void;
}

/** A write prepared against the locked table's columns, without the database. */
export interface PreparedWrite<T> {
  /** The unique values it will look up: a group looks all its writes' up in one query. */
  lookups?: () => SlotKey[];
  run(tx: Queryable, ctx: WriteContext): Promise<T>;
}

/**
 * A write to a table's rows: given the locked table, it checks what it can without the database
 * (may throw its 400 here) and answers how to run. It must not depend on the row count or the
 * slots, which the writes before it in its group change: run reads them from the context.
 */
export type TableWrite<T> = (table: LockedTable) => PreparedWrite<T>;

/** A context for a write alone in its transaction (a caller that locked the table itself). */
export const soloContext = (table: LockedTable): WriteContext => ({
  table,
  slots: new SlotCache(),
  decided() {},
});

/** A write waiting in its table's queue, with its caller's promise. */
export interface Pending {
  // biome-ignore lint/suspicious/noExplicitAny: a queue holds writes of every answer type
  write: TableWrite<any>;
  /** The rows the request gives (a batch insert's thousand; 1 otherwise): what preparing it checks. */
  rows: number;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}
