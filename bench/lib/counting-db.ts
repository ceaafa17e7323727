// A database handle that counts the statements run through it, by their first words, for benches
// that measure round trips per request rather than time (a figure a busy shared machine cannot blur).
import type { Db, Queryable, Row, Statement } from '../../db/client.ts';

export interface StatementCounts {
  /** Statements (and transactions begun) seen since the last reset, keyed by their opening text. */
  readonly counts: Map<string, number>;
  reset(): void;
}

const keyOf = (text: string) => text.replace(/\s+/g, ' ').trim().slice(0, 60);

export function countingDb(db: Db): { db: Db; counter: StatementCounts } {
  const counts = new Map<string, number>();
  const note = (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);
  const wrap = (q: Queryable): Queryable => ({
    query: <T = Row>(text: string, params?: readonly unknown[]) => {
      note(keyOf(text));
      return q.query<T>(text, params);
    },
    exec: (script) => q.exec(script),
    script: (text) => q.script(text),
    transaction: (fn) => {
      note('(transaction)');
      return q.transaction((tx) => fn(wrap(tx)));
    },
  });
  const counted: Db = Object.assign(Object.create(db) as Db, wrap(db), {
    atomically: (statements: readonly Statement[]) => {
      note('(atomically)');
      return db.atomically(statements);
    },
  });
  return { db: counted, counter: { counts, reset: () => counts.clear() } };
}
