// Changing rows through the API: bulk update (PUT rows: data checked against the schema, unique
// columns re-checked, nothing changed on a refusal) and upsert on a unique column.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  allRows,
  expectError,
  expectIssues,
  expectOk,
  expectRowCount,
  makeTable,
  PEOPLE,
  useTablesService,
} from './tables-helpers.ts';

const { api } = useTablesService();

const people = () => makeTable(api, PEOPLE);

describe('PUT rows (bulk update)', () => {
  let table: { id: string };
  let ids: string[];
  beforeAll(async () => {
    table = await people();
    const res = await api.insert(table.id, {
      rows: [
        { email: 'a@x.org', name: 'Ann', age: 30, active: true },
        { email: 'b@x.org', name: 'Bob', age: 40, active: true },
        { email: 'c@x.org', name: 'Cid', age: 50, active: false },
      ],
    });
    ids = res.body.data.rows.map((r: { id: string }) => r.id);
  });

  it('sets the given columns on the rows the filter selects; answers the count and ids', async () => {
    const before = await allRows(api, table.id);
    const res = await api.update(table.id, { active: true }, { age: 99, meta: { v: 1 } });
    expectOk(res);
    expect(res.body.data).toEqual({
      message: expect.any(String),
      updatedCount: 2,
      updatedRowIds: ids.slice(0, 2),
    });
    const after = await allRows(api, table.id);
    expect(after.map((r) => r.data)).toEqual([
      { email: 'a@x.org', name: 'Ann', age: 99, active: true, meta: { v: 1 } },
      { email: 'b@x.org', name: 'Bob', age: 99, active: true, meta: { v: 1 } },
      { email: 'c@x.org', name: 'Cid', age: 50, active: false },
    ]);
    const updatedAt = (r: { updatedAt?: string }) => r.updatedAt;
    expect(updatedAt(after[0] as never)).not.toBe(updatedAt(before[0] as never));
    expect(updatedAt(after[2] as never)).toBe(updatedAt(before[2] as never));
  });

  it('answers 0 when nothing matches', async () => {
    const res = await api.update(table.id, { name: 'Nobody' }, { age: 1 });
    expectOk(res);
    expect(res.body.data).toMatchObject({ updatedCount: 0, updatedRowIds: [] });
  });

  it('clears an optional column with null, and refuses to clear a required one', async () => {
    expectOk(await api.update(table.id, { email: 'c@x.org' }, { name: null }));
    expect((await allRows(api, table.id))[2]?.data).toEqual({ email: 'c@x.org', age: 50, active: false });
    expectIssues(await api.update(table.id, { email: 'c@x.org' }, { email: null }), [['data', 'email']]);
  });

  it('validates data against the schema', async () => {
    expectIssues(await api.update(table.id, { email: 'a@x.org' }, { age: 'old', nick: 'x' }), [
      ['data', 'age'],
      ['data', 'nick'],
    ]);
    expectIssues(await api.update(table.id, { email: 'a@x.org' }, {}), [['data']]);
    expectIssues(await api.update(table.id, { email: 'a@x.org' }, 'x'), [['data']]);
    expectIssues(await api.update(table.id, {}, { age: 1 }), [['filter']]);
  });

  it('refuses one unique value on several rows, and changes nothing', async () => {
    const before = await allRows(api, table.id);
    const res = await api.update(table.id, { age: { gte: 0 } }, { email: 'all@x.org', name: 'All' });
    expectIssues(res, [['data', 'email']]);
    expect(await allRows(api, table.id)).toEqual(before);
  });

  it('moves a unique value: refused onto a held value, and the old value is free afterwards', async () => {
    expectIssues(await api.update(table.id, { email: 'a@x.org' }, { email: 'b@x.org' }), [['data', 'email']]);
    const moved = await api.update(table.id, { email: 'a@x.org' }, { email: 'z@x.org' });
    expectOk(moved);
    expect(moved.body.data.updatedRowIds).toEqual([ids[0]]);
    // Setting a row's own value again is no conflict.
    expectOk(await api.update(table.id, { email: 'z@x.org' }, { email: 'z@x.org' }));
    const again = await api.insert(table.id, { data: { email: 'a@x.org' } });
    expectOk(again);
    expectIssues(await api.insert(table.id, { data: { email: 'z@x.org' } }), [['data', 'email']]);
    expectOk(await api.deleteRows(table.id, { rowIds: [again.body.data.row.id] }));
    expectOk(await api.update(table.id, { email: 'z@x.org' }, { email: 'a@x.org' }));
    await expectRowCount(api, table.id, 3);
  });
});

