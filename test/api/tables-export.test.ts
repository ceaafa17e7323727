// Export through the API (GET /api/v1/tables/{id}/rows/export): CSV (header row, RFC 4180 quoting,
// CRLF, cells as an import reads them, formula-like text defused) and JSONL, the filter as GET …/rows
// takes it, paging through a table of several pages in position order, the download's headers, who
// may export, and an export imported back into another table giving the same rows.
import { beforeAll, describe, expect, it } from 'vitest';
import { addPerson, createTenant } from '../helpers/service.ts';
import { csvOf, exportRows, importCsv } from './tables-csv-helpers.ts';
import {
  allRows,
  expectError,
  expectIssues,
  expectOk,
  makeTable,
  PEOPLE,
  tableAudits,
  tablesApi,
  useTablesService,
} from './tables-helpers.ts';

const { svc, tenant, api } = useTablesService();

const ws = () => tenant.workspace.id;
const people = (name?: string) => makeTable(api, PEOPLE, name);
const exportOf = (tableId: string, q: { format?: string; filter?: unknown } = {}) =>
  exportRows(svc, tenant.key, tableId, { workspaceId: ws(), ...q });

const ROWS = [
  {
    email: 'ann@x.org',
    name: 'Smith, Ann "the first"',
    age: 41.5,
    active: true,
    born: '1983-02-01',
    meta: { tags: ['x', 'y'], n: 1 },
  },
  { email: 'bob@x.org', name: 'two\nlines', age: -3, active: false },
  { email: 'cy@x.org', name: '=HYPERLINK("http://evil")', age: 1e21 },
  { email: 'dee@x.org', name: ' padded ', meta: 'just text' },
  { email: 'eve@x.org', name: '@SUM(A1)', meta: [1, null] },
];

describe('CSV', () => {
  let table: { id: string; name: string };
  beforeAll(async () => {
    table = await people(`export people ü ${Date.now()}`);
    expectOk(await api.insert(table.id, { rows: ROWS }));
  });

  it('writes a header row and one record per row, quoted as RFC 4180 asks, with CRLF line ends', async () => {
    const res = await exportOf(table.id);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    // (json as stored: jsonb orders an object's keys, shorter first.)
    expect(res.text).toBe(
      'email,name,age,active,born,meta\r\n' +
        'ann@x.org,"Smith, Ann ""the first""",41.5,true,1983-02-01T00:00:00.000Z,"{""n"":1,""tags"":[""x"",""y""]}"\r\n' +
        'bob@x.org,"two\nlines",-3,false,,\r\n' +
        // A text cell a spreadsheet would run gets a leading apostrophe; a negative number stays a number.
        `cy@x.org,"'=HYPERLINK(""http://evil"")",1e+21,,,\r\n` +
        'dee@x.org," padded ",,,,"""just text"""\r\n' +
        'eve@x.org,\'@SUM(A1),,,,"[1,null]"\r\n',
    );
  });

  it('names the download after the table, the exact name in filename*', async () => {
    const res = await exportOf(table.id);
    const disposition = res.headers.get('content-disposition') as string;
    expect(disposition).toBe(
      `attachment; filename="${table.name.replace('ü', '_')}.csv"; filename*=UTF-8''${encodeURIComponent(table.name)}.csv`,
    );
    const jsonl = await exportOf(table.id, { format: 'jsonl' });
    expect(jsonl.headers.get('content-disposition')).toContain('.jsonl"');
  });

  it('selects rows with the filter GET …/rows takes', async () => {
    const res = await exportOf(table.id, { filter: { age: { lt: 0 } } });
    expect(res.text).toBe('email,name,age,active,born,meta\r\nbob@x.org,"two\nlines",-3,false,,\r\n');
    const none = await exportOf(table.id, { filter: { email: 'nobody' } });
    expect(none.text).toBe('email,name,age,active,born,meta\r\n');
  });

  it('writes only the header for an empty table', async () => {
    const empty = await people();
    expect((await exportOf(empty.id)).text).toBe('email,name,age,active,born,meta\r\n');
    expect((await exportOf(empty.id, { format: 'jsonl' })).text).toBe('');
  });
});

