// /api/v1/tables: creating tables (schema rules, names, the answer, maxRows from the live plan, the
// tables cap, duplicate names), listing, reading and deleting them, deleting a column, and who may
// do what. Rows are tested in tables-rows, filters in tables-filters, races in tables-races.
import { beforeAll, describe, expect, it } from 'vitest';
import { PLANS } from '../../db/plans.ts';
import { addPerson, createTenant, type Tenant } from '../helpers/service.ts';
import {
  allRows,
  expectError,
  expectIssues,
  expectOk,
  expectRowCount,
  makeTable,
  roomyTenant,
  type TablesApi,
  tablesApi,
  useTablesService,
} from './tables-helpers.ts';

const { svc, tenant, api } = useTablesService();

const col = (name: string, type = 'string', more: Record<string, unknown> = {}) => ({ name, type, ...more });

async function auditEntries(action: string, resourceId: string) {
  const res = await svc.call('GET', '/api/v1/audit-logs', {
    key: tenant.key,
    query: { workspaceId: tenant.workspace.id, action, resourceId },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as { action: string; actorId: string; resourceType: string }[];
}

describe('POST /api/v1/tables', () => {
  it('creates a table: the Table with rowCount 0, maxRows of the plan, columns filled in', async () => {
    const res = await api.create({
      name: 'Contacts',
      description: 'People we know',
      schema: {
        columns: [
          col('email', 'string', { required: true, unique: true }),
          col('age', 'number'),
          col('active', 'boolean', { required: false }),
          col('born', 'date'),
          col('extra', 'json'),
        ],
      },
    });
    expectOk(res);
    expect(Object.keys(res.body.data).sort()).toEqual(['message', 'table']);
    expect(typeof res.body.data.message).toBe('string');
    const table = res.body.data.table;
    expect(Object.keys(table).sort()).toEqual(
      [
        'createdAt',
        'description',
        'id',
        'maxRows',
        'name',
        'rowCount',
        'schema',
        'updatedAt',
        'workspaceId',
      ].sort(),
    );
    expect(table).toMatchObject({
      name: 'Contacts',
      description: 'People we know',
      rowCount: 0,
      maxRows: PLANS.enterprise.maxRowsPerTable,
      workspaceId: tenant.workspace.id,
    });
    expect(table.schema).toEqual({
      columns: [
        { name: 'email', type: 'string', required: true, unique: true },
        { name: 'age', type: 'number', required: false, unique: false },
        { name: 'active', type: 'boolean', required: false, unique: false },
        { name: 'born', type: 'date', required: false, unique: false },
        { name: 'extra', type: 'json', required: false, unique: false },
      ],
    });
    expect(new Date(table.createdAt).toISOString()).toBe(table.createdAt);
    expect(table.updatedAt).toBe(table.createdAt);
    const get = await api.get(table.id);
    expectOk(get);
    expect(get.body.data).toEqual({ table });
  });

  it('defaults the description to empty and trims the name', async () => {
    const res = await api.create({ name: '  Trimmed  ', schema: { columns: [col('a')] } });
    expectOk(res);
    expect(res.body.data.table).toMatchObject({ name: 'Trimmed', description: '' });
  });

  it('records table.created in the audit log, naming the caller', async () => {
    const table = await makeTable(api, [col('a')]);
    const entries = await auditEntries('table.created', table.id);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      action: 'table.created',
      actorId: tenant.user.id,
      resourceType: 'table',
    });
  });

  it('takes maxRows from the organization plan as it is now, not as it was at creation', async () => {
    const free = await createTenant(svc.admin, { plan: 'free' });
    await svc.admin.quotas.set.mutate({
      orgId: free.org.id,
      api: { requestsPerMinute: 100_000, maxBurst: 200_000 },
    });
    const freeApi = tablesApi(svc, free.key, free.workspace.id);
    const table = await makeTable(freeApi, [col('a')]);
    expect(table.maxRows).toBe(PLANS.free.maxRowsPerTable);
    await svc.admin.orgs.setPlan.mutate({ orgId: free.org.id, plan: 'pro' });
    expect((await freeApi.get(table.id)).body.data.table.maxRows).toBe(PLANS.pro.maxRowsPerTable);
    await svc.admin.quotas.set.mutate({ orgId: free.org.id, maxRowsPerTable: 7 });
    expect((await freeApi.get(table.id)).body.data.table.maxRows).toBe(7);
    expect((await freeApi.list()).body.data.tables[0].maxRows).toBe(7);
  });

  it('accepts column names of the pattern up to 50 characters, and 1000 columns', async () => {
    const names = ['a', '_', '_x9', 'snake_case_2', 'a'.repeat(50)];
    const res = await api.create({ name: 'Names', schema: { columns: names.map((n) => col(n)) } });
    expectOk(res);
    const wide = await api.create({
      name: 'Wide',
      schema: { columns: Array.from({ length: 1000 }, (_, i) => col(`c${i}`, 'number')) },
    });
    expectOk(wide);
    expect(wide.body.data.table.schema.columns).toHaveLength(1000);
  });

  it.each([
    ['an upper-case letter', 'Email'],
    ['a leading digit', '1abc'],
    ['a dash', 'a-b'],
    ['a space', 'a b'],
    ['an empty name', ''],
    ['51 characters', 'a'.repeat(51)],
    ['the reserved name __proto__', '__proto__'],
  ])('refuses a column name with %s', async (_, name) => {
    const res = await api.create({ name: `bad ${name}`, schema: { columns: [col('ok'), col(name)] } });
    expectIssues(res, [['schema', 'columns', 1, 'name']]);
  });

  it('refuses unknown column types, and names each offending column', async () => {
    const res = await api.create({
      name: 'Types',
      schema: { columns: [col('a', 'text'), col('b', 'number'), col('c', 'integer')] },
    });
    expectIssues(res, [
      ['schema', 'columns', 0, 'type'],
      ['schema', 'columns', 2, 'type'],
    ]);
  });

  it('refuses duplicate column names, unique json columns, and non-boolean flags', async () => {
    expectIssues(
      await api.create({ name: 'Dup', schema: { columns: [col('a'), col('b'), col('a', 'number')] } }),
      [['schema', 'columns', 2, 'name']],
    );
    expectIssues(
      await api.create({ name: 'Json', schema: { columns: [col('j', 'json', { unique: true })] } }),
      [['schema', 'columns', 0, 'unique']],
    );
    expectIssues(
      await api.create({ name: 'Flag', schema: { columns: [col('r', 'string', { required: 'yes' })] } }),
      [['schema', 'columns', 0, 'required']],
    );
    expectIssues(
      await api.create({ name: 'Extra', schema: { columns: [col('e', 'string', { uniq: true })] } }),
      [['schema', 'columns', 0]],
    );
  });

  it('needs 1 to 1000 columns', async () => {
    expectIssues(await api.create({ name: 'None', schema: { columns: [] } }), [['schema', 'columns']]);
    const many = Array.from({ length: 1001 }, (_, i) => col(`c${i}`));
    expectIssues(await api.create({ name: 'Many', schema: { columns: many } }), [['schema', 'columns']]);
    expectIssues(await api.create({ name: 'No schema' }), [['schema']]);
  });

  it('needs a table name of 1 to 128 characters', async () => {
    expectIssues(await api.create({ name: '', schema: { columns: [col('a')] } }), [['name']]);
    expectIssues(await api.create({ name: '   ', schema: { columns: [col('a')] } }), [['name']]);
    expectIssues(await api.create({ name: 'n'.repeat(129), schema: { columns: [col('a')] } }), [['name']]);
    expectIssues(await api.create({ schema: { columns: [col('a')] } }), [['name']]);
    expectOk(await api.create({ name: 'n'.repeat(128), schema: { columns: [col('a')] } }));
  });

  it('refuses a second table of one name in a workspace with 409; another workspace may use it', async () => {
    const first = await makeTable(api, [col('a')], 'Orders');
    expectError(await api.create({ name: 'Orders', schema: { columns: [col('b')] } }), 409, /Orders/);
    const other = await svc.admin.workspaces.create.mutate({
      orgId: tenant.org.id,
      ownerId: tenant.user.id,
      name: 'Other',
      skipDefaultWorkflow: true,
    });
    const otherApi = tablesApi(svc, tenant.key, other.id);
    const second = await makeTable(otherApi, [col('a')], 'Orders');
    expect(second.id).not.toBe(first.id);
  });

  it('caps tables per workspace at the plan limit with 403; deleting one frees a place', async () => {
    const capped = await roomyTenant(svc, { maxTables: 2 });
    const cappedApi = tablesApi(svc, capped.key, capped.workspace.id);
    const first = await makeTable(cappedApi, [col('a')]);
    await makeTable(cappedApi, [col('a')]);
    expectError(await cappedApi.create({ name: 'Third', schema: { columns: [col('a')] } }), 403, /2 tables/);
    expectOk(await cappedApi.remove(first.id));
    expectOk(await cappedApi.create({ name: 'Third', schema: { columns: [col('a')] } }));
  });
});

