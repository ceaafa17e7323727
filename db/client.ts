// The one small interface over our two database backends: a real server through `postgres`
// (DATABASE_URL) or in-process PGlite with pgvector (embedded, persisted under DATA_DIR).
// Stores speak only this interface: parameterised SQL text ($1, $2, …), transactions, LISTEN/NOTIFY.
import { mkdirSync } from 'node:fs';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import postgres from 'postgres';
import { lockDataDir } from './data-dir-lock.ts';

export type Row = Record<string, unknown>;

/** What a store needs to run SQL: the database itself or an open transaction. */
export interface Queryable {
  query<T = Row>(text: string, params?: readonly unknown[]): Promise<T[]>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(script: string): Promise<void>;
  /** Runs a script of several statements without parameters, answering the rows of all of them. */
  script(text: string): Promise<Row[]>;
  /**
   * Runs fn in one transaction: committed when it resolves, rolled back when it throws. Inside a
   * transaction it opens a savepoint, so stores compose: a store's unit of work can join a larger one.
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
}

/** One statement of a list run together (see Db.atomically). */
export interface Statement {
  text: string;
  params?: readonly unknown[];
}

/**
 * Run inside a transaction (first or anywhere before its end): its COMMIT answers without waiting
 * for the transaction's WAL to reach disk, which costs a millisecond or more here. A crash may lose
 * such a transaction, whole and only if nothing committed durably after it (WAL is flushed in
 * order: every later durable commit makes it durable too); the database stays consistent. So only
 * for changes that no one has been told of yet: the enqueueing of a sync execution, whose caller
 * hears nothing before the durable commit of its end.
 */
export const COMMIT_WITHOUT_FLUSH: Statement = { text: 'set local synchronous_commit = off' };

/**
 * Run inside a transaction: its prepared statements run their generic plan, planned once per
 * connection. Postgres otherwise plans anew on every run any statement whose generic plan it
 * estimates dearer than the plans for the values at hand; for the runner's finish of a batch of
 * executions (the values are id lists that an index answers whatever they hold) that was more server
 * time than running it: completing a batch of jobs planned for 0.45 ms and ran for 0.3.
 */
export const GENERIC_PLANS: Statement = { text: 'set local plan_cache_mode = force_generic_plan' };

export interface Db extends Queryable {
  readonly backend: 'postgres' | 'pglite';
  /**
   * Runs the statements in order as one transaction, sent to a server together with its BEGIN and
   * COMMIT: one round trip and one commit, where a transaction of awaited statements costs a round
   * trip each and two more. Answers each statement's rows; when one fails, none of them is committed
   * and its error is thrown. For statements that do not depend on each other's answers.
   */
  atomically(statements: readonly Statement[]): Promise<Row[][]>;
  /**
   * One statement on the process's lane: a connection of its own that statements share, pipelined
   * one behind another, instead of each taking an idle connection of the pool. For the statements that
   * batch many requests' work (see onLane); embedded, the same as `query`.
   */
  pipelined<T = Row>(text: string, params?: readonly unknown[]): Promise<T[]>;
  /** Subscribes to a NOTIFY channel; resolves to the unsubscribe function. */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  notify(channel: string, payload: string): Promise<void>;
  /**
   * Waits for a session advisory lock and holds it until the returned function is called, on a
   * connection of its own (work done under the lock has the whole pool; a process that dies lets go
   * with its connection). Embedded, where one process holds the database, there is nothing to wait for.
   */
  holdAdvisoryLock(key: number): Promise<() => Promise<void>>;
  close(): Promise<void>;
  /** The raw PGlite instance in embedded mode (pg-boss's adapter needs it); undefined otherwise. */
  readonly pglite?: PGlite;
}

/** Whether a handle is the database (a pool, or the embedded instance) rather than an open transaction. */
export const isDb = (q: Queryable): q is Db => 'atomically' in q;

const lanes = new WeakMap<Db, Db>();

/**
 * The database whose `query` is its lane (Db.pipelined), for the batchers of the admission path (API
 * key, rate tokens, workspace access): each batch is one statement for every request that arrived
 * while the last was out, and three of them are in flight at most. On connections of the pool, each
 * statement woke an idle backend and cost a socket write of its own: on the lane they go out one
 * behind another, often in one write, and one backend wakes for them (upserts at concurrency 16: 1.43
 * -> 1.16 socket writes a request, docs/performance.md).
 */
export function onLane(db: Db): Db {
  let lane = lanes.get(db);
  if (!lane) {
    lane = { ...db, query: db.pipelined };
    lanes.set(db, lane);
  }
  return lane;
}

/**
 * A transaction whose function resolved, though a statement in it failed (its error caught, and no
 * savepoint rolled back to): Postgres then rolls the whole transaction back at COMMIT, without an
 * error, and it must not pass for committed.
 */
const ROLLED_BACK = 'The transaction was rolled back: a statement in it failed, and its error was caught';
const abortedTransaction = () => new Error(ROLLED_BACK);

/** The error of a transaction that its COMMIT rolled back (see abortedTransaction): nothing of it holds. */
export const isRolledBack = (err: unknown) => err instanceof Error && err.message === ROLLED_BACK;

/**
 * Opens an in-process PGlite with pgvector: in memory without dataDir, else persisted there, which
 * this process then holds alone until it closes the database (db/data-dir-lock.ts).
 */
export async function openPglite(options: { dataDir?: string; loadDataDir?: Blob } = {}): Promise<Db> {
  const lock = options.dataDir ? lockDataDir(options.dataDir) : null;
  let pg: PGlite;
  try {
    if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
    pg = await PGlite.create({
      ...(options.dataDir ? { dataDir: options.dataDir } : {}),
      ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
      extensions: { vector },
    });
  } catch (err) {
    lock?.release();
    throw err;
  }
  const db = wrapPglite(pg);
  if (!lock) return db;
  return {
    ...db,
    async close() {
      try {
        await db.close();
      } finally {
        lock.release();
      }
    },
  };
}

export function wrapPglite(pg: PGlite): Db {
  const query = async <T>(text: string, params: readonly unknown[] = []) =>
    (await pg.query<T>(text, params as unknown[])).rows;
  return {
    backend: 'pglite',
    pglite: pg,
    query,
    // In process there is no connection to share: the lane is the instance itself.
    pipelined: query,
    // PGlite serialises a transaction against every other query on the instance, so no interleaving.
    async exec(script) {
      await pg.exec(script);
    },
    script: async (text) => (await pg.exec(text)).flatMap((r) => r.rows as Row[]),
    transaction: (fn) =>
      pg.transaction(async (tx) => {
        const result = await fn(pgliteTransaction(tx));
        // An aborted transaction refuses any statement; its COMMIT would roll back without an error.
        await tx.query('select 1').catch(() => {
          throw abortedTransaction();
        });
        return result;
      }),
    // In process there is no round trip to save: an ordinary transaction.
    atomically: (statements) =>
      pg.transaction(async (tx) => {
        const results: Row[][] = [];
        for (const s of statements)
          results.push((await tx.query<Row>(s.text, (s.params ?? []) as unknown[])).rows);
        return results;
      }),
    listen: async (channel, onPayload) => {
      const unlisten = await pg.listen(channel, onPayload);
      return () => unlisten();
    },
    async notify(channel, payload) {
      await pg.query('select pg_notify($1, $2)', [channel, payload]);
    },
    holdAdvisoryLock: async () => async () => {},
    close: () => pg.close(),
  };
}

function pgliteTransaction(tx: Transaction): Queryable {
  return withSavepoints({
    query: async <T>(text: string, params: readonly unknown[] = []) =>
      (await tx.query<T>(text, params as unknown[])).rows,
    exec: async (script) => {
      await tx.exec(script);
    },
    script: async (text) => (await tx.exec(text)).flatMap((r) => r.rows as Row[]),
  });
}

/** An open transaction whose nested transactions are savepoints, undone alone when they throw. */
function withSavepoints(tx: Omit<Queryable, 'transaction'>): Queryable {
  let savepoints = 0;
  const self: Queryable = {
    ...tx,
    async transaction(fn) {
      const name = `sp_${++savepoints}`;
      await tx.exec(`savepoint ${name}`);
      try {
        const result = await fn(self);
        await tx.exec(`release savepoint ${name}`);
        return result;
      } catch (err) {
        await tx.exec(`rollback to savepoint ${name}`);
        throw err;
      }
    },
  };
  return self;
}

/** The pool's options, and the lane's. */
const postgresOptions = {
  onnotice: () => {},
  // After a database restart the pool must come back at once: postgres.js's default backoff grows
  // with every refused connection to 20 s, so requests kept hanging (and runners idle) for that
  // long after the server was up again. A connect that hangs fails after 5 s instead of 30.
  connect_timeout: 5,
  backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
  // Bigints arrive as strings from postgres.js and as numbers from PGlite: read both as numbers.
  types: {
    bigint: { to: 20, from: [20], serialize: (v: number) => String(v), parse: (v: string) => Number(v) },
    // A string bound to a json/jsonb parameter is JSON text already, as PGlite takes it: stores pass
    // JSON.stringify(...) to `$n::jsonb`. postgres.js would encode it again, storing a JSON string.
    json: {
      to: 114,
      from: [114, 3802],
      serialize: (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v)),
      parse: (v: string) => JSON.parse(v),
    },
  },
  connection: { application_name: 'workflow-service' },
} satisfies postgres.Options<Record<string, postgres.PostgresType>>;

