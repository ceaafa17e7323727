// Group commit of the writes to one table. Every writer of a table holds the lock on its row
// (lockTable) until it commits, which is what keeps the row cap exact, unique values unique and
// positions growing; but one writer at a time, each waiting out the others' commit flush, made
// concurrent writers of a table queue behind each other. So the writes to a table that arrive
// while a group of them is in flight are gathered and run as the next group: one transaction, one
// lock, one commit flush, as executions are committed in groups (../batcher.ts).
//
// Within a group the writes run one after another, each in a savepoint: a write that fails (a
// unique value taken, the row cap, a row not found, or any error of the database) is undone alone
// and answered with its own error, and the others go on. They share the locked table's figures
// (row count, last position) and a cache of the unique slots they have seen, which one query fills
// for the whole group before they run. None is answered before the group commits, so nothing
// acknowledged can be lost; if the commit fails, every write of the group that had not failed
// already gets that error.
//
// Grouping is per process and per table; the lock still serialises groups of other processes.
// A write given a transaction (a store composing into a larger unit of work) runs in it alone.
import type { Db, Queryable } from '../client.ts';
import { checkRef, type LockedTable, lockTable, type TableRef } from './locked-table.ts';
import { isSlotTaken, SlotCache, type SlotKey } from './unique-values.ts';
import { invalidRows } from './values.ts';

/** What the writes of a group share: the locked table and what is known of its unique slots. */
export interface WriteContext {
  table: LockedTable;
  slots: SlotCache;
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

/** The most writes committed in one group: a bound on how long a group holds the lock. */
export const MAX_GROUP = 64;

/** Runs a write under the table's lock: with the concurrent writes of the table, on a database. */
export async function writeTable<T>(db: Queryable, ref: TableRef, write: TableWrite<T>): Promise<T> {
  checkRef(ref);
  if (!isDb(db)) {
    return db
      .transaction(async (tx) => {
        const table = await lockTable(tx, ref);
        return write(table).run(tx, { table, slots: new SlotCache() });
      })
      .catch((err) => {
        throw asWriteError(err);
      });
  }
  const key = `${ref.workspaceId}/${ref.id}`;
  const groups = queues.get(db) ?? new Map<string, Queue>();
  queues.set(db, groups);
  const queue = groups.get(key) ?? { pending: [], busy: false };
  groups.set(key, queue);
  return new Promise<T>((resolve, reject) => {
    queue.pending.push({ write, resolve: resolve as (value: unknown) => void, reject });
    schedule(db, groups, key, queue, ref);
  });
}

/** A transaction has no `backend`: only a database's writes are grouped. */
const isDb = (q: Queryable): q is Db => 'backend' in q;

// A unique slot taken after all (the lock makes it moot): a 400, not a 500.
const asWriteError = (err: unknown) =>
  isSlotTaken(err)
    ? invalidRows([{ code: 'not_unique', path: [], message: 'A unique column already holds a value given' }])
    : err;

interface Pending {
  // biome-ignore lint/suspicious/noExplicitAny: a queue holds writes of every answer type
  write: TableWrite<any>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}
interface Queue {
  pending: Pending[];
  /** A group is scheduled or running: the next one waits for it. */
  busy: boolean;
}
const queues = new WeakMap<Db, Map<string, Queue>>();

function schedule(db: Db, groups: Map<string, Queue>, key: string, queue: Queue, ref: TableRef) {
  if (queue.busy) return;
  if (!queue.pending.length) {
    groups.delete(key);
    return;
  }
  queue.busy = true;
  // The writes that arrive in this turn of the event loop join the first group.
  setImmediate(() => {
    const group = queue.pending.splice(0, MAX_GROUP);
    void runGroup(db, ref, group).finally(() => {
      queue.busy = false;
      schedule(db, groups, key, queue, ref);
    });
  });
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

async function runGroup(db: Db, ref: TableRef, group: Pending[]): Promise<void> {
  const outcomes: (Outcome | undefined)[] = [];
  try {
    await db.transaction((tx) => runWrites(tx, db.backend === 'postgres', ref, group, outcomes));
  } catch (err) {
    for (const i of group.keys()) if (outcomes[i]?.ok !== false) outcomes[i] = { ok: false, error: err };
  }
  for (const [i, p] of group.entries()) {
    const o = outcomes[i] as Outcome;
    if (o.ok) p.resolve(o.value);
    else p.reject(asWriteError(o.error));
  }
}

async function runWrites(
  tx: Queryable,
  pipelined: boolean,
  ref: TableRef,
  group: Pending[],
  outcomes: (Outcome | undefined)[],
): Promise<void> {
  const table = await lockTable(tx, ref);
  const ctx: WriteContext = { table, slots: new SlotCache() };
  const prepared = group.map((p, i) => {
    try {
      return p.write(table);
    } catch (error) {
      outcomes[i] = { ok: false, error };
      return undefined;
    }
  });
  // A lone write needs no savepoint: if it fails, the transaction holds nothing else.
  if (group.length === 1) {
    if (prepared[0]) outcomes[0] = { ok: true, value: await prepared[0].run(tx, ctx) };
    return;
  }
  await ctx.slots.load(
    tx,
    table.id,
    prepared.flatMap((p) => p?.lookups?.() ?? []),
  );
  // On a server, a savepoint and its release need no answer before the next statement: they are
  // sent ahead of it, in the same round trip. Their failure fails the statements after them, and
  // the commit at the latest.
  const send = (sql: string) => {
    const sent = tx.exec(sql);
    sent.catch(() => {});
    return sent;
  };
  for (const [i, p] of prepared.entries()) {
    if (!p) continue;
    const savepoint = `w${i}`;
    const before = { rowCount: table.rowCount, lastPosition: table.lastPosition, slots: ctx.slots.mark() };
    const begun = send(`savepoint ${savepoint}`);
    if (!pipelined) await begun;
    try {
      outcomes[i] = { ok: true, value: await p.run(tx, ctx) };
      await begun;
      const released = send(`release savepoint ${savepoint}`);
      if (!pipelined) await released;
    } catch (error) {
      // A savepoint that could not be made: the transaction is broken, and so is the group.
      await begun;
      await tx.exec(`rollback to savepoint ${savepoint}`);
      const released = send(`release savepoint ${savepoint}`);
      if (!pipelined) await released;
      table.rowCount = before.rowCount;
      table.lastPosition = before.lastPosition;
      ctx.slots.undo(before.slots);
      outcomes[i] = { ok: false, error };
    }
  }
}
