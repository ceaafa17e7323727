// Group commit of the writes to one table. Every writer of a table holds the lock on its row
// (lockTable) until it commits, which is what keeps the row cap exact, unique values unique and
// positions growing; but one writer at a time, each waiting out the others' commit flush, made
// concurrent writers of a table queue behind each other. So the writes to a table that arrive
// while a group of them is in flight are gathered and run as the next group: one transaction, one
// lock, one commit flush, as executions are committed in groups (../batcher.ts).
//
// The writes of a group run in arrival order and share the locked table's figures (row count, last
// position) and a cache of its unique slots, which one query fills for the whole group first. Each
// gets its own answer or error; none is answered before the group commits, so nothing acknowledged
// is lost, and if the commit fails every write of the group that had not failed gets that error.
//
// On a server a group is run pipelined (./group-runs.ts): a write decides from the shared figures
// and cache what to do and sends its statements, and the next is decided while their answers
// travel, so a group costs two round trips and its commit however many writes it holds. A write
// that fails before it has decided (a bad value, a unique value taken, the row cap, a row not
// found) is rolled back to its savepoint and fails alone. Should one fail after (a statement the
// database refuses), the later writes were decided on what it did: the transaction is rolled back
// and the group run again one write at a time, each in a savepoint.
//
// Grouping is per process and per table; the lock still serialises groups of other processes.
// A write given a transaction (a store composing into a larger unit of work) runs in it alone.
import { type Db, isDb, isRolledBack, type Queryable } from '../client.ts';
import { type Outcome, runWrites } from './group-runs.ts';
import { checkRef, lockTable, type TableRef } from './locked-table.ts';
import { isSlotTaken } from './unique-values.ts';
import { type ColumnDef, invalidRows } from './values.ts';
import { type Pending, soloContext, type TableWrite } from './write-context.ts';

/** The most writes committed in one group: a bound on how long a group holds the lock. */
export const MAX_GROUP = 64;

/**
 * Runs a write under the table's lock: with the concurrent writes of the table, on a database.
 * `rows`: how many rows the request gives, which preparing the write checks (see LIGHT_ROWS in ./group-runs.ts).
 */
export async function writeTable<T>(
  db: Queryable,
  ref: TableRef,
  write: TableWrite<T>,
  rows = 1,
): Promise<T> {
  checkRef(ref);
  if (!isDb(db)) {
    return db
      .transaction(async (tx) => {
        const table = await lockTable(tx, ref);
        return write(table).run(tx, soloContext(table));
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
    queue.pending.push({ write, rows, resolve: resolve as (value: unknown) => void, reject });
    schedule(db, groups, key, queue, ref);
  });
}

// A unique slot taken after all (the lock makes it moot): a 400, not a 500.
const asWriteError = (err: unknown) =>
  isSlotTaken(err)
    ? invalidRows([{ code: 'not_unique', path: [], message: 'A unique column already holds a value given' }])
    : err;

interface Queue {
  pending: Pending[];
  /** A group is scheduled or running: the next one waits for it. */
  busy: boolean;
}
const queues = new WeakMap<Db, Map<string, Queue>>();

// The columns each table had when last locked: its next group prepares against them while the lock
// travels. Kept when the table's queue empties (a client writing one request after another leaves
// it empty between them), for the most recently written tables.
const MAX_KNOWN_TABLES = 1000;
const knownColumns = new WeakMap<Db, Map<string, ColumnDef[]>>();

function rememberColumns(db: Db, key: string, columns: ColumnDef[]) {
  const known = knownColumns.get(db) ?? new Map<string, ColumnDef[]>();
  knownColumns.set(db, known);
  known.delete(key);
  known.set(key, columns);
  if (known.size > MAX_KNOWN_TABLES) known.delete(known.keys().next().value as string);
}

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
    void runGroup(db, ref, key, group).finally(() => {
      queue.busy = false;
      schedule(db, groups, key, queue, ref);
    });
  });
}

/** Runs a group and answers its writes. */
async function runGroup(db: Db, ref: TableRef, key: string, group: Pending[]) {
  const server = db.backend === 'postgres';
  let outcomes: (Outcome | undefined)[] = [];
  /** Whether the attempt's transaction is known to have left nothing: it may be run again. */
  let undone = true;
  const attempt = async (pipelined: boolean) => {
    outcomes = [];
    let answers: Promise<void> = Promise.resolve();
    undone = true;
    await db
      .transaction(async (tx) => {
        const columns = knownColumns.get(db)?.get(key);
        const run = await runWrites(tx, { pipelined, ref, group, outcomes, columns });
        rememberColumns(db, key, run.columns);
        answers = run.answers;
        // From here the commit goes out: unless it answers that it rolled back, the writes may hold.
        undone = false;
      })
      .catch((err) => {
        if (isRolledBack(err)) undone = true;
        throw err;
      });
    // Pipelined, the commit went out behind the writes before their answers came back. A write
    // whose statement failed made the transaction fail with it; one that failed otherwise after
    // sending changed nothing (see WriteContext.decided).
    await answers;
  };
  try {
    try {
      await attempt(server);
    } catch (err) {
      // A write failed after sending, or the transaction could not be: one write at a time now,
      // each in a savepoint, so that it fails alone. Not if the commit may have held (its answer
      // lost): the writes would be done twice.
      if (!server || !undone) throw err;
      await attempt(false);
    }
  } catch (err) {
    for (const i of group.keys()) if (outcomes[i]?.ok !== false) outcomes[i] = { ok: false, error: err };
  }
  for (const [i, p] of group.entries()) {
    const o = outcomes[i] as Outcome;
    if (o.ok) p.resolve(o.value);
    else p.reject(asWriteError(o.error));
  }
}
