// Db.transaction on either backend: committed when its function resolves, rolled back when it
// throws, a nested one is a savepoint, and a transaction a failed statement aborted (its error
// caught) is reported as rolled back instead of passing for committed. On a server, statements sent
// together inside one are answered in order, and its connection serves the next caller cleanly.
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let tdb: TestDatabase;

beforeAll(async () => {
  tdb = await createTestDatabase();
  await tdb.db.exec('create table tx_probe (id int primary key, note text not null)');
});
afterAll(async () => {
  await tdb?.close();
});
beforeEach(async () => {
  await tdb.db.exec('delete from tx_probe');
});

const notes = async () =>
  (await tdb.db.query<{ id: number; note: string }>('select id, note from tx_probe order by id')).map(
    (r) => `${r.id}:${r.note}`,
  );
const insert = 'insert into tx_probe (id, note) values ($1, $2)';

it('commits what its function did once it resolves, and answers its value', async () => {
  const value = await tdb.db.transaction(async (tx) => {
    await tx.query(insert, [1, 'a']);
    const [row] = await tx.query<{ n: number }>('select count(*)::int as n from tx_probe');
    return row?.n;
  });
  expect(value).toBe(1);
  expect(await notes()).toEqual(['1:a']);
});

it('rolls everything back when its function throws, and throws that error', async () => {
  await expect(
    tdb.db.transaction(async (tx) => {
      await tx.query(insert, [1, 'a']);
      throw new Error('changed my mind');
    }),
  ).rejects.toThrow('changed my mind');
  expect(await notes()).toEqual([]);
});

it('rolls back only a nested transaction that throws', async () => {
  await tdb.db.transaction(async (tx) => {
    await tx.query(insert, [1, 'kept']);
    await tx
      .transaction(async (inner) => {
        await inner.query(insert, [2, 'dropped']);
        await inner.query(insert, [1, 'duplicate']);
      })
      .catch(() => {});
    await tx.query(insert, [3, 'after']);
  });
  expect(await notes()).toEqual(['1:kept', '3:after']);
});

it('does not pass off a transaction a failed statement aborted as committed', async () => {
  await expect(
    tdb.db.transaction(async (tx) => {
      await tx.query(insert, [1, 'a']);
      // Caught, outside any savepoint: Postgres has aborted the transaction all the same.
      await tx.query(insert, [1, 'duplicate']).catch(() => {});
      return 'done';
    }),
  ).rejects.toThrow(/rolled back/);
  expect(await notes()).toEqual([]);
});

it('answers statements sent together in order, and leaves every connection clean', async () => {
  const results = await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      tdb.db
        .transaction(async (tx) => {
          const [a, b] = await Promise.all([
            tx.query<{ id: number }>(`${insert} returning id`, [i * 2, 'x']),
            tx.query<{ id: number }>(`${insert} returning id`, [i % 3 === 0 ? i * 2 : i * 2 + 1, 'y']),
          ]);
          return [a[0]?.id, b[0]?.id];
        })
        .then(
          (ids) => ids,
          () => 'refused',
        ),
    ),
  );
  // Every third transaction inserts one id twice: it fails whole; the others commit both rows.
  expect(results).toEqual(
    Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? 'refused' : [i * 2, i * 2 + 1])),
  );
  // No transaction was left open on a pooled connection: a plain statement commits on its own.
  await tdb.db.query(insert, [100, 'z']);
  expect(await notes()).toHaveLength(8 * 2 + 1);
});
