// Rows of a table through the API: inserting one row or a batch (values checked against the schema,
// all or nothing, unique columns, the row cap), querying, reading and deleting rows; rowCount always
// equal to the rows there are. Bulk update and upsert are in tables-updates.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  expectError,
  expectIssues,
  expectOk,
  expectRowCount,
  makeTable,
  PEOPLE,
  roomyTenant,
  tablesApi,
  useTablesService,
} from './tables-helpers.ts';

const { svc, tenant, api } = useTablesService();

const people = () => makeTable(api, PEOPLE);

describe('insert one row', () => {
  it('answers the row with its position and a message; positions grow from 1', async () => {
    const table = await people();
    const res = await api.insert(table.id, {
      data: {
        email: 'a@x.org',
        name: 'Ann',
        age: 41.5,
        active: true,
        born: '1983-02-01',
        meta: { tags: ['x'] },
      },
    });
    expectOk(res);
    expect(Object.keys(res.body.data).sort()).toEqual(['message', 'row']);
    const row = res.body.data.row;
    expect(Object.keys(row).sort()).toEqual(['createdAt', 'data', 'id', 'position', 'updatedAt']);
    expect(row.position).toBe(1);
    expect(row.data).toEqual({
      email: 'a@x.org',
      name: 'Ann',
      age: 41.5,
      active: true,
      born: '1983-02-01T00:00:00.000Z',
      meta: { tags: ['x'] },
    });
    expect(new Date(row.createdAt).toISOString()).toBe(row.createdAt);
    const second = await api.insert(table.id, { data: { email: 'b@x.org' } });
    expect(second.body.data.row.position).toBe(2);
    expect(second.body.data.row.data).toEqual({ email: 'b@x.org' });
    await expectRowCount(api, table.id, 2);
    const got = await api.getRow(table.id, row.id);
    expectOk(got);
    expect(got.body.data.row).toEqual(row);
  });

  it('stores dates as the UTC instant, and leaves out optional columns given null', async () => {
    const table = await people();
    const res = await api.insert(table.id, {
      data: { email: 'd@x.org', born: '2024-03-01T10:00:00+02:00', name: null, meta: null },
    });
    expectOk(res);
    expect(res.body.data.row.data).toEqual({ email: 'd@x.org', born: '2024-03-01T08:00:00.000Z' });
  });

  it.each([
    ['a number for a string', { name: 5 }, 'name'],
    ['a string for a number', { age: '5' }, 'age'],
    ['a string for a boolean', { active: 'true' }, 'active'],
    ['a non-date for a date', { born: 'yesterday' }, 'born'],
    ['an impossible day', { born: '2023-02-29' }, 'born'],
    ['a number for a date', { born: 1700000000000 }, 'born'],
    ['an object for a number', { age: { n: 1 } }, 'age'],
    ['a NUL in a string', { name: 'a\u0000b' }, 'name'],
  ])('refuses %s, naming the column', async (_, data, column) => {
    const table = await people();
    const details = expectIssues(await api.insert(table.id, { data: { email: 'e@x.org', ...data } }), [
      ['data', column],
    ]);
    expect(details[0]?.message).toContain(column);
    await expectRowCount(api, table.id, 0);
  });

  it('takes any JSON value in a json column', async () => {
    const table = await people();
    for (const [i, meta] of [[1, 2], 'text', 3, false, { a: { b: null } }].entries()) {
      const res = await api.insert(table.id, { data: { email: `j${i}@x.org`, meta } });
      expectOk(res);
      expect(res.body.data.row.data.meta).toEqual(meta);
    }
  });

  it('treats columns named like Object members (constructor, tostring) as any other column', async () => {
    const table = await makeTable(api, [
      { name: 'constructor', type: 'string', unique: true },
      { name: 'valueof', type: 'number', required: true },
    ]);
    const bare = await api.insert(table.id, { data: { valueof: 1 } });
    expectOk(bare);
    expect(bare.body.data.row.data).toEqual({ valueof: 1 });
    expectOk(await api.insert(table.id, { data: { constructor: 'c', valueof: 2 } }));
    expectIssues(await api.insert(table.id, { data: { constructor: 'c', valueof: 3 } }), [
      ['data', 'constructor'],
    ]);
    const up = await api.upsert(table.id, { data: { constructor: 'c', valueof: 4 } });
    expect(up.body.data).toMatchObject({
      operation: 'update',
      row: { data: { constructor: 'c', valueof: 4 } },
    });
    const q = await api.query(table.id, { filter: { constructor: { isNull: true } } });
    expect(q.body.data.rows.map((r: { data: unknown }) => r.data)).toEqual([{ valueof: 1 }]);
  });

  it('refuses a missing or null required column and unknown columns', async () => {
    const table = await people();
    expectIssues(await api.insert(table.id, { data: { name: 'No email' } }), [['data', 'email']]);
    expectIssues(await api.insert(table.id, { data: { email: null } }), [['data', 'email']]);
    expectIssues(await api.insert(table.id, { data: { email: 'u@x.org', nick: 'u', Email: 'x' } }), [
      ['data', 'nick'],
      ['data', 'Email'],
    ]);
    expectIssues(await api.insert(table.id, { data: [{ email: 'u@x.org' }] }), [['data']]);
    expectIssues(await api.insert(table.id, { data: 'row' }), [['data']]);
    await expectRowCount(api, table.id, 0);
  });

  it('refuses a value a unique column already holds, and takes it once that row is gone', async () => {
    const table = await people();
    const first = await api.insert(table.id, { data: { email: 'same@x.org' } });
    expectOk(first);
    const dup = expectIssues(await api.insert(table.id, { data: { email: 'same@x.org', name: 'Again' } }), [
      ['data', 'email'],
    ]);
    expect(dup[0]?.code).toBe('not_unique');
    expectOk(await api.deleteRows(table.id, { rowIds: [first.body.data.row.id] }));
    expectOk(await api.insert(table.id, { data: { email: 'same@x.org' } }));
    await expectRowCount(api, table.id, 1);
  });

  it('needs exactly one of data and rows', async () => {
    const table = await people();
    expectIssues(await api.insert(table.id, {}), [['data']]);
    expectIssues(await api.insert(table.id, { data: { email: 'x@x.org' }, rows: [{ email: 'y@x.org' }] }), [
      ['data'],
    ]);
  });
});

