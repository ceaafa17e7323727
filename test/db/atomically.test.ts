// Db.atomically: statements run in order as one transaction, answered in order; when one fails,
// nothing of the list is committed and its own error is the one thrown; the connection it used
// serves the next caller cleanly.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let tdb: TestDatabase;

beforeAll(async () => {
  tdb = await createTestDatabase();
  await tdb.db.exec('create table atomic_probe (id int primary key, note text not null)');
});
afterAll(async () => {
  await tdb?.close();
});

const notes = async () =>
  (await tdb.db.query<{ id: number; note: string }>('select id, note from atomic_probe order by id')).map(
    (r) => `${r.id}:${r.note}`,
  );

it('runs the statements in order and answers each one its rows', async () => {
  const results = await tdb.db.atomically([
    { text: 'insert into atomic_probe (id, note) values ($1, $2) returning id', params: [1, 'a'] },
    { text: "update atomic_probe set note = note || 'b' where id = $1 returning note", params: [1] },
    { text: 'select count(*)::int as n from atomic_probe' },
  ]);
  expect(results).toEqual([[{ id: 1 }], [{ note: 'ab' }], [{ n: 1 }]]);
  expect(await notes()).toEqual(['1:ab']);
});

it('commits nothing when a statement fails, and throws that statement own error', async () => {
  await expect(
    tdb.db.atomically([
      { text: 'insert into atomic_probe (id, note) values ($1, $2)', params: [2, 'kept?'] },
      { text: 'insert into atomic_probe (id, note) values ($1, $2)', params: [1, 'duplicate'] },
      { text: 'insert into atomic_probe (id, note) values ($1, $2)', params: [3, 'after'] },
    ]),
  ).rejects.toMatchObject({ code: '23505' });
  expect(await notes()).toEqual(['1:ab']);
});

it('leaves every connection usable after a failed list, whoever asks next', async () => {
  const failing = Array.from({ length: 8 }, (_, i) =>
    tdb.db.atomically([
      { text: 'insert into atomic_probe (id, note) values ($1, $2)', params: [100 + i, 'x'] },
      { text: 'select 1 / 0' },
    ]),
  );
  for (const outcome of await Promise.allSettled(failing)) expect(outcome.status).toBe('rejected');
  const fine = await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      tdb.db.atomically([
        { text: 'insert into atomic_probe (id, note) values ($1, $2) returning id', params: [200 + i, 'y'] },
      ]),
    ),
  );
  expect(fine.map(([rows]) => rows?.[0]?.id)).toEqual([200, 201, 202, 203, 204, 205, 206, 207]);
  // No transaction was left open on a pooled connection: a plain query commits on its own.
  await tdb.db.query('insert into atomic_probe (id, note) values ($1, $2)', [300, 'z']);
  expect((await notes()).filter((n) => n.startsWith('1'))).toEqual(['1:ab']);
  expect(await notes()).toContain('300:z');
});