describe('JSONL', () => {
  it('writes one JSON object per row, the values as stored, keys in column order', async () => {
    const table = await people();
    expectOk(await api.insert(table.id, { rows: ROWS }));
    const res = await exportOf(table.id, { format: 'jsonl' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    const lines = res.text.split('\n');
    expect(lines.pop()).toBe('');
    const stored = (await allRows(api, table.id)).map((r) => r.data);
    expect(lines.map((l) => JSON.parse(l))).toEqual(stored);
    // Text exactly as stored: no apostrophe in JSONL.
    expect(JSON.parse(lines[2] as string).name).toBe('=HYPERLINK("http://evil")');
    expect(Object.keys(JSON.parse(lines[0] as string))).toEqual([
      'email',
      'name',
      'age',
      'active',
      'born',
      'meta',
    ]);
  });
});

describe('a table of several pages', () => {
  it('streams every row once, in position order, with gaps where rows were deleted', async () => {
    const table = await makeTable(api, [{ name: 'i', type: 'number' }]);
    const lines = Array.from({ length: 2500 }, (_, i) => String(i));
    expectOk(await importCsv(svc, tenant.key, table.id, { workspaceId: ws(), csv: csvOf('i', ...lines) }));
    expectOk(await api.deleteRows(table.id, { filter: { i: { in: [0, 999, 1000, 2499] } } }));
    const res = await exportOf(table.id);
    const expected = lines.filter((l) => !['0', '999', '1000', '2499'].includes(l));
    expect(res.text).toBe(csvOf('i', ...expected));
    const filtered = await exportOf(table.id, { filter: { i: { gte: 1990 } }, format: 'jsonl' });
    expect(filtered.text.trim().split('\n')).toHaveLength(509);
  });

  it('reads a page only as the client takes the answer, and stops when it goes away', async () => {
    const table = await makeTable(api, [{ name: 'i', type: 'number' }]);
    expectOk(await api.insert(table.id, { rows: Array.from({ length: 1000 }, (_, i) => ({ i })) }));
    expectOk(await api.insert(table.id, { rows: Array.from({ length: 1000 }, (_, i) => ({ i: i + 1000 })) }));
    const res = await svc.app.request(
      `http://api.test/api/v1/tables/${table.id}/rows/export?workspaceId=${ws()}&format=jsonl`,
      { headers: { 'X-API-Key': tenant.key } },
    );
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value).split('\n')).toHaveLength(1001);
    await reader.cancel();
    // The service goes on answering (no connection or transaction left behind).
    expectOk(await api.query(table.id, { limit: 1 }));
  });
});

describe('round trip', () => {
  it('imports an export into another table as the same rows, and exports them as the same file', async () => {
    const source = await people();
    const csv = csvOf(
      'email,name,age,active,born,meta',
      'a@x.org,"Quote "" and, comma",1.25,true,2020-02-29T12:30:00Z,"{""a"":[1,2,{""b"":null}]}"',
      'b@x.org,"multi\r\nline",,false,,',
      'c@x.org,,-0.5,,1999-12-31,"""text"""',
      'd@x.org,ünïcødé ✓,1e-7,TRUE,,[]',
    );
    expectOk(await importCsv(svc, tenant.key, source.id, { workspaceId: ws(), csv }));
    const first = await exportOf(source.id);
    const copy = await people();
    const again = await importCsv(svc, tenant.key, copy.id, { workspaceId: ws(), csv: first.text });
    expectOk(again);
    expect(again.body.data.insertedCount).toBe(4);
    const data = async (id: string) => (await allRows(api, id)).map((r) => r.data);
    expect(await data(copy.id)).toEqual(await data(source.id));
    expect((await exportOf(copy.id)).text).toBe(first.text);
    expect((await exportOf(copy.id, { format: 'jsonl' })).text).toBe(
      (await exportOf(source.id, { format: 'jsonl' })).text,
    );
  });
});