describe('insert a batch', () => {
  it('inserts all rows in order, answering {rows, insertedCount, message}', async () => {
    const table = await people();
    expectOk(await api.insert(table.id, { data: { email: 'first@x.org' } }));
    const res = await api.insert(table.id, {
      rows: [{ email: 'r0@x.org', age: 1 }, { email: 'r1@x.org' }, { email: 'r2@x.org', active: false }],
    });
    expectOk(res);
    expect(Object.keys(res.body.data).sort()).toEqual(['insertedCount', 'message', 'rows']);
    expect(res.body.data.insertedCount).toBe(3);
    expect(res.body.data.rows.map((r: { position: number }) => r.position)).toEqual([2, 3, 4]);
    expect(res.body.data.rows.map((r: { data: { email: string } }) => r.data.email)).toEqual([
      'r0@x.org',
      'r1@x.org',
      'r2@x.org',
    ]);
    await expectRowCount(api, table.id, 4);
  });

  it('writes nothing when any row is invalid, naming every offending row and column', async () => {
    const table = await people();
    const res = await api.insert(table.id, {
      rows: [
        { email: 'ok@x.org' },
        { email: 'bad@x.org', age: 'old' },
        { email: 'ok2@x.org' },
        { email: 'x@x.org', colour: 'red' },
        { name: 'no email', active: 1 },
        'not a row',
      ],
    });
    expectIssues(res, [
      ['rows', 1, 'age'],
      ['rows', 3, 'colour'],
      ['rows', 4, 'email'],
      ['rows', 4, 'active'],
      ['rows', 5],
    ]);
    await expectRowCount(api, table.id, 0);
  });

  it('refuses one unique value twice in a batch, naming the later row', async () => {
    const table = await people();
    const res = await api.insert(table.id, {
      rows: [{ email: 'a@x.org' }, { email: 'b@x.org' }, { email: 'a@x.org' }, { email: 'b@x.org' }],
    });
    const details = expectIssues(res, [
      ['rows', 2, 'email'],
      ['rows', 3, 'email'],
    ]);
    expect(details[0]?.message).toContain('rows.0');
    await expectRowCount(api, table.id, 0);
  });

  it('refuses values existing rows hold, and writes none of the batch', async () => {
    const table = await people();
    expectOk(await api.insert(table.id, { rows: [{ email: 'a@x.org' }, { email: 'b@x.org' }] }));
    const res = await api.insert(table.id, {
      rows: [{ email: 'c@x.org' }, { email: 'b@x.org' }, { email: 'd@x.org' }, { email: 'a@x.org' }],
    });
    expectIssues(res, [
      ['rows', 1, 'email'],
      ['rows', 3, 'email'],
    ]);
    await expectRowCount(api, table.id, 2);
  });

  it('treats numbers, booleans and dates as equal by value in unique columns', async () => {
    const table = await makeTable(api, [
      { name: 'n', type: 'number', unique: true },
      { name: 'b', type: 'boolean', unique: true },
      { name: 'd', type: 'date', unique: true },
    ]);
    expectOk(await api.insert(table.id, { data: { n: 1.5, b: true, d: '2024-01-01' } }));
    expectIssues(await api.insert(table.id, { data: { n: 1.5 } }), [['data', 'n']]);
    expectIssues(await api.insert(table.id, { data: { b: true } }), [['data', 'b']]);
    expectIssues(await api.insert(table.id, { data: { d: '2024-01-01T00:00:00Z' } }), [['data', 'd']]);
    expectIssues(await api.insert(table.id, { data: { d: '2024-01-01T01:00:00+01:00' } }), [['data', 'd']]);
    // Rows without a value take no slot: many may leave a unique column empty.
    expectOk(await api.insert(table.id, { rows: [{ n: 2 }, { n: 3 }, { b: false }] }));
    await expectRowCount(api, table.id, 4);
  });

  it('takes at most 1000 rows, and at least one', async () => {
    const table = await makeTable(api, [{ name: 'i', type: 'number' }]);
    const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ i }));
    expectIssues(await api.insert(table.id, { rows: rows(1001) }), [['rows']]);
    expectIssues(await api.insert(table.id, { rows: [] }), [['rows']]);
    const res = await api.insert(table.id, { rows: rows(1000) });
    expectOk(res);
    expect(res.body.data.insertedCount).toBe(1000);
    expect(res.body.data.rows.at(-1).position).toBe(1000);
    await expectRowCount(api, table.id, 1000);
  });
});