/** Connects to a Postgres server; the pool is lazy, so the first query proves the URL. */
export function openPostgres(url: string, options: { max?: number } = {}): Db {
  const sql = postgres(url, { ...postgresOptions, max: options.max ?? 10 });
  // The lane (Db.pipelined): opened on its first statement.
  let lane: postgres.Sql | undefined;
  const laneSql = () => {
    lane ??= postgres(url, { ...postgresOptions, max: 1 });
    return lane;
  };
  return {
    backend: 'postgres',
    query: (text, params = []) => run(sql, text, params),
    pipelined: (text, params = []) => run(laneSql(), text, params),
    // Without parameters postgres.js uses the simple protocol, which takes several statements.
    exec: async (script) => {
      await sql.unsafe(script);
    },
    // A script may hold its own BEGIN … COMMIT (pg-boss's locked maintenance): postgres.js runs such
    // text only on a connection reserved for it, never on one the pool could interleave.
    script: async (text) => {
      const conn = await sql.reserve();
      try {
        return await scriptRows(conn, text);
      } finally {
        conn.release();
      }
    },
    // On a reserved connection, its BEGIN sent with the first statement: postgres.js's sql.begin
    // waits for BEGIN's answer before it runs anything, a round trip (a write and a wake-up of
    // both sides) of its own in every transaction.
    transaction: async (fn) => {
      const conn = await sql.reserve();
      try {
        const begun = conn.unsafe('begin').execute();
        // Answered before the first statement is: a failure shows there too, and is thrown below.
        begun.catch(() => {});
        const result = await fn(reservedTransaction(conn));
        await begun;
        // See abortedTransaction.
        const committed = await conn.unsafe('commit');
        if (committed.command === 'ROLLBACK') throw abortedTransaction();
        return result;
      } catch (err) {
        await conn.unsafe('rollback').catch(() => {});
        throw err;
      } finally {
        conn.release();
      }
    },
    atomically: async (statements) => {
      const conn = await sql.reserve();
      try {
        // Queries issued in one turn of the event loop leave in one write, and the server answers
        // them in order. A statement after a failed one fails too, and the COMMIT of a failed
        // transaction rolls it back: the first error is the one to report. postgres.js sends a query
        // when it is first awaited or executed: each is executed as it is made, so they leave in order.
        const sent = [
          conn.unsafe('begin').execute(),
          ...statements.map((s) => send(conn, s.text, s.params ?? []).execute()),
          conn.unsafe('commit').execute(),
        ];
        const settled = await Promise.allSettled(sent);
        const failed = settled.find((r) => r.status === 'rejected');
        if (failed) throw failed.reason;
        return settled.slice(1, -1).map((r) => (r as PromiseFulfilledResult<Row[]>).value as Row[]);
      } finally {
        conn.release();
      }
    },
    listen: async (channel, onPayload) => {
      const sub = await sql.listen(channel, onPayload);
      return () => sub.unlisten();
    },
    async notify(channel, payload) {
      await sql.notify(channel, payload);
    },
    async holdAdvisoryLock(key) {
      const conn = postgres(url, {
        max: 1,
        onnotice: () => {},
        connect_timeout: 5,
        connection: { application_name: 'workflow-service' },
      });
      try {
        await conn.unsafe('select pg_advisory_lock($1::bigint)', [key]);
      } catch (err) {
        await conn.end({ timeout: 1 });
        throw err;
      }
      // Closing the session releases its lock.
      return () => conn.end({ timeout: 5 });
    },
    close: async () => {
      await Promise.all([sql.end({ timeout: 5 }), lane?.end({ timeout: 5 })]);
    },
  };
}