describe('POST rows/upsert', () => {
  it('refuses a table without a unique column', async () => {
    const table = await makeTable(api, [{ name: 'a', type: 'string' }]);
    expectError(await api.upsert(table.id, { data: { a: 'x' } }), 400, /unique column/);
  });

  it('needs conflictTarget when there are several unique columns, and it must name one of them', async () => {
    const table = await makeTable(api, [
      { name: 'sku', type: 'string', unique: true },
      { name: 'ean', type: 'number', unique: true },
      { name: 'title', type: 'string' },
    ]);
    expectIssues(await api.upsert(table.id, { data: { sku: 's1', ean: 1 } }), [['conflictTarget']]);
    expectIssues(await api.upsert(table.id, { data: { sku: 's1' }, conflictTarget: 'title' }), [
      ['conflictTarget'],
    ]);
    expectIssues(await api.upsert(table.id, { data: { sku: 's1' }, conflictTarget: 'nope' }), [
      ['conflictTarget'],
    ]);
    expectIssues(await api.upsert(table.id, { data: { title: 't' }, conflictTarget: 'sku' }), [
      ['data', 'sku'],
    ]);
    const first = await api.upsert(table.id, {
      data: { sku: 's1', ean: 1, title: 'One' },
      conflictTarget: 'ean',
    });
    expectOk(first);
    const second = await api.upsert(table.id, { data: { ean: 1, title: 'Uno' }, conflictTarget: 'ean' });
    expect(second.body.data.operation).toBe('update');
    expect(second.body.data.row).toMatchObject({
      id: first.body.data.row.id,
      data: { sku: 's1', ean: 1, title: 'Uno' },
    });
    // The update may not take another row's value of the other unique column.
    expectOk(await api.upsert(table.id, { data: { sku: 's2', ean: 2 }, conflictTarget: 'sku' }));
    expectIssues(await api.upsert(table.id, { data: { sku: 's2', ean: 1 }, conflictTarget: 'sku' }), [
      ['data', 'ean'],
    ]);
    await expectRowCount(api, table.id, 2);
  });

  it('inserts a new value (operation insert, no position), then updates that row (operation update)', async () => {
    const table = await people();
    const inserted = await api.upsert(table.id, { data: { email: 'u@x.org', name: 'U', age: 1 } });
    expectOk(inserted);
    expect(Object.keys(inserted.body.data).sort()).toEqual(['message', 'operation', 'row']);
    expect(inserted.body.data.operation).toBe('insert');
    expect(Object.keys(inserted.body.data.row).sort()).toEqual(['createdAt', 'data', 'id', 'updatedAt']);
    await expectRowCount(api, table.id, 1);
    const updated = await api.upsert(table.id, { data: { email: 'u@x.org', age: 2, active: true } });
    expectOk(updated);
    expect(updated.body.data.operation).toBe('update');
    expect(updated.body.data.row.id).toBe(inserted.body.data.row.id);
    expect(updated.body.data.row.data).toEqual({ email: 'u@x.org', name: 'U', age: 2, active: true });
    await expectRowCount(api, table.id, 1);
    // conflictTarget may name the only unique column too.
    const named = await api.upsert(table.id, { data: { email: 'v@x.org' }, conflictTarget: 'email' });
    expect(named.body.data.operation).toBe('insert');
    await expectRowCount(api, table.id, 2);
  });

  it('validates data: the insert as a full row, the update as the columns given', async () => {
    const table = await makeTable(api, [
      { name: 'k', type: 'string', unique: true },
      { name: 'n', type: 'number', required: true },
    ]);
    expectIssues(await api.upsert(table.id, { data: { k: 'a' } }), [['data', 'n']]);
    expectIssues(await api.upsert(table.id, { data: { k: 'a', n: 'x', z: 1 } }), [
      ['data', 'n'],
      ['data', 'z'],
    ]);
    expectIssues(await api.upsert(table.id, { data: { k: 5, n: 1 } }), [['data', 'k']]);
    expectOk(await api.upsert(table.id, { data: { k: 'a', n: 1 } }));
    const update = await api.upsert(table.id, { data: { k: 'a' } });
    expectOk(update);
    expect(update.body.data.row.data).toEqual({ k: 'a', n: 1 });
    expectIssues(await api.upsert(table.id, { data: { k: 'a', n: null } }), [['data', 'n']]);
  });
});
