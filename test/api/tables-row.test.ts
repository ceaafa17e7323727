// One row by id: PATCH (a partial update checked against the schema and the unique values, answered
// with the row as it is now) and DELETE (answered with the count, 1), as the original service has
// them; a row of another table, or in a table of another workspace, is not found, and nothing changes.
import { describe, expect, it } from 'vitest';
import { addPerson } from '../helpers/service.ts';
import {
  allRows,
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

/** A people table with two rows: Ann (a@x.org, 30) and Bob (b@x.org). */
async function seeded() {
  const table = await makeTable(api, PEOPLE);
  const res = await api.insert(table.id, {
    rows: [
      { email: 'a@x.org', name: 'Ann', age: 30, meta: { k: 1 } },
      { email: 'b@x.org', name: 'Bob' },
    ],
  });
  expectOk(res);
  const [ann, bob] = res.body.data.rows as { id: string; position: number; createdAt: string }[];
  return { table, ann: ann as NonNullable<typeof ann>, bob: bob as NonNullable<typeof bob> };
}

describe('PATCH /api/v1/tables/{tableId}/rows/{rowId}', () => {
  it('sets the columns given, keeps the others, clears one given null, and answers the row', async () => {
    const { table, ann } = await seeded();
    const res = await api.patchRow(table.id, ann.id, { age: 31, name: null, active: true });
    expectOk(res);
    expect(res.body.data.message).toBe('Row updated successfully');
    const row = res.body.data.row;
    expect(row).toMatchObject({ id: ann.id, position: ann.position, createdAt: ann.createdAt });
    expect(row.data).toEqual({ email: 'a@x.org', age: 31, active: true, meta: { k: 1 } });
    expect(Object.keys(row).sort()).toEqual(['createdAt', 'data', 'id', 'position', 'updatedAt']);
    expect((await api.getRow(table.id, ann.id)).body.data.row).toEqual(row);
    await expectRowCount(api, table.id, 2);
  });

  it('moves a unique value: the old one is free again, the new one taken', async () => {
    const { table, ann, bob } = await seeded();
    expectOk(await api.patchRow(table.id, ann.id, { email: 'ann@x.org' }));
    // Ann's old value is free: Bob may take it; Ann's new one is not.
    expectOk(await api.patchRow(table.id, bob.id, { email: 'a@x.org' }));
    expectIssues(await api.patchRow(table.id, bob.id, { email: 'ann@x.org' }), [['data', 'email']]);
    // Setting a row's own value again is no conflict.
    expectOk(await api.patchRow(table.id, ann.id, { email: 'ann@x.org', age: 1 }));
    const emails = (await allRows(api, table.id)).map((r) => r.data.email);
    expect(emails).toEqual(['ann@x.org', 'a@x.org']);
    // An insert finds the slots where the patches left them.
    expectIssues(await api.insert(table.id, { data: { email: 'a@x.org' } }), [['data', 'email']]);
    expectOk(await api.insert(table.id, { data: { email: 'b@x.org' } }));
  });

  it('refuses bad values, unknown columns, clearing a required column and an empty patch; changes nothing', async () => {
    const { table, ann } = await seeded();
    const before = (await api.getRow(table.id, ann.id)).body.data.row;
    expectIssues(await api.patchRow(table.id, ann.id, { age: 'old', nope: 1 }), [
      ['data', 'age'],
      ['data', 'nope'],
    ]);
    expectIssues(await api.patchRow(table.id, ann.id, { email: null }), [['data', 'email']]);
    expectIssues(await api.patchRow(table.id, ann.id, {}), [['data']]);
    expectIssues(await api.patchRow(table.id, ann.id, 'text'), [['data']]);
    expectIssues(await api.patchRow(table.id, ann.id, { email: 'b@x.org' }), [['data', 'email']]);
    expect((await api.getRow(table.id, ann.id)).body.data.row).toEqual(before);
  });

  it('answers 404 for a row of another table, a row that is gone, and a table of another workspace', async () => {
    const { table, ann } = await seeded();
    const other = await seeded();
    expectError(await api.patchRow(table.id, other.ann.id, { age: 5 }), 404, /^Row not found$/);
    expect((await api.getRow(other.table.id, other.ann.id)).body.data.row.data.age).toBe(30);
    expectOk(await api.deleteRow(table.id, ann.id));
    expectError(await api.patchRow(table.id, ann.id, { age: 5 }), 404, /^Row not found$/);
    const elsewhere = tablesApi(svc, tenant.key, (await roomyTenant(svc)).workspace.id);
    expectError(await elsewhere.patchRow(table.id, other.ann.id, { age: 5 }), 403);
    expectError(await api.patchRow('00000000-0000-4000-8000-000000000000', ann.id, { age: 5 }), 404, /Table/);
  });

  it('answers 404 for a missing row with a unique value given, and leaves that value free', async () => {
    const { table } = await seeded();
    const gone = '00000000-0000-4000-8000-000000000001';
    expectError(await api.patchRow(table.id, gone, { email: 'c@x.org' }), 404, /Row/);
    expectOk(await api.insert(table.id, { data: { email: 'c@x.org' } }));
  });

  it('checks the path and body: 400 for ids that are not UUIDs and a missing workspaceId', async () => {
    const { table, ann } = await seeded();
    expectIssues(await api.patchRow(table.id, 'nope', { age: 1 }), [['rowId']]);
    expectIssues(await api.patchRow('nope', ann.id, { age: 1 }), [['tableId']]);
    const res = await svc.call('PATCH', `/api/v1/tables/${table.id}/rows/${ann.id}`, {
      key: tenant.key,
      body: { data: { age: 1 } },
    });
    expectIssues(res, [['workspaceId']]);
  });
});

describe('DELETE /api/v1/tables/{tableId}/rows/{rowId}', () => {
  it('deletes the row, answers the count, and frees its unique value; positions go on growing', async () => {
    const { table, ann, bob } = await seeded();
    const res = await api.deleteRow(table.id, ann.id);
    expectOk(res);
    expect(res.body.data).toEqual({ message: 'Row deleted successfully', deletedCount: 1 });
    expectError(await api.getRow(table.id, ann.id), 404, /Row/);
    await expectRowCount(api, table.id, 1);
    const again = await api.insert(table.id, { data: { email: 'a@x.org' } });
    expectOk(again);
    expect(again.body.data.row.position).toBe(bob.position + 1);
  });

  it('answers 404 for a row of another table or one already deleted, deleting nothing', async () => {
    const { table, ann } = await seeded();
    const other = await seeded();
    expectError(await api.deleteRow(table.id, other.ann.id), 404, /^Row not found$/);
    await expectRowCount(api, other.table.id, 2);
    expectOk(await api.deleteRow(table.id, ann.id));
    expectError(await api.deleteRow(table.id, ann.id), 404, /^Row not found$/);
    await expectRowCount(api, table.id, 1);
  });

  it('needs the workspace in the query and UUIDs in the path', async () => {
    const { table, ann } = await seeded();
    const res = await svc.call('DELETE', `/api/v1/tables/${table.id}/rows/${ann.id}`, { key: tenant.key });
    expectIssues(res, [['workspaceId']]);
    expectIssues(await api.deleteRow(table.id, 'nope'), [['rowId']]);
    await expectRowCount(api, table.id, 2);
  });
});

describe('access', () => {
  it('lets a read-only member read the row but neither patch nor delete it (403)', async () => {
    const { table, ann } = await seeded();
    const reader = await addPerson(svc.admin, tenant, { permission: 'read' });
    const readerApi = tablesApi(svc, reader.key, tenant.workspace.id);
    expectOk(await readerApi.getRow(table.id, ann.id));
    expectError(await readerApi.patchRow(table.id, ann.id, { age: 1 }), 403);
    expectError(await readerApi.deleteRow(table.id, ann.id), 403);
    expect((await api.getRow(table.id, ann.id)).body.data.row.data.age).toBe(30);
  });

  it("refuses another organization's key with 403", async () => {
    const { table, ann } = await seeded();
    const stranger = tablesApi(svc, (await roomyTenant(svc)).key, tenant.workspace.id);
    expectError(await stranger.patchRow(table.id, ann.id, { age: 1 }), 403);
    expectError(await stranger.deleteRow(table.id, ann.id), 403);
    await expectRowCount(api, table.id, 2);
  });
});
