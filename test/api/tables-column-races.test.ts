// Column changes racing row writes of the same table. A column change takes the lock every row write
// takes, so each write lands wholly before or wholly after it: no value of the old type survives a
// type change, no row misses a default or keeps an old name, and a unique column ends up unique
// with its slots exact. (On PGlite the requests run one after another; on Postgres they truly race.)
import { describe, expect, it } from 'vitest';
import { columnsApi, expectSlotsExact, insertMany } from './columns-helpers.ts';
import {
  allRows,
  expectIssues,
  expectOk,
  expectRowCount,
  makeTable,
  useTablesService,
} from './tables-helpers.ts';

const { svc, api, apiOf } = useTablesService();
const cols = apiOf(columnsApi);

const ok = (r: { status: number }) => r.status === 200;

describe('column changes racing row writes', () => {
  it('a type change and 32 inserts of both types: every stored value is of the type the column ends with', async () => {
    const table = await makeTable(api, [{ name: 'v', type: 'string' }]);
    await insertMany(
      api,
      table.id,
      Array.from({ length: 300 }, (_, i) => ({ v: String(i) })),
    );
    // Writes sent before and after the change, each half of both types.
    const write = (i: number) => api.insert(table.id, { data: { v: i % 2 ? String(i) : i } });
    const before = Array.from({ length: 16 }, (_, i) => write(i));
    const change = cols.update(table.id, 'v', { type: 'number' });
    const after = Array.from({ length: 16 }, (_, i) => write(i));
    const inserted = await Promise.all([...before, ...after]);
    expectOk(await change);
    // A string went in only before the change (and was converted), a number only after it.
    for (const r of inserted) if (!ok(r)) expectIssues(r, [['data', 'v']]);
    const rows = await allRows(api, table.id);
    expect(rows.every((r) => typeof r.data.v === 'number')).toBe(true);
    expect(rows).toHaveLength(300 + inserted.filter(ok).length);
    await expectRowCount(api, table.id, rows.length);
  });

  it('adding a required column with a default while rows are inserted: no row is left without it', async () => {
    const table = await makeTable(api, [{ name: 'a', type: 'string' }]);
    await insertMany(
      api,
      table.id,
      Array.from({ length: 100 }, () => ({ a: 'x' })),
    );
    const writes = Array.from({ length: 16 }, (_, i) => api.insert(table.id, { rows: [{ a: `w${i}` }] }));
    const [added, ...inserted] = await Promise.all([
      cols.add(table.id, { name: 'tier', type: 'string', required: true }, { default: 'free' }),
      ...writes,
    ]);
    expectOk(added);
    for (const r of inserted) if (!ok(r)) expectIssues(r, [['rows', 0, 'tier']]);
    const rows = await allRows(api, table.id);
    expect(rows.every((r) => r.data.tier === 'free')).toBe(true);
    expect(rows).toHaveLength(100 + inserted.filter(ok).length);
  });

  it('a rename while rows are written under either name: no row keeps the old one', async () => {
    const table = await makeTable(api, [{ name: 'old', type: 'string', unique: true }]);
    await insertMany(
      api,
      table.id,
      Array.from({ length: 100 }, (_, i) => ({ old: `v${i}` })),
    );
    const writes = Array.from({ length: 16 }, (_, i) =>
      api.insert(table.id, { data: { [i % 2 ? 'old' : 'new']: `w${i}` } }),
    );
    const upserts = Array.from({ length: 8 }, (_, i) =>
      api.upsert(table.id, { data: { [i % 2 ? 'old' : 'new']: `v${i}` } }),
    );
    const [renamed, ...rest] = await Promise.all([
      cols.update(table.id, 'old', { name: 'new' }),
      ...writes,
      ...upserts,
    ]);
    expectOk(renamed);
    expect(rest.some(ok)).toBe(true);
    const rows = await allRows(api, table.id);
    expect(rows.every((r) => Object.keys(r.data).join() === 'new')).toBe(true);
    await expectSlotsExact(svc, table.id);
  });

  it('making a column unique while one value is inserted 16 times: unique and exact, or refused', async () => {
    for (let round = 0; round < 3; round++) {
      const table = await makeTable(api, [{ name: 'code', type: 'string' }]);
      await insertMany(
        api,
        table.id,
        Array.from({ length: 50 }, (_, i) => ({ code: `c${i}` })),
      );
      const writes = Array.from({ length: 16 }, () => api.insert(table.id, { data: { code: 'dup' } }));
      const [change, ...inserted] = await Promise.all([
        cols.update(table.id, 'code', { unique: true }),
        ...writes,
      ]);
      const rows = await allRows(api, table.id);
      const dups = rows.filter((r) => r.data.code === 'dup').length;
      if (ok(change)) {
        // Unique from the change on: at most one 'dup', whichever came first.
        expect(dups).toBeLessThanOrEqual(1);
        await expectSlotsExact(svc, table.id);
      } else {
        expect(dups).toBeGreaterThan(1);
        expect(change.body.error).toMatch(/cannot become unique: values repeat/);
      }
      expect(dups).toBe(inserted.filter(ok).length);
    }
  });

  it('a rename while the rows are read by the old name: each read sees the table before or after it', async () => {
    for (let round = 0; round < 3; round++) {
      const table = await makeTable(api, [{ name: 'a', type: 'string' }]);
      await insertMany(
        api,
        table.id,
        Array.from({ length: 60 }, (_, i) => ({ a: i % 2 ? 'odd' : 'even' })),
      );
      const read = () => api.query(table.id, { filter: { a: 'odd' }, sort: { a: 'asc' } });
      const [renamed, ...reads] = await Promise.all([
        cols.update(table.id, 'a', { name: 'b' }),
        ...Array.from({ length: 24 }, read),
      ]);
      expectOk(renamed);
      for (const r of reads) {
        // Before the rename: the 30 odd rows under `a`; after it: `a` is no column. Never a page
        // read by a name the rows no longer carry (no rows, or rows without the filtered value).
        if (r.status === 200) {
          expect(r.body.data.rows).toHaveLength(30);
          expect(r.body.data.rows.every((row: { data: { a?: string } }) => row.data.a === 'odd')).toBe(true);
        } else expectIssues(r, [['filter', 'a']]);
      }
    }
  });
});