describe('the row cap', () => {
  it('refuses a batch or row that would pass maxRows, naming the cap, and writes nothing', async () => {
    const capped = await roomyTenant(svc, { maxRowsPerTable: 5 });
    const cappedApi = tablesApi(svc, capped.key, capped.workspace.id);
    const table = await makeTable(cappedApi, [{ name: 'i', type: 'number', unique: true }]);
    expect(table.maxRows).toBe(5);
    expectOk(await cappedApi.insert(table.id, { rows: [{ i: 1 }, { i: 2 }, { i: 3 }] }));
    const over = await cappedApi.insert(table.id, { rows: [{ i: 4 }, { i: 5 }, { i: 6 }] });
    expectIssues(over, [['rows']]);
    expect(over.body.error).toMatch(/5 rows/);
    await expectRowCount(cappedApi, table.id, 3);
    expectOk(await cappedApi.insert(table.id, { rows: [{ i: 4 }, { i: 5 }] }));
    expectIssues(await cappedApi.insert(table.id, { data: { i: 6 } }), [['data']]);
    expectIssues(await cappedApi.upsert(table.id, { data: { i: 6 } }), [['data']]);
    // An upsert that updates adds no row: it passes at the cap.
    const update = await cappedApi.upsert(table.id, { data: { i: 5 } });
    expectOk(update);
    expect(update.body.data.operation).toBe('update');
    await expectRowCount(cappedApi, table.id, 5);
    // Deleting makes room again; a larger cap applies at once.
    expectOk(await cappedApi.deleteRows(table.id, { filter: { i: 1 } }));
    expectOk(await cappedApi.insert(table.id, { data: { i: 6 } }));
    await svc.admin.quotas.set.mutate({ orgId: capped.org.id, maxRowsPerTable: 6 });
    expectOk(await cappedApi.insert(table.id, { data: { i: 7 } }));
    await expectRowCount(cappedApi, table.id, 6);
  });
});

