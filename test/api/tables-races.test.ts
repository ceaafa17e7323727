// Concurrent writers of one table: racing inserts or upserts of one unique value leave exactly one
// row, racing batches never pass the row cap, racing creations never pass the tables cap nor share
// a name, and rowCount stays equal to the rows there are through any mix of writes. (On PGlite the
// requests run one after another; on Postgres they truly race.)
import { describe, expect, it } from 'vitest';
import {
  allRows,
  expectIssues,
  expectOk,
  expectRowCount,
  makeTable,
  roomyTenant,
  tablesApi,
  useTablesService,
} from './tables-helpers.ts';

const { svc, api } = useTablesService();

const statuses = (responses: { status: number }[]) => responses.map((r) => r.status).sort();

/** What the database holds for a table: its row_count, its rows, its unique slots and their rows' values. */
async function stored(tableId: string) {
  const [t] = await svc.db.query<{ row_count: number; rows: number; slots: number; stale: number }>(
    `select t.row_count,
            (select count(*)::int from table_rows r where r.table_id = t.id) as rows,
            (select count(*)::int from table_unique_values u where u.table_id = t.id) as slots,
            (select count(*)::int from table_unique_values u join table_rows r on r.id = u.row_id
              where u.table_id = t.id and r.data->>u.column_name is distinct from u.value_key) as stale
       from user_tables t where t.id = $1`,
    [tableId],
  );
  return t as { row_count: number; rows: number; slots: number; stale: number };
}