describe('reading and deleting tables', () => {
  let readApi: TablesApi;
  let readTenant: Tenant;
  beforeAll(async () => {
    readTenant = await roomyTenant(svc);
    readApi = tablesApi(svc, readTenant.key, readTenant.workspace.id);
  });

  it('lists a workspace tables, oldest first, with totalCount', async () => {
    const a = await makeTable(readApi, [col('a')], 'Alpha');
    const b = await makeTable(readApi, [col('b', 'number')], 'Beta');
    const res = await readApi.list();
    expectOk(res);
    expect(res.body.data.totalCount).toBe(2);
    expect(res.body.data.tables.map((t: { id: string }) => t.id)).toEqual([a.id, b.id]);
    expect(res.body.data.tables[1]).toEqual((await readApi.get(b.id)).body.data.table);
  });

  it('answers 404 for an unknown table and 400 for an id that is not a UUID', async () => {
    expectError(await readApi.get('00000000-0000-4000-8000-000000000000'), 404, /Table/);
    expectIssues(await readApi.get('nope'), [['tableId']]);
  });

  it('deletes a table with its rows, records table.deleted, and then knows it no more', async () => {
    const table = await makeTable(readApi, [col('a')], 'Doomed');
    expectOk(await readApi.insert(table.id, { rows: [{ a: 'x' }, { a: 'y' }] }));
    const res = await readApi.remove(table.id);
    expectOk(res);
    expect(res.body.data).toMatchObject({ tableId: table.id, message: expect.any(String) });
    expectError(await readApi.get(table.id), 404);
    expectError(await readApi.insert(table.id, { data: { a: 'z' } }), 404);
    expectError(await readApi.remove(table.id), 404);
    const count = await svc.db.query<{ n: number }>(
      'select count(*)::int as n from table_rows where table_id = $1',
      [table.id],
    );
    expect(count[0]?.n).toBe(0);
    const audit = await svc.call('GET', '/api/v1/audit-logs', {
      key: readTenant.key,
      query: { workspaceId: readTenant.workspace.id, action: 'table.deleted', resourceId: table.id },
    });
    expect(audit.body.data).toHaveLength(1);
  });
});

