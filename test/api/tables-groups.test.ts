// Concurrent writers of one table, committed in groups (db/tables/write-groups.ts): 16 writers at the
// row cap leave exactly the cap, 16 upserts of one unique value one row, positions only grow, each
// request gets its own answer (a unique value taken fails that request alone), and a statement the
// database refuses fails its own request only. On PGlite the groups run one write at a time; on
// Postgres pipelined, and again one at a time when a statement fails.
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

const N = 16;
const statuses = (responses: { status: number }[]) => responses.map((r) => r.status).sort();
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/**
 * row_count, the rows and the unique slots the database holds for a table, and the slots whose
 * value is not their row's (stale: there must be none).
 */
async function stored(tableId: string) {
  const [t] = await svc.db.query<{ row_count: number; rows: number; slots: number; stale: number }>(
    `select t.row_count, (select count(*)::int from table_rows r where r.table_id = t.id) as rows,
            (select count(*)::int from table_unique_values u where u.table_id = t.id) as slots,
            (select count(*)::int from table_unique_values u join table_rows r on r.id = u.row_id
              where u.table_id = t.id and r.data->>u.column_name is distinct from u.value_key) as stale
       from user_tables t where t.id = $1`,
    [tableId],
  );
  return t;
}
const exact = (n: number) => ({ row_count: n, rows: n, slots: n, stale: 0 });

describe('16 concurrent writers of one table', () => {
  it('at the row cap: exactly the cap is written, the rest refused with the cap named', async () => {
    const capped = await roomyTenant(svc, { maxRowsPerTable: 10 });
    const cappedApi = tablesApi(svc, capped.key, capped.workspace.id);
    const table = await makeTable(cappedApi, [{ name: 'i', type: 'number', unique: true }]);
    expectOk(await cappedApi.insert(table.id, { rows: [{ i: -1 }, { i: -2 }] }));
    const results = await Promise.all(range(1, N).map((i) => cappedApi.insert(table.id, { data: { i } })));
    expect(statuses(results)).toEqual([...Array(8).fill(200), ...Array(8).fill(400)]);
    for (const r of results.filter((r) => r.status === 400)) {
      expectIssues(r, [['data']]);
      expect(r.body.error).toMatch(/at most 10 rows/);
    }
    await expectRowCount(cappedApi, table.id, 10);
    expect((await allRows(cappedApi, table.id)).map((r) => r.position)).toEqual(range(1, 10));
    expect(await stored(table.id)).toEqual(exact(10));
  });

  it('upserting one unique value: one row, one insert and the rest updates of it', async () => {
    const table = await makeTable(api, [
      { name: 'email', type: 'string', unique: true },
      { name: 'n', type: 'number' },
    ]);
    const results = await Promise.all(
      range(1, N).map((n) => api.upsert(table.id, { data: { email: 'one@x.org', n } })),
    );
    for (const r of results) expectOk(r);
    const ops = results.map((r) => r.body.data.operation).sort();
    expect(ops).toEqual(['insert', ...Array(N - 1).fill('update')]);
    expect(new Set(results.map((r) => r.body.data.row.id)).size).toBe(1);
    const rows = await allRows(api, table.id);
    expect(rows).toHaveLength(1);
    // The last write of the last group is the one that stays.
    expect(range(1, N)).toContain(rows[0]?.data.n);
    expect(await stored(table.id)).toEqual(exact(1));
  });

  it('a unique value taken fails that request alone; the others are written, some committed together', async () => {
    const table = await makeTable(api, [{ name: 'k', type: 'string', unique: true }]);
    expectOk(await api.insert(table.id, { data: { k: 'taken' } }));
    const results = await Promise.all(
      range(1, N).map((i) => api.insert(table.id, { data: { k: i === 7 ? 'taken' : `k${i}` } })),
    );
    expectIssues(results[6] as (typeof results)[number], [['data', 'k']]);
    for (const [i, r] of results.entries()) if (i !== 6) expectOk(r);
    await expectRowCount(api, table.id, N);
    // Rows committed in one transaction share its timestamp: fewer timestamps than writes.
    const stamps = new Set(results.filter((r) => r.status === 200).map((r) => r.body.data.row.createdAt));
    expect(stamps.size).toBeLessThan(N - 1);
    expect(await stored(table.id)).toEqual(exact(N));
  });

  it('positions only grow through racing inserts and deletes', async () => {
    const table = await makeTable(api, [{ name: 'k', type: 'string', unique: true }]);
    const first = await api.insert(table.id, { rows: range(1, 8).map((i) => ({ k: `s${i}` })) });
    const seeds = first.body.data.rows as { id: string; position: number }[];
    const results = await Promise.all([
      ...range(1, N).map((i) => api.insert(table.id, { data: { k: `n${i}` } })),
      ...seeds.slice(4).map((s) => api.deleteRow(table.id, s.id)),
      api.deleteRows(table.id, { filter: { k: { in: ['s1', 's2'] } } }),
    ]);
    for (const r of results) expectOk(r);
    const inserted = results.slice(0, N).map((r) => r.body.data.row.position as number);
    // Each new row went after every row before it, deleted or not, and no position twice.
    expect(new Set(inserted).size).toBe(N);
    expect(Math.min(...inserted)).toBeGreaterThan(8);
    const rows = await allRows(api, table.id);
    expect(rows.map((r) => r.position)).toEqual([3, 4, ...range(9, 8 + N)]);
    expect(await stored(table.id)).toEqual(exact(N + 2));
    const last = await api.insert(table.id, { data: { k: 'last' } });
    expect(last.body.data.row.position).toBe(9 + N);
  });

  it('patches and deletes racing with upserts of the same values keep each value on one row', async () => {
    // Which of a patch and an upsert of one value goes first decides which rows stay: whatever the
    // order, every value is on one row, and its slot with it.
    const table = await makeTable(api, [
      { name: 'k', type: 'string', unique: true },
      { name: 'n', type: 'number' },
    ]);
    const seeded = await api.insert(table.id, { rows: range(1, 4).map((i) => ({ k: `v${i}`, n: 0 })) });
    const ids = (seeded.body.data.rows as { id: string }[]).map((r) => r.id);
    const results = await Promise.all([
      api.patchRow(table.id, ids[0] as string, { k: 'moved' }),
      api.upsert(table.id, { data: { k: 'v1', n: 1 } }),
      api.deleteRow(table.id, ids[1] as string),
      api.upsert(table.id, { data: { k: 'v2', n: 2 } }),
      api.patchRow(table.id, ids[2] as string, { n: 4 }),
      ...range(1, 10).map((i) => api.upsert(table.id, { data: { k: `u${i % 3}`, n: i } })),
    ]);
    for (const r of results) expectOk(r);
    const keys = (await allRows(api, table.id)).map((r) => r.data.k as string);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toEqual(expect.arrayContaining(['moved', 'u0', 'u1', 'u2', 'v3', 'v4']));
    expect(await stored(table.id)).toEqual(exact(keys.length));
  });
});

