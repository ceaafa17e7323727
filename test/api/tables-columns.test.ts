// Schema changes of a table: listing tables with their row counts, adding a column (defaults,
// required, unique), and changing one (rename, required, unique), each refusal a 400 naming the
// rows and leaving the table exactly as it was; who may do it. Type changes and select columns are
// tested in tables-conversions, races in tables-column-races.
import { describe, expect, it } from 'vitest';
import { addPerson } from '../helpers/service.ts';
import { columnsApi, columnsOf, expectSlotsExact, insertMany, storedTable } from './columns-helpers.ts';
import {
  allRows,
  expectError,
  expectIssues,
  expectOk,
  makeTable,
  roomyTenant,
  tablesApi,
  useTablesService,
} from './tables-helpers.ts';

const { svc, tenant, api, apiOf } = useTablesService();
const cols = apiOf(columnsApi);

const EMAIL = { name: 'email', type: 'string', required: true, unique: true };
const col = (name: string, type = 'string', more: Record<string, unknown> = {}) => ({
  name,
  type,
  required: false,
  unique: false,
  ...more,
});

/** A table of people with `n` rows: email a0@x.org…, visits 0…. */
async function people(n: number) {
  const table = await makeTable(api, [EMAIL, { name: 'visits', type: 'number' }]);
  await insertMany(
    api,
    table.id,
    Array.from({ length: n }, (_, i) => ({ email: `a${i}@x.org`, visits: i })),
  );
  return table;
}

describe('GET /api/v1/tables', () => {
  it('lists each table with its rowCount as it is now', async () => {
    const own = await roomyTenant(svc);
    const ownApi = tablesApi(svc, own.key, own.workspace.id);
    const a = await makeTable(ownApi, [col('n', 'number')], 'a');
    const b = await makeTable(ownApi, [col('n', 'number')], 'b');
    expectOk(await ownApi.insert(a.id, { rows: [{ n: 1 }, { n: 2 }, { n: 3 }] }));
    expectOk(await ownApi.insert(b.id, { data: { n: 1 } }));
    expectOk(await ownApi.deleteRows(a.id, { filter: { n: 2 } }));
    const res = await ownApi.list();
    expectOk(res);
    const counts = res.body.data.tables.map((t: { name: string; rowCount: number }) => [t.name, t.rowCount]);
    expect(counts).toEqual([
      ['a', 2],
      ['b', 1],
    ]);
    expect(res.body.data.totalCount).toBe(2);
  });
});