describe('DELETE /api/v1/tables/{tableId}/columns', () => {
  it('removes the column and strips its key from every row', async () => {
    const table = await makeTable(api, [col('a'), col('b', 'number'), col('c', 'string', { unique: true })]);
    expectOk(
      await api.insert(table.id, {
        rows: [{ a: 'x', b: 1, c: 'p' }, { a: 'y', c: 'q' }, { b: 3 }],
      }),
    );
    const res = await api.deleteColumn(table.id, 'b');
    expectOk(res);
    expect(res.body.data.columns).toEqual([
      { name: 'a', type: 'string', required: false, unique: false },
      { name: 'c', type: 'string', required: false, unique: true },
    ]);
    expect((await allRows(api, table.id)).map((r) => r.data)).toEqual([
      { a: 'x', c: 'p' },
      { a: 'y', c: 'q' },
      {},
    ]);
    expect(
      (await api.get(table.id)).body.data.table.schema.columns.map((c: { name: string }) => c.name),
    ).toEqual(['a', 'c']);
    // The column is gone: a value for it is now an unknown column.
    expectIssues(await api.insert(table.id, { data: { a: 'z', b: 2 } }), [['data', 'b']]);
    const audit = await auditEntries('table.column_deleted', table.id);
    expect(audit).toHaveLength(1);
    await expectRowCount(api, table.id, 3);
  });

  it('frees the values of a deleted unique column', async () => {
    const table = await makeTable(api, [
      col('a', 'string', { unique: true }),
      col('b', 'string', { unique: true }),
    ]);
    expectOk(await api.insert(table.id, { data: { a: 'x', b: 'y' } }));
    expectOk(await api.deleteColumn(table.id, 'b'));
    const left = await svc.db.query<{ column_name: string }>(
      'select column_name from table_unique_values where table_id = $1',
      [table.id],
    );
    expect(left.map((r) => r.column_name)).toEqual(['a']);
  });

  it('refuses the last column (400) and an unknown one (404)', async () => {
    const table = await makeTable(api, [col('only')]);
    expectIssues(await api.deleteColumn(table.id, 'only'), [['columnName']]);
    expectError(await api.deleteColumn(table.id, 'nope'), 404, /Column/);
    expectIssues(await api.deleteColumn(table.id, ''), [['columnName']]);
    expect((await api.get(table.id)).body.data.table.schema.columns).toHaveLength(1);
  });
});

