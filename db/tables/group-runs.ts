// How the writes of one group (./write-groups.ts) run in their transaction: the table locked, each
// write prepared against its columns, the unique values they will look up fetched in one query,
// then the writes in arrival order, each in a savepoint, sharing the table's figures and the slot
// cache.
//
// Pipelined (on a server), the group costs two round trips before its commit whatever its size:
// the writes are first prepared against the columns the table had at its last group, so their
// lookups go out right behind the lock; and a write that has decided (WriteContext.decided) is not
// waited for: the next is decided while its statements travel, and the commit follows them all.
// A write that fails before it has decided fails alone. One that fails after (a statement of it
// failed) has had later writes decided on what it did: the group is run again, not pipelined
// (RUN_AGAIN, or the commit answers that it rolled back).
//
// Pipelined, the writes run without savepoints: a savepoint and its release were two of the three
// statements a single-row write cost the server. A write that fails before it has decided has
// changed nothing in the database (WriteContext.decided): a check of its own refused it, and only its
// figures and slot cache changes are undone, in memory. Should a statement of it have failed, the
// transaction is aborted, the commit answers that it rolled back, and the group is run again one
// write at a time, each in a savepoint, where that write fails alone. Not pipelined (PGlite, or a
// group run again), every write keeps its savepoint.
import type { Queryable } from '../client.ts';
import { type LockedTable, lockTable, type TableRef } from './locked-table.ts';
import { SlotCache } from './unique-values.ts';
import type { ColumnDef } from './values.ts';
import type { Pending, PreparedWrite, WriteContext } from './write-context.ts';

export type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * The most rows a group's writes may give for them to be prepared before the lock leaves: checking
 * a few rows costs less than a socket write of its own (postgres.js's socket writes were about a
 * third of the API's busy time in upserts at concurrency 16, where the woken backend takes the core).
 */
const LIGHT_ROWS = 64;

/** Thrown out of a pipelined group to roll it back and run it again, one write at a time. */
export const RUN_AGAIN = Symbol('run the group again one write at a time');

export interface GroupRun {
  pipelined: boolean;
  ref: TableRef;
  group: Pending[];
  /** Filled in as the writes end: each write's answer or error. */
  outcomes: (Outcome | undefined)[];
  /** The columns the table had when last locked, if known. */
  columns: ColumnDef[] | undefined;
}

/**
 * Runs a group's writes in the open transaction `tx`. Answers the table's columns, and `answers`:
 * pipelined, the writes' answers may still be on their way (the caller commits first, then awaits
 * it); otherwise it is settled.
 */
export async function runWrites(
  tx: Queryable,
  run: GroupRun,
): Promise<{ columns: ColumnDef[]; answers: Promise<void> }> {
  const { pipelined, ref, group, outcomes } = run;
  const locking = lockTable(tx, ref);
  locking.catch(() => {});
  // Until the lock answers, only the columns are known (guessed); then the figures fill this in.
  const table: LockedTable = {
    id: ref.id,
    workspaceId: ref.workspaceId,
    organizationId: '',
    columns: run.columns ?? [],
    rowCount: 0,
    lastPosition: 0,
    maxRows: 0,
  };
  const slots = new SlotCache();
  let prepared: (PreparedWrite<unknown> | undefined)[] | undefined;
  let loading: Promise<void> | undefined;
  if (pipelined && run.columns) {
    // The lock is a short statement, sent on the next turn of the event loop: let it go out first,
    // so that the writes are prepared (a batch's rows checked) while it travels. Unless they give
    // few rows (upserts, single-row writes): then the lookups leave with the lock, in one socket
    // write and one wake-up of the backend instead of two.
    if (group.reduce((n, p) => n + p.rows, 0) > LIGHT_ROWS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    prepared = prepareAll(table, run);
    loading = slots.load(tx, ref.id, lookupsOf(prepared));
    loading.catch(() => {});
  }
  const locked = await locking;
  await loading;
  const guessed = prepared !== undefined && JSON.stringify(locked.columns) === JSON.stringify(table.columns);
  Object.assign(table, locked);
  if (!guessed) {
    outcomes.length = 0;
    prepared = prepareAll(table, run);
    // A lone write looks its values up as it runs: the same one query.
    if (group.length > 1) await slots.load(tx, table.id, lookupsOf(prepared));
  }
  const writes = prepared as (PreparedWrite<unknown> | undefined)[];
  const settled = Promise.resolve();
  // A lone write needs no savepoint: if it fails, the transaction holds nothing else. Pipelined, it
  // runs as a group does all the same, so that the commit goes out behind its statements rather
  // than a round trip after them.
  if (group.length === 1 && !pipelined) {
    const only = writes[0];
    if (only) outcomes[0] = { ok: true, value: await only.run(tx, { table, slots, decided() {} }) };
    return { columns: table.columns, answers: settled };
  }
  const { answers } = await runInSavepoints(tx, pipelined, table, slots, writes, outcomes);
  return { columns: table.columns, answers };
}

function prepareAll(table: LockedTable, run: GroupRun) {
  return run.group.map((p, i) => {
    try {
      return p.write(table) as PreparedWrite<unknown>;
    } catch (error) {
      run.outcomes[i] = { ok: false, error };
      return undefined;
    }
  });
}

const lookupsOf = (prepared: (PreparedWrite<unknown> | undefined)[]) =>
  prepared.flatMap((p) => p?.lookups?.() ?? []);

/**
 * Runs the writes one after another, each in a savepoint when not pipelined (see the head of this
 * file); answers when their answers are in.
 */
async function runInSavepoints(
  tx: Queryable,
  pipelined: boolean,
  table: LockedTable,
  slots: SlotCache,
  writes: (PreparedWrite<unknown> | undefined)[],
  outcomes: (Outcome | undefined)[],
): Promise<{ answers: Promise<void> }> {
  const runs: Promise<void>[] = [];
  let runAgain = false;
  for (const [i, p] of writes.entries()) {
    if (!p) continue;
    const mark = { rowCount: table.rowCount, lastPosition: table.lastPosition, slots: slots.mark() };
    if (!pipelined) await tx.exec(`savepoint w${i}`);
    let isDecided = false;
    let decide = () => {};
    const decided = new Promise<void>((resolve) => {
      decide = resolve;
    });
    const ctx: WriteContext = {
      table,
      slots,
      decided() {
        isDecided = true;
        decide();
      },
    };
    let failure: { error: unknown } | undefined;
    const done = p.run(tx, ctx).then(
      (value) => {
        outcomes[i] = { ok: true, value };
      },
      (error) => {
        outcomes[i] = { ok: false, error };
        failure = { error };
        // Writes after it were decided on what it did: see the head of this file.
        if (pipelined && isDecided) runAgain = true;
      },
    );
    runs.push(done);
    await (pipelined ? Promise.race([done, decided]) : done);
    if (failure && !(pipelined && isDecided)) {
      // Nothing after it was decided yet: it is undone alone (pipelined, it changed nothing stored).
      if (!pipelined) await tx.exec(`rollback to savepoint w${i}`);
      table.rowCount = mark.rowCount;
      table.lastPosition = mark.lastPosition;
      slots.undo(mark.slots);
    }
    if (!pipelined) await tx.exec(`release savepoint w${i}`);
  }
  if (runAgain) throw RUN_AGAIN;
  // Wrapped: awaiting a promise of a promise would wait for the answers too.
  return { answers: Promise.all(runs).then(() => {}) };
}