describe('reading rows', () => {
  let table: { id: string };
  let rows: { id: string; position: number }[];
  beforeAll(async () => {
    table = await people();
    const res = await api.insert(table.id, {
      rows: [
        { email: 'e1@x.org', name: 'delta', age: 30, born: '1990-05-01' },
        { email: 'e2@x.org', name: 'alpha', age: 25, born: '1985-01-01' },
        { email: 'e3@x.org', name: 'charlie', age: 30, born: '2001-12-31' },
        { email: 'e4@x.org', name: 'bravo', age: 41 },
        { email: 'e5@x.org', name: 'echo', age: 19, born: '1999-07-07' },
      ],
    });
    rows = res.body.data.rows;
  });
  const emails = (res: { body: { data: { rows: { data: { email: string } }[] } } }) =>
    res.body.data.rows.map((r) => r.data.email);

  it('lists rows by position with pagination figures', async () => {
    const res = await api.query(table.id);
    expectOk(res);
    expect(emails(res)).toEqual(['e1@x.org', 'e2@x.org', 'e3@x.org', 'e4@x.org', 'e5@x.org']);
    expect(res.body.data.pagination).toEqual({ total: 5, limit: 100, offset: 0, hasMore: false });
    expect(res.body.data.rows[0]).toEqual({
      id: rows[0]?.id,
      position: 1,
      data: expect.objectContaining({ email: 'e1@x.org' }),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
  });

  it('filters, sorts, limits and offsets', async () => {
    const res = await api.query(table.id, {
      filter: { age: { gte: 20 } },
      sort: [{ column: 'age', direction: 'desc' }, { column: 'name' }],
      limit: 2,
      offset: 1,
    });
    expectOk(res);
    expect(emails(res)).toEqual(['e3@x.org', 'e1@x.org']);
    expect(res.body.data.pagination).toEqual({ total: 4, limit: 2, offset: 1, hasMore: true });
    const past = await api.query(table.id, { filter: { age: { gte: 20 } }, offset: 10 });
    expect(past.body.data).toEqual({
      rows: [],
      pagination: { total: 4, limit: 100, offset: 10, hasMore: false },
    });
  });

  it.each([
    [{ name: 'asc' }, ['e2@x.org', 'e4@x.org', 'e3@x.org', 'e1@x.org', 'e5@x.org']],
    [{ born: 'desc' }, ['e4@x.org', 'e3@x.org', 'e5@x.org', 'e1@x.org', 'e2@x.org']],
    [{ age: 'asc', position: 'desc' }, ['e5@x.org', 'e2@x.org', 'e3@x.org', 'e1@x.org', 'e4@x.org']],
    [
      [{ column: 'position', direction: 'desc' }],
      ['e5@x.org', 'e4@x.org', 'e3@x.org', 'e2@x.org', 'e1@x.org'],
    ],
    [[{ column: 'createdAt' }], ['e1@x.org', 'e2@x.org', 'e3@x.org', 'e4@x.org', 'e5@x.org']],
  ])('sorts by %j', async (sort, expected) => {
    const res = await api.query(table.id, { sort });
    expectOk(res);
    expect(emails(res)).toEqual(expected);
  });

  it('refuses bad filters, sorts, limits and offsets', async () => {
    expectIssues(await api.query(table.id, { sort: [{ column: 'nope' }] }), [['sort', 0]]);
    expectIssues(await api.query(table.id, { sort: { age: 'up' } }), [['sort', 'age']]);
    expectIssues(await api.query(table.id, { sort: 'age' }), [['sort']]);
    expectIssues(await api.query(table.id, { filter: { nope: 1 } }), [['filter', 'nope']]);
    expectIssues(await api.query(table.id, { limit: 0 }), [['limit']]);
    expectIssues(await api.query(table.id, { limit: 1001 }), [['limit']]);
    expectIssues(await api.query(table.id, { offset: -1 }), [['offset']]);
    const res = await svc.call('GET', `/api/v1/tables/${table.id}/rows`, {
      key: tenant.key,
      query: { workspaceId: tenant.workspace.id, filter: '{not json' },
    });
    expectIssues(res, [['filter']]);
  });

  it('gets one row; 404 for a row not in the table', async () => {
    const res = await api.getRow(table.id, rows[2]?.id as string);
    expectOk(res);
    expect(res.body.data.row).toMatchObject({ id: rows[2]?.id, position: 3 });
    expectError(await api.getRow(table.id, '00000000-0000-4000-8000-000000000000'), 404, /Row/);
    const otherTable = await people();
    expectError(await api.getRow(otherTable.id, rows[2]?.id as string), 404, /Row/);
  });
});

describe('DELETE rows', () => {
  it('deletes by ids (passing over ids not in the table) and by filter, keeping rowCount exact', async () => {
    const table = await people();
    const res = await api.insert(table.id, {
      rows: Array.from({ length: 6 }, (_, i) => ({ email: `d${i}@x.org`, age: i })),
    });
    const ids = res.body.data.rows.map((r: { id: string }) => r.id) as string[];
    const byIds = await api.deleteRows(table.id, {
      rowIds: [ids[3], ids[1], '00000000-0000-4000-8000-000000000000'],
    });
    expectOk(byIds);
    expect(byIds.body.data).toEqual({
      message: expect.any(String),
      deletedCount: 2,
      deletedRowIds: [ids[1], ids[3]],
    });
    await expectRowCount(api, table.id, 4);
    const byFilter = await api.deleteRows(table.id, { filter: { age: { gte: 4 } } });
    expect(byFilter.body.data).toMatchObject({ deletedCount: 2, deletedRowIds: [ids[4], ids[5]] });
    await expectRowCount(api, table.id, 2);
    const none = await api.deleteRows(table.id, { filter: { age: 100 } });
    expect(none.body.data).toMatchObject({ deletedCount: 0, deletedRowIds: [] });
    // Positions are not reused.
    const next = await api.insert(table.id, { data: { email: 'd1@x.org' } });
    expect(next.body.data.row.position).toBe(7);
    await expectRowCount(api, table.id, 3);
  });

  it('needs rowIds or a filter, not both, and ids that are UUIDs', async () => {
    const table = await people();
    expectIssues(await api.deleteRows(table.id, {}), [['rowIds']]);
    expectIssues(await api.deleteRows(table.id, { filter: {} }), [['filter']]);
    expectIssues(await api.deleteRows(table.id, { rowIds: ['x'] }), [['rowIds', 0]]);
    expectIssues(
      await api.deleteRows(table.id, {
        rowIds: ['00000000-0000-4000-8000-000000000000'],
        filter: { age: 1 },
      }),
      [['rowIds']],
    );
  });
});