describe('POST /api/v1/tables/{tableId}/columns', () => {
  it('adds an optional column last: rows have no value, new rows may give one', async () => {
    const table = await people(2);
    const res = await cols.add(table.id, { name: 'notes', type: 'string' });
    expectOk(res);
    expect(res.body.data).toEqual({
      columns: [EMAIL, col('visits', 'number'), col('notes')],
      message: 'Column notes added',
    });
    expect(await columnsOf(api, table.id)).toEqual(res.body.data.columns);
    expect((await allRows(api, table.id)).map((r) => r.data.notes)).toEqual([undefined, undefined]);
    expectOk(await api.insert(table.id, { data: { email: 'n@x.org', notes: 'hi' } }));
    expectOk(await api.query(table.id, { filter: { notes: 'hi' } }));
  });

  it('fills every existing row with the default, converted to the stored form', async () => {
    const table = await people(3);
    const before = await storedTable(svc, table.id);
    expectOk(
      await cols.add(table.id, { name: 'since', type: 'date', required: true }, { default: '2024-02-29' }),
    );
    const rows = await allRows(api, table.id);
    expect(rows.map((r) => r.data.since)).toEqual(Array(3).fill('2024-02-29T00:00:00.000Z'));
    // The rows keep their ids and positions; only their data changed.
    expect(rows.map((r) => [r.id, r.position])).toEqual(before.rows.map((r) => [r.id, Number(r.position)]));
    // Required from now on.
    expectIssues(await api.insert(table.id, { data: { email: 'x@x.org' } }), [['data', 'since']]);
  });

  it('needs a default for a required column of a table with rows, not of an empty one', async () => {
    const table = await people(2);
    const before = await storedTable(svc, table.id);
    const res = await cols.add(table.id, { name: 'tier', type: 'string', required: true });
    expectIssues(res, [['default']]);
    expect(res.body.details[0].message).toBe(
      'The table has 2 rows: a required column needs a default to fill them',
    );
    expect(await storedTable(svc, table.id)).toEqual(before);
    const empty = await makeTable(api, [col('a')]);
    expectOk(await cols.add(empty.id, { name: 'tier', type: 'string', required: true }));
  });

  it('refuses a default of the wrong type, or null, changing nothing', async () => {
    const table = await people(1);
    const before = await storedTable(svc, table.id);
    for (const value of ['many', null, { n: 1 }]) {
      const res = await cols.add(table.id, { name: 'n', type: 'number' }, { default: value });
      expectIssues(res, [['default']]);
    }
    const res = await cols.add(table.id, { name: 'd', type: 'date' }, { default: '2024-02-30' });
    expect(expectIssues(res, [['default']])[0]?.message).toMatch(/ISO 8601/);
    expect(await storedTable(svc, table.id)).toEqual(before);
  });

  it('a unique column: a default on one row takes its slot, on two rows is refused', async () => {
    const one = await people(1);
    expectOk(await cols.add(one.id, { name: 'code', type: 'string', unique: true }, { default: 'A1' }));
    expectIssues(await api.insert(one.id, { data: { email: 'b@x.org', code: 'A1' } }), [['data', 'code']]);
    await expectSlotsExact(svc, one.id);

    const two = await people(2);
    const before = await storedTable(svc, two.id);
    const res = await cols.add(two.id, { name: 'code', type: 'string', unique: true }, { default: 'A1' });
    expectIssues(res, [['default']]);
    expect(await storedTable(svc, two.id)).toEqual(before);
    // Without a default the rows hold no value, so nothing clashes; new values are checked.
    expectOk(await cols.add(two.id, { name: 'code', type: 'string', unique: true }));
    expectOk(await api.insert(two.id, { data: { email: 'c@x.org', code: 'Z' } }));
    expectIssues(await api.insert(two.id, { data: { email: 'd@x.org', code: 'Z' } }), [['data', 'code']]);
    await expectSlotsExact(svc, two.id);
  });

  it('refuses bad definitions with a 400 naming the field, and a name the table has with 409', async () => {
    const table = await people(1);
    const before = await storedTable(svc, table.id);
    const bad: [Record<string, unknown>, (string | number)[]][] = [
      [{ name: 'Bad Name', type: 'string' }, ['column', 'name']],
      [{ name: 'x', type: 'text' }, ['column', 'type']],
      [{ name: 'x', type: 'string', extra: 1 }, ['column']],
      [{ name: 'x', type: 'json', unique: true }, ['column', 'unique']],
      [{ name: 'x', type: 'select' }, ['column', 'options']],
      [{ name: 'x', type: 'select', options: [] }, ['column', 'options']],
      [{ name: 'x', type: 'string', options: ['a'] }, ['column', 'options']],
      [{ name: 'x', type: 'select', unique: true, options: ['a'] }, ['column', 'unique']],
      [{ name: 'x', type: 'select', options: ['a', 'A'] }, ['column', 'options', 1, 'name']],
      [{ name: 'x', type: 'select', options: [{ id: 'a', name: 'b' }, 'a'] }, ['column', 'options', 1, 'id']],
    ];
    for (const [column, path] of bad) {
      const res = await cols.add(table.id, column);
      expectError(res, 400);
      expect(res.body.details.map((d: { path: unknown }) => d.path)).toContainEqual(path);
    }
    expectError(
      await cols.add(table.id, { name: 'visits', type: 'string' }),
      409,
      /already has a column named visits/,
    );
    expectError(
      await svc.call('POST', `/api/v1/tables/${table.id}/columns`, {
        key: tenant.key,
        body: { workspaceId: tenant.workspace.id },
      }),
      400,
    );
    expect(await storedTable(svc, table.id)).toEqual(before);
  });

  it('refuses a column past 1000', async () => {
    const table = await makeTable(
      api,
      Array.from({ length: 1000 }, (_, i) => col(`c${i}`)),
    );
    expectIssues(await cols.add(table.id, { name: 'more', type: 'string' }), [['column']]);
  });

  it('records table.column_added', async () => {
    const table = await people(2);
    expectOk(await cols.add(table.id, { name: 'n', type: 'number' }, { default: 0 }));
    const res = await svc.call('GET', '/api/v1/audit-logs', {
      key: tenant.key,
      query: { workspaceId: tenant.workspace.id, action: 'table.column_added', resourceId: table.id },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    expect(res.body.data[0]).toMatchObject({ actorId: tenant.user.id, resourceType: 'table' });
  });
});

describe('PATCH /api/v1/tables/{tableId}/columns: rename, required, unique', () => {
  it('renames a column: rows, unique values, filters, sorts and upserts follow the new name', async () => {
    const table = await people(3);
    const res = await cols.update(table.id, 'email', { name: 'work_email' });
    expectOk(res);
    expect(res.body.data).toEqual({
      columns: [{ ...EMAIL, name: 'work_email' }, col('visits', 'number')],
      message: 'Column work_email updated',
    });
    const rows = await allRows(api, table.id);
    expect(rows.map((r) => r.data)).toEqual([0, 1, 2].map((i) => ({ work_email: `a${i}@x.org`, visits: i })));
    expectIssues(await api.insert(table.id, { data: { work_email: 'a1@x.org' } }), [['data', 'work_email']]);
    expectIssues(await api.insert(table.id, { data: { email: 'new@x.org' } }), [
      ['data', 'work_email'],
      ['data', 'email'],
    ]);
    const found = await api.query(table.id, {
      filter: { work_email: { startsWith: 'a2' } },
      sort: { work_email: 'desc' },
    });
    expect(found.body.data.rows.map((r: { data: { visits: number } }) => r.data.visits)).toEqual([2]);
    expectError(await api.query(table.id, { filter: { email: 'a1@x.org' } }), 400);
    const up = await api.upsert(table.id, {
      data: { work_email: 'a1@x.org', visits: 50 },
      conflictTarget: 'work_email',
    });
    expect(up.body.data.operation).toBe('update');
    await expectSlotsExact(svc, table.id);
  });

  it('refuses a name another column has (409) and an unknown column (404), changing nothing', async () => {
    const table = await people(2);
    const before = await storedTable(svc, table.id);
    expectError(
      await cols.update(table.id, 'email', { name: 'visits' }),
      409,
      /already has a column named visits/,
    );
    expectError(await cols.update(table.id, 'nope', { name: 'x' }), 404, /Column not found/);
    expectIssues(await cols.update(table.id, 'email', {}), [['updates']]);
    expectIssues(await cols.update(table.id, 'email', { multiple: true }), [['updates']]);
    expectIssues(await cols.update(table.id, 'email', { name: '9lives' }), [['updates', 'name']]);
    expect(await storedTable(svc, table.id)).toEqual(before);
  });

  it('makes a column required only when every row has a value, naming those that do not', async () => {
    const table = await makeTable(api, [col('a'), col('b', 'number')]);
    await insertMany(api, table.id, [{ a: 'x', b: 1 }, { a: 'y' }, { a: 'z', b: 3 }, { a: 'w' }]);
    const rows = await allRows(api, table.id);
    const before = await storedTable(svc, table.id);
    const res = await cols.update(table.id, 'b', { required: true });
    expect(
      expectIssues(res, [
        ['rows', rows[1]?.id as string, 'b'],
        ['rows', rows[3]?.id as string, 'b'],
      ]).map((d) => d.message),
    ).toEqual(['Row at position 2 has no value of b', 'Row at position 4 has no value of b']);
    expect(res.body.error).toBe('Column b cannot become required: rows have no value (2 rows)');
    expect(await storedTable(svc, table.id)).toEqual(before);
    expectOk(await api.update(table.id, { b: { isNull: true } }, { b: 0 }));
    expectOk(await cols.update(table.id, 'b', { required: true }));
    expectIssues(await api.insert(table.id, { data: { a: 'v' } }), [['data', 'b']]);
    expectOk(await cols.update(table.id, 'b', { required: false }));
    expectOk(await api.insert(table.id, { data: { a: 'v' } }));
  });

  it('makes a column unique only without repeated values, naming each repeat and its first holder', async () => {
    const table = await makeTable(api, [col('code'), col('n', 'number')]);
    await insertMany(api, table.id, [
      { code: 'A' },
      { code: 'B' },
      { code: 'A' },
      { n: 1 },
      { code: 'A' },
      { code: 'B' },
    ]);
    const rows = await allRows(api, table.id);
    const before = await storedTable(svc, table.id);
    const res = await cols.update(table.id, 'code', { unique: true });
    const details = expectIssues(
      res,
      [2, 4, 5].map((i) => ['rows', rows[i]?.id as string, 'code']),
    );
    expect(details.map((d) => d.message)).toEqual([
      `Row at position 3 holds the value of the row at position 1 (${rows[0]?.id})`,
      `Row at position 5 holds the value of the row at position 1 (${rows[0]?.id})`,
      `Row at position 6 holds the value of the row at position 2 (${rows[1]?.id})`,
    ]);
    expect(res.body.error).toBe('Column code cannot become unique: values repeat (3 rows)');
    expect(await storedTable(svc, table.id)).toEqual(before);
    expectOk(await api.deleteRows(table.id, { rowIds: [rows[2]?.id, rows[4]?.id, rows[5]?.id] }));
    expectOk(await cols.update(table.id, 'code', { unique: true }));
    await expectSlotsExact(svc, table.id);
    expectIssues(await api.insert(table.id, { data: { code: 'B' } }), [['data', 'code']]);
    // And back: the slots go, repeats are allowed again.
    expectOk(await cols.update(table.id, 'code', { unique: false }));
    expectOk(await api.insert(table.id, { data: { code: 'B' } }));
    await expectSlotsExact(svc, table.id);
  });

  it('names the first 20 offending rows of many and counts them all', async () => {
    const table = await makeTable(api, [col('a'), col('b')]);
    await insertMany(
      api,
      table.id,
      Array.from({ length: 1500 }, (_, i) => (i % 50 === 7 ? { a: 'x' } : { a: 'x', b: 'y' })),
    );
    const res = await cols.update(table.id, 'b', { required: true });
    expectError(
      res,
      400,
      /^Column b cannot become required: rows have no value \(30 rows, the first 20 named\)$/,
    );
    expect(res.body.details).toHaveLength(20);
    expect(res.body.details[19].message).toBe('Row at position 958 has no value of b');
  });

  it('is all or nothing: a rename with a refused constraint renames nothing', async () => {
    const table = await makeTable(api, [col('a'), col('b')]);
    await insertMany(api, table.id, [{ a: 'x' }, { a: 'x', b: 'y' }]);
    const before = await storedTable(svc, table.id);
    expectError(await cols.update(table.id, 'a', { name: 'renamed', unique: true }), 400);
    expectError(await cols.update(table.id, 'b', { name: 'renamed', required: true }), 400);
    expect(await storedTable(svc, table.id)).toEqual(before);
  });

  it('answers a change to what the column already is with the columns, writing nothing', async () => {
    const table = await people(1);
    const before = await storedTable(svc, table.id);
    const res = await cols.update(table.id, 'email', {
      name: 'email',
      required: true,
      unique: true,
      type: 'string',
    });
    expectOk(res);
    expect(res.body.data.columns).toEqual([EMAIL, col('visits', 'number')]);
    expect(await storedTable(svc, table.id)).toEqual(before);
  });

  it('records table.column_updated with what changed', async () => {
    const table = await people(1);
    expectOk(await cols.update(table.id, 'visits', { name: 'seen', required: true }));
    const res = await svc.call('GET', '/api/v1/audit-logs', {
      key: tenant.key,
      query: { workspaceId: tenant.workspace.id, action: 'table.column_updated', resourceId: table.id },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    expect(res.body.data[0].metadata).toMatchObject({
      column: 'visits',
      changes: { name: 'seen', required: true },
    });
  });
});

describe('who may change columns', () => {
  it('refuses a read-only key (403), another workspace’s table (404) and a bad table id (400), changing nothing', async () => {
    const table = await people(1);
    const before = await storedTable(svc, table.id);
    const reader = await addPerson(svc.admin, tenant, { permission: 'read' });
    const readCols = columnsApi(svc, reader.key, tenant.workspace.id);
    expectError(await readCols.add(table.id, { name: 'x', type: 'string' }), 403, /permission/);
    expectError(await readCols.update(table.id, 'visits', { type: 'string' }), 403, /permission/);
    const other = await roomyTenant(svc);
    const otherCols = columnsApi(svc, other.key, other.workspace.id);
    expectError(await otherCols.add(table.id, { name: 'x', type: 'string' }), 404, /Table not found/);
    expectError(await otherCols.update(table.id, 'visits', { type: 'string' }), 404, /Table not found/);
    // Naming the table's workspace with a key of another organization: that workspace is out of reach.
    const foreign = columnsApi(svc, other.key, tenant.workspace.id);
    expectError(await foreign.update(table.id, 'visits', { type: 'string' }), 403);
    expectIssues(await cols.update('not-a-uuid', 'visits', { type: 'string' }), [['tableId']]);
    expect(await storedTable(svc, table.id)).toEqual(before);
  });
});

describe('the documented examples', () => {
  it('every request example of the two operations works, in order, on a table like the other examples’', async () => {
    const doc = await (await svc.app.request('/api/openapi.json')).json();
    const table = await makeTable(api, [EMAIL, { name: 'visits', type: 'number' }]);
    expectOk(await api.insert(table.id, { rows: [{ email: 'a@x.org', visits: 1 }, { email: 'b@x.org' }] }));
    const path = doc.paths['/api/v1/tables/{tableId}/columns'];
    let sent = 0;
    for (const method of ['post', 'patch']) {
      const examples = path[method].requestBody.content['application/json'].examples;
      for (const { value } of Object.values<{ value: Record<string, unknown> }>(examples)) {
        const body = { ...value, workspaceId: tenant.workspace.id };
        const res = await svc.call(method.toUpperCase(), `/api/v1/tables/${table.id}/columns`, {
          key: tenant.key,
          body,
        });
        expectOk(res);
        sent++;
      }
    }
    expect(sent).toBe(6);
    expect((await columnsOf(api, table.id)).map((c) => c.name)).toEqual([
      'work_email',
      'visits',
      'stage',
      'notes',
      'tier',
    ]);
  });
});