describe('racing writers of one table', () => {
  it('racing inserts of one unique value: exactly one succeeds', async () => {
    const table = await makeTable(api, [
      { name: 'email', type: 'string', unique: true },
      { name: 'n', type: 'number' },
    ]);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, n) => api.insert(table.id, { data: { email: 'race@x.org', n } })),
    );
    expect(statuses(results)).toEqual([200, ...Array(9).fill(400)]);
    for (const r of results.filter((r) => r.status === 400)) expectIssues(r, [['data', 'email']]);
    await expectRowCount(api, table.id, 1);
    expect(await stored(table.id)).toEqual({ row_count: 1, rows: 1, slots: 1, stale: 0 });
  });

  it('racing upserts of one unique value: one insert, the rest update that row', async () => {
    const table = await makeTable(api, [
      { name: 'email', type: 'string', unique: true },
      { name: 'n', type: 'number' },
    ]);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, n) => api.upsert(table.id, { data: { email: 'up@x.org', n } })),
    );
    for (const r of results) expectOk(r);
    const ops = results.map((r) => r.body.data.operation).sort();
    expect(ops).toEqual(['insert', ...Array(9).fill('update')]);
    expect(new Set(results.map((r) => r.body.data.row.id)).size).toBe(1);
    const rows = await allRows(api, table.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.data.email).toBe('up@x.org');
    expect(await stored(table.id)).toEqual({ row_count: 1, rows: 1, slots: 1, stale: 0 });
  });

  it('racing batches never pass maxRows: cap 50, eight batches of 10, exactly five written', async () => {
    const capped = await roomyTenant(svc, { maxRowsPerTable: 50 });
    const cappedApi = tablesApi(svc, capped.key, capped.workspace.id);
    const table = await makeTable(cappedApi, [{ name: 'i', type: 'number', unique: true }]);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, b) =>
        cappedApi.insert(table.id, { rows: Array.from({ length: 10 }, (_, i) => ({ i: b * 10 + i })) }),
      ),
    );
    expect(statuses(results)).toEqual([200, 200, 200, 200, 200, 400, 400, 400]);
    for (const r of results.filter((r) => r.status === 400)) {
      expectIssues(r, [['rows']]);
      expect(r.body.error).toMatch(/50 rows/);
    }
    await expectRowCount(cappedApi, table.id, 50);
    // Each batch went in whole, and positions 1 to 50 went out once each.
    const rows = await allRows(cappedApi, table.id);
    expect(rows.map((r) => r.position)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    const batches = new Set(rows.map((r) => Math.floor((r.data.i as number) / 10)));
    expect(batches.size).toBe(5);
    expect(await stored(table.id)).toEqual({ row_count: 50, rows: 50, slots: 50, stale: 0 });
  });

  it('racing batches sharing one unique value: exactly one is written, whole', async () => {
    const table = await makeTable(api, [{ name: 'k', type: 'string', unique: true }]);
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, b) =>
        api.insert(table.id, { rows: [{ k: `own-${b}-a` }, { k: 'shared' }, { k: `own-${b}-b` }] }),
      ),
    );
    expect(statuses(results)).toEqual([200, 400, 400, 400, 400, 400]);
    for (const r of results.filter((r) => r.status === 400)) expectIssues(r, [['rows', 1, 'k']]);
    await expectRowCount(api, table.id, 3);
  });

  it('keeps rowCount and the unique slots exact through a mix of racing writes', async () => {
    const table = await makeTable(api, [
      { name: 'k', type: 'string', unique: true },
      { name: 'n', type: 'number' },
    ]);
    const seeded = await api.insert(table.id, {
      rows: Array.from({ length: 20 }, (_, i) => ({ k: `seed-${i}`, n: i })),
    });
    const seedIds = seeded.body.data.rows.map((r: { id: string }) => r.id) as string[];
    const writes = [
      ...Array.from({ length: 10 }, (_, i) => api.insert(table.id, { data: { k: `new-${i}`, n: 100 + i } })),
      ...Array.from({ length: 5 }, (_, i) =>
        api.insert(table.id, {
          rows: [
            { k: `batch-${i}-a`, n: 200 },
            { k: `batch-${i}-b`, n: 200 },
          ],
        }),
      ),
      ...seedIds.slice(0, 6).map((id) => api.deleteRows(table.id, { rowIds: [id] })),
      api.deleteRows(table.id, { filter: { n: { gte: 15, lt: 20 } } }),
      ...Array.from({ length: 6 }, (_, i) =>
        api.upsert(table.id, { data: { k: `seed-${6 + i * 2}`, n: -1 } }),
      ),
      ...Array.from({ length: 4 }, (_, i) => api.upsert(table.id, { data: { k: `up-${i}`, n: 300 } })),
      api.update(table.id, { n: 200 }, { n: 201 }),
      api.update(table.id, { k: 'seed-7' }, { k: 'seed-7-moved' }),
    ];
    const results = await Promise.all(writes);
    for (const r of results) expectOk(r);
    // Seeds 0-5 deleted by id, 15-19 by the filter; seed-16 survives (its upsert ran first and moved
    // it out of the filter) or comes back (it ran after, and inserts): 10 seeds either way, plus 10
    // single inserts, 10 batch rows and 4 upserted inserts.
    expect(await stored(table.id)).toEqual({ row_count: 34, rows: 34, slots: 34, stale: 0 });
    await expectRowCount(api, table.id, 34);
  });
});

describe('racing table creations', () => {
  it('never pass the tables cap', async () => {
    const capped = await roomyTenant(svc, { maxTables: 4 });
    const cappedApi = tablesApi(svc, capped.key, capped.workspace.id);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        cappedApi.create({ name: `T${i}`, schema: { columns: [{ name: 'a', type: 'string' }] } }),
      ),
    );
    expect(statuses(results)).toEqual([200, 200, 200, 200, 403, 403, 403, 403, 403, 403]);
    expect((await cappedApi.list()).body.data.totalCount).toBe(4);
  });

  it('give one name to one table only', async () => {
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        api.create({ name: 'Same', schema: { columns: [{ name: 'a', type: 'string' }] } }),
      ),
    );
    expect(statuses(results)).toEqual([200, 409, 409, 409, 409, 409]);
  });
});