describe('the audit log', () => {
  it('records each export: who, which table, the format, the filter and the rows written', async () => {
    const table = await people();
    expectOk(await api.insert(table.id, { rows: ROWS }));
    const reader = await addPerson(svc.admin, tenant, { permission: 'read' });
    expect((await exportRows(svc, reader.key, table.id, { workspaceId: ws() })).status).toBe(200);
    const filter = { age: { gt: 0 } };
    expect((await exportOf(table.id, { format: 'jsonl', filter })).status).toBe(200);
    const entries = await tableAudits(svc, tenant, 'table.rows_exported', table.id);
    expect(entries).toHaveLength(2);
    // Newest first.
    expect(entries[0]).toMatchObject({
      actorId: tenant.user.id,
      resourceType: 'table',
      metadata: { name: table.name, format: 'jsonl', filter, rowCount: 2, complete: true },
    });
    expect(entries[1]).toMatchObject({
      actorId: reader.user.id,
      metadata: { format: 'csv', filter: null, rowCount: ROWS.length, complete: true },
    });
  });

  it('records an export the client left before its end as incomplete, with the rows sent', async () => {
    const table = await makeTable(api, [{ name: 'i', type: 'number' }]);
    expectOk(await api.insert(table.id, { rows: Array.from({ length: 1000 }, (_, i) => ({ i })) }));
    expectOk(await api.insert(table.id, { rows: Array.from({ length: 1000 }, (_, i) => ({ i: i + 1000 })) }));
    const res = await svc.app.request(
      `http://api.test/api/v1/tables/${table.id}/rows/export?workspaceId=${ws()}&format=jsonl`,
      { headers: { 'X-API-Key': tenant.key } },
    );
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    await reader.cancel();
    const entries = await tableAudits(svc, tenant, 'table.rows_exported', table.id);
    expect(entries).toHaveLength(1);
    expect(entries[0]?.metadata).toMatchObject({ rowCount: 1000, complete: false });
  });

  it('records nothing for a refused export', async () => {
    const table = await people();
    expectIssues(await exportOf(table.id, { filter: { phone: 1 } }), [['filter', 'phone']]);
    const other = await createTenant(svc.admin);
    expectError(await exportRows(svc, other.key, table.id, { workspaceId: ws() }), 403);
    expect(await tableAudits(svc, tenant, 'table.rows_exported', table.id)).toEqual([]);
  });
});

describe('who may export, and bad requests', () => {
  it('lets a read-only key export; refuses another workspace, another tenant and a foreign table', async () => {
    const table = await people();
    expectOk(await api.insert(table.id, { data: { email: 'a@x.org' } }));
    const reader = await addPerson(svc.admin, tenant, { permission: 'read' });
    const res = await exportRows(svc, reader.key, table.id, { workspaceId: ws() });
    expect(res.status).toBe(200);
    expect(res.text).toContain('a@x.org');

    const other = await createTenant(svc.admin);
    // Their key naming our workspace: no access; in their workspace, our table is not found.
    expectError(await exportRows(svc, other.key, table.id, { workspaceId: ws() }), 403);
    const notFound = await exportRows(svc, other.key, table.id, { workspaceId: other.workspace.id });
    expectError(notFound, 404, /Table not found/);
    expect(notFound.text).not.toContain('a@x.org');
    // Our workspace, their table: not found.
    const theirs = await makeTable(tablesApi(svc, other.key, other.workspace.id), PEOPLE);
    expectError(await exportOf(theirs.id), 404, /Table not found/);
    expectError(await exportOf(crypto.randomUUID()), 404, /Table not found/);
  });

  it('refuses a bad format, filter, workspace or table id with 400', async () => {
    const table = await people();
    expectIssues(await exportOf(table.id, { format: 'xlsx' }), [['format']]);
    expectIssues(await exportOf(table.id, { filter: { phone: 1 } }), [['filter', 'phone']]);
    expectIssues(await exportOf(table.id, { filter: { age: { gt: 'old' } } }), [['filter', 'age', 'gt']]);
    expectIssues(await exportOf(table.id, { filter: [] }), [['filter']]);
    const notJson = await svc.app.request(
      `http://api.test/api/v1/tables/${table.id}/rows/export?workspaceId=${ws()}&filter=%7B`,
      { headers: { 'X-API-Key': tenant.key } },
    );
    expect(notJson.status).toBe(400);
    expectIssues(await exportRows(svc, tenant.key, table.id, { workspaceId: 'nope' }), [['workspaceId']]);
    expectIssues(await exportOf('not-a-uuid'), [['tableId']]);
    const twice = await svc.app.request(
      `http://api.test/api/v1/tables/${table.id}/rows/export?workspaceId=${ws()}&format=csv&format=jsonl`,
      { headers: { 'X-API-Key': tenant.key } },
    );
    expect(twice.status).toBe(400);
  });
});