// Prepared statements skip parsing and, once Postgres settles on a generic plan, planning: for our
// short hot statements planning costs more than running (an API-key lookup: 0.6 ms planning, 0.1 ms
// execution). Each connection keeps what it prepared, so only the first MAX_PREPARED distinct texts
// a process sends are prepared: the fixed statements of the service come first, and text built
// from user input (table filters) cannot grow the caches without bound.
const MAX_PREPARED = 2000;
const prepared = new Set<string>();
const shouldPrepare = (text: string) => {
  if (prepared.has(text)) return true;
  if (prepared.size >= MAX_PREPARED) return false;
  prepared.add(text);
  return true;
};

const send = (exec: postgres.Sql | postgres.ReservedSql, text: string, params: readonly unknown[]) =>
  exec.unsafe(text, params as postgres.ParameterOrJSON<never>[], {
    prepare: params.length > 0 && shouldPrepare(text),
  });

const run = async <T>(exec: postgres.Sql | postgres.ReservedSql, text: string, params: readonly unknown[]) =>
  (await send(exec, text, params)) as unknown as T[];

// Several statements answer a list of results; one statement answers its rows.
const scriptRows = async (exec: postgres.ReservedSql, text: string): Promise<Row[]> => {
  const result = (await exec.unsafe(text)) as unknown as unknown[];
  return (result.length && Array.isArray(result[0]) ? result.flat() : result) as Row[];
};

function reservedTransaction(conn: postgres.ReservedSql): Queryable {
  return withSavepoints({
    query: (text, params = []) => run(conn, text, params),
    exec: async (script) => {
      await conn.unsafe(script);
    },
    script: (text) => scriptRows(conn, text),
  });
}

/** The backend the configuration asks for: DATABASE_URL, or embedded PGlite under dataDir. */
export async function openDatabase(config: {
  DATABASE_URL?: string;
  DATA_DIR: string;
  DATABASE_POOL_SIZE?: number;
}) {
  if (config.DATABASE_URL) return openPostgres(config.DATABASE_URL, { max: config.DATABASE_POOL_SIZE ?? 10 });
  return openPglite({ dataDir: `${config.DATA_DIR}/pgdata` });
}