describe('access', () => {
  let table: { id: string };
  let other: Tenant;
  let secondWorkspace: string;
  let tableElsewhere: { id: string };
  beforeAll(async () => {
    table = await makeTable(api, [col('a')]);
    other = await roomyTenant(svc);
    secondWorkspace = (
      await svc.admin.workspaces.create.mutate({
        orgId: tenant.org.id,
        ownerId: tenant.user.id,
        name: 'Second',
        skipDefaultWorkflow: true,
      })
    ).id;
    tableElsewhere = await makeTable(tablesApi(svc, tenant.key, secondWorkspace), [col('a')]);
  });

  it('needs a valid key: 401 without one or with a wrong one', async () => {
    const path = `/api/v1/tables/${table.id}`;
    expectError(await svc.call('GET', path, { query: { workspaceId: tenant.workspace.id } }), 401);
    const wrong = await svc.call('GET', path, {
      key: 'sk-service-wrongwrongwrongwrongwrongwrong',
      query: { workspaceId: tenant.workspace.id },
    });
    expectError(wrong, 401);
    const post = await svc.call('POST', '/api/v1/tables', { body: { workspaceId: tenant.workspace.id } });
    expectError(post, 401);
  });

  it("refuses another organization's workspace with 403, and an unknown one with 404", async () => {
    const stranger = tablesApi(svc, other.key, tenant.workspace.id);
    expectError(await stranger.list(), 403);
    expectError(await stranger.get(table.id), 403);
    expectError(await stranger.insert(table.id, { data: { a: 'x' } }), 403);
    expectError(await stranger.create({ name: 'Mine', schema: { columns: [col('a')] } }), 403);
    const nowhere = tablesApi(svc, tenant.key, '00000000-0000-4000-8000-000000000000');
    expectError(await nowhere.list(), 404, /Workspace/);
  });

  it('does not find a table through a workspace it is not in', async () => {
    expectError(await api.get(tableElsewhere.id), 404, /Table/);
    expectError(await api.insert(tableElsewhere.id, { data: { a: 'x' } }), 404, /Table/);
    expectError(await api.query(tableElsewhere.id), 404, /Table/);
    expectError(await api.deleteColumn(tableElsewhere.id, 'a'), 404, /Table/);
    expectError(await api.remove(tableElsewhere.id), 404, /Table/);
    expectError(await api.upsert(tableElsewhere.id, { data: { a: 'x' } }), 404, /Table/);
    expectError(await api.update(tableElsewhere.id, { a: 'x' }, { a: 'y' }), 404, /Table/);
    expect(api.list).toBeDefined();
    const listed = (await api.list()).body.data.tables.map((t: { id: string }) => t.id);
    expect(listed).not.toContain(tableElsewhere.id);
  });

  it('lets a read-only member read but not write (403)', async () => {
    const reader = await addPerson(svc.admin, tenant, { permission: 'read' });
    const readerApi = tablesApi(svc, reader.key, tenant.workspace.id);
    expectOk(await readerApi.list());
    expectOk(await readerApi.get(table.id));
    expectOk(await readerApi.query(table.id));
    expectError(await readerApi.create({ name: 'Nope', schema: { columns: [col('a')] } }), 403);
    expectError(await readerApi.insert(table.id, { data: { a: 'x' } }), 403);
    expectError(await readerApi.update(table.id, { a: 'x' }, { a: 'y' }), 403);
    expectError(await readerApi.upsert(table.id, { data: { a: 'x' } }), 403);
    expectError(await readerApi.deleteRows(table.id, { filter: { a: 'x' } }), 403);
    expectError(await readerApi.deleteColumn(table.id, 'a'), 403);
    expectError(await readerApi.remove(table.id), 403);
  });

  it('lets a writer and a workspace key of the workspace write; a key of another workspace gets 403', async () => {
    const writer = await addPerson(svc.admin, tenant, { permission: 'write' });
    expectOk(await tablesApi(svc, writer.key, tenant.workspace.id).insert(table.id, { data: { a: 'w' } }));
    const { key } = await svc.admin.keys.create.mutate({
      type: 'workspace',
      workspaceId: tenant.workspace.id,
      name: 'automation',
    });
    const keyApi = tablesApi(svc, key, tenant.workspace.id);
    expectOk(await keyApi.insert(table.id, { data: { a: 'k' } }));
    expectOk(await keyApi.create({ name: 'By key', schema: { columns: [col('a')] } }));
    expectError(await tablesApi(svc, key, secondWorkspace).get(tableElsewhere.id), 403);
  });

  it('answers 400 for malformed JSON, a bad workspaceId, and bad ids', async () => {
    const res = await svc.app.request(`/api/v1/tables/${table.id}/rows`, {
      method: 'POST',
      headers: { 'X-API-Key': tenant.key, 'Content-Type': 'application/json' },
      body: '{"workspaceId": ',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: 'Malformed JSON body: Unexpected end of input at line 1, column 17: expected a value',
    });
    expectIssues(await tablesApi(svc, tenant.key, 'not-a-uuid').list(), [['workspaceId']]);
    expectIssues(await tablesApi(svc, tenant.key, 'not-a-uuid').insert(table.id, { data: {} }), [
      ['workspaceId'],
    ]);
    expectIssues(await api.insert('not-a-uuid', { data: { a: 'x' } }), [['tableId']]);
    expectIssues(await api.getRow(table.id, 'not-a-uuid'), [['rowId']]);
  });
});