describe('a statement the database refuses', () => {
  it('fails its own request only: the others of its group are written once', async () => {
    // A trigger stands for any refusal that the checks before the write cannot foresee.
    await svc.db.exec(`
      create or replace function refuse_boom() returns trigger language plpgsql as $$
      begin raise exception 'boom refused'; end $$;
      create trigger refuse_boom before insert on table_rows for each row
        when (new.data->>'k' = 'boom') execute function refuse_boom();`);
    try {
      const table = await makeTable(api, [{ name: 'k', type: 'string', unique: true }]);
      const results = await Promise.all(
        range(1, N).map((i) => api.insert(table.id, { data: { k: i === 5 ? 'boom' : `k${i}` } })),
      );
      expect(results[4]?.status).toBe(500);
      for (const [i, r] of results.entries()) if (i !== 4) expectOk(r);
      await expectRowCount(api, table.id, N - 1);
      const rows = await allRows(api, table.id);
      expect(rows.map((r) => r.data.k).sort()).toEqual(
        range(1, N)
          .filter((i) => i !== 5)
          .map((i) => `k${i}`)
          .sort(),
      );
      expect(new Set(rows.map((r) => r.position)).size).toBe(N - 1);
      expect(await stored(table.id)).toEqual(exact(N - 1));
    } finally {
      await svc.db.exec('drop trigger refuse_boom on table_rows; drop function refuse_boom();');
    }
  });

  it('before its write has decided: fails that request only, though pipelined writes have no savepoints', async () => {
    // A patch by id awaits its statement before it decides (the row may be missing); refused there,
    // the transaction is aborted under the writes queued after it, which must not fail with it.
    await svc.db.exec(`
      create or replace function refuse_bust() returns trigger language plpgsql as $$
      begin raise exception 'bust refused'; end $$;
      create trigger refuse_bust before update on table_rows for each row
        when (new.data->>'k' = 'bust') execute function refuse_bust();`);
    try {
      const table = await makeTable(api, [{ name: 'k', type: 'string', unique: true }]);
      const seeded = await api.insert(table.id, { data: { k: 'seed' } });
      const seedId = seeded.body.data.row.id as string;
      const results = await Promise.all([
        ...range(1, 5).map((i) => api.upsert(table.id, { data: { k: `k${i}` } })),
        api.patchRow(table.id, seedId, { k: 'bust' }),
        ...range(6, N).map((i) => api.upsert(table.id, { data: { k: `k${i}` } })),
      ]);
      expect(results[5]?.status).toBe(500);
      for (const [i, r] of results.entries()) if (i !== 5) expectOk(r);
      const rows = await allRows(api, table.id);
      expect(rows.map((r) => r.data.k).sort()).toEqual(
        ['seed', ...range(1, 5).map((i) => `k${i}`), ...range(6, N).map((i) => `k${i}`)].sort(),
      );
      expect(new Set(rows.map((r) => r.position)).size).toBe(N + 1);
      expect(await stored(table.id)).toEqual(exact(N + 1));
    } finally {
      await svc.db.exec('drop trigger refuse_bust on table_rows; drop function refuse_bust();');
    }
  });
});
