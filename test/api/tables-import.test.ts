// CSV import through the API (POST /api/v1/tables/{id}/rows/import): the header mapped to columns,
// cells read by column type, RFC 4180 quoting, mode all (all or nothing, the first bad rows named by
// line) and mode skip (the good rows in, the bad reported), the row cap and unique values. Who may
// import, the upload itself, retries and a 100 MB file are in tables-import-upload.test.ts.
import { describe, expect, it } from 'vitest';
import { csvOf, type ImportOptions, importCsv } from './tables-csv-helpers.ts';
import {
  allRows,
  expectError,
  expectIssues,
  expectOk,
  expectRowCount,
  makeTable,
  PEOPLE,
  roomyTenant,
  tableAudits,
  tablesApi,
  useTablesService,
} from './tables-helpers.ts';

const { svc, tenant, api } = useTablesService();

const people = () => makeTable(api, PEOPLE);
/** An import by the tenant's owner into its workspace. */
const send = (tableId: string, o: Omit<ImportOptions, 'workspaceId'> & { workspaceId?: string }) =>
  importCsv(svc, tenant.key, tableId, { workspaceId: tenant.workspace.id, ...o });
const dataOf = async (tableId: string) => (await allRows(api, tableId)).map((r) => r.data);

describe('a good file', () => {
  it('maps the header to columns in any order, reads each type, and answers the counts', async () => {
    const table = await people();
    const res = await send(table.id, {
      name: 'people.csv',
      csv: csvOf(
        'meta,born,active,age,email',
        '"{""tags"":[""x""]}",1983-02-01,TRUE,41.5,ann@x.org',
        'null,2024-02-29T10:00:00+02:00,false,-1.5e3,bob@x.org',
        ',,, 7 ,cy@x.org',
      ),
    });
    expectOk(res);
    expect(res.body.data).toEqual({
      tableId: table.id,
      mode: 'all',
      insertedCount: 3,
      skippedCount: 0,
      problems: [],
      mappedColumns: ['email', 'age', 'active', 'born', 'meta'],
      unmappedColumns: ['name'],
      sourceFile: 'people.csv',
      message: '3 rows imported',
    });
    expect(await dataOf(table.id)).toEqual([
      {
        email: 'ann@x.org',
        age: 41.5,
        active: true,
        born: '1983-02-01T00:00:00.000Z',
        meta: { tags: ['x'] },
      },
      // JSON null is no value, as anywhere a row is written.
      { email: 'bob@x.org', age: -1500, active: false, born: '2024-02-29T08:00:00.000Z' },
      // Empty cells are no value (not "", not null): the keys are absent.
      { email: 'cy@x.org', age: 7 },
    ]);
    const rows = await allRows(api, table.id);
    expect(rows.map((r) => r.position)).toEqual([1, 2, 3]);
    await expectRowCount(api, table.id, 3);
  });

  it('reads quoted fields with commas, line breaks (LF and CRLF) and doubled quotes, and names lines right', async () => {
    const table = await people();
    const csv =
      'email,name\r\n' +
      'a@x.org,"Smith, Ann"\r\n' +
      'b@x.org,"two\r\nlines"\r\n' +
      'c@x.org,"say ""hi"""\n' +
      'd@x.org,"lf\nonly"\n' +
      '\n' +
      'e@x.org,""\r\n' +
      'f@x.org,not"ok\r\n' +
      'g@x.org,   spaced   ';
    const res = await send(table.id, { csv, mode: 'skip' });
    expectOk(res);
    // The bad line is line 9: b's field spans lines 3-4, d's 6-7, and line 8 is blank.
    expect(res.body.data.problems).toEqual([
      {
        line: 10,
        code: 'invalid_format',
        message: 'A quote inside an unquoted field: quote the whole field, doubling its quotes',
      },
    ]);
    expect(await dataOf(table.id)).toEqual([
      { email: 'a@x.org', name: 'Smith, Ann' },
      { email: 'b@x.org', name: 'two\r\nlines' },
      { email: 'c@x.org', name: 'say "hi"' },
      { email: 'd@x.org', name: 'lf\nonly' },
      // A quoted empty field is an empty cell too: no value.
      { email: 'e@x.org' },
      { email: 'g@x.org', name: '   spaced   ' },
    ]);
  });

  it('drops a BOM, takes CRLF, LF or CR line ends, trims header names, and needs no final line break', async () => {
    for (const csv of [
      '\uFEFFemail, age \r\na@x.org,1\r\nb@x.org,2\r\n',
      'email,age\na@x.org,1\nb@x.org,2',
      'email,age\ra@x.org,1\rb@x.org,2\r',
    ]) {
      const table = await people();
      expectOk(await send(table.id, { csv }));
      expect(await dataOf(table.id)).toEqual([
        { email: 'a@x.org', age: 1 },
        { email: 'b@x.org', age: 2 },
      ]);
    }
  });

  it('imports nothing, and says so, from a file of only a header', async () => {
    const table = await people();
    const res = await send(table.id, { csv: 'email,name\r\n' });
    expectOk(res);
    expect(res.body.data).toMatchObject({ insertedCount: 0, skippedCount: 0, message: '0 rows imported' });
    await expectRowCount(api, table.id, 0);
  });

  it('takes the fields after the file, and mode in any place', async () => {
    const table = await people();
    const res = await send(table.id, {
      csv: csvOf('email', 'a@x.org', 'a@x.org'),
      mode: 'skip',
      order: 'fileFirst',
    });
    expectOk(res);
    expect(res.body.data).toMatchObject({ mode: 'skip', insertedCount: 1, skippedCount: 1 });
  });

  it('imports more than one batch (2,500 rows), in file order', async () => {
    const table = await makeTable(api, [{ name: 'i', type: 'number', unique: true }]);
    const lines = Array.from({ length: 2500 }, (_, i) => String(i));
    const res = await send(table.id, { csv: csvOf('i', ...lines) });
    expectOk(res);
    expect(res.body.data.insertedCount).toBe(2500);
    const q = await api.query(table.id, { sort: { position: 'desc' }, limit: 1 });
    expect(q.body.data.rows[0]).toMatchObject({ position: 2500, data: { i: 2499 } });
    await expectRowCount(api, table.id, 2500);
  });
});

// One file with a bad row of each kind, and the good rows between them.
const MIXED = csvOf(
  'email,age,active,born,meta',
  'ok1@x.org,1,true,2020-01-01,{}',
  'bad-number@x.org,twelve,,,',
  'bad-count@x.org,1',
  'bad-bool@x.org,,yes,,',
  'ok2@x.org,2,,,',
  'bad-date@x.org,,,2023-02-30,',
  'bad-json@x.org,,,,{nope',
  ',3,,,',
  'ok3@x.org,0x10,,,',
  'ok1@x.org,5,,,',
  'ok4@x.org,"1,000",,,',
  'bad-quote@x.org,"1"2,,,',
  'ok5@x.org,,,,"[1,""two""]"',
);
const MIXED_PROBLEMS = [
  { line: 3, column: 'age', code: 'invalid_type', message: 'Column age expects a number, not "twelve"' },
  { line: 4, code: 'invalid_value', message: 'The line has 2 fields; the header has 5' },
  {
    line: 5,
    column: 'active',
    code: 'invalid_type',
    message: 'Column active expects true or false, not "yes"',
  },
  {
    line: 7,
    column: 'born',
    code: 'invalid_format',
    message: 'Column born expects an ISO 8601 date or date-time',
  },
  { line: 8, column: 'meta', code: 'invalid_type', message: 'Column meta expects JSON, not "{nope"' },
  { line: 9, column: 'email', code: 'required', message: 'Column email is required' },
  { line: 10, column: 'age', code: 'invalid_type', message: 'Column age expects a number, not "0x10"' },
  {
    line: 11,
    column: 'email',
    code: 'not_unique',
    message: 'Unique column email: the same value is given at line 2',
  },
  { line: 12, column: 'age', code: 'invalid_type', message: 'Column age expects a number, not "1,000"' },
  { line: 13, code: 'invalid_format', message: 'Text after the closing quote of a field' },
];

describe('mode all (the default)', () => {
  it('imports nothing from a file with bad rows, and names each by line and column', async () => {
    const table = await people();
    const res = await send(table.id, { csv: MIXED });
    expectError(
      res,
      400,
      /^Nothing imported: the file has \d+ bad rows \(line 3: Column age expects a number/,
    );
    expect(res.body.error).toMatch(/mode=skip/);
    // Checked against the columns after the first bad row; uniqueness only up to it (nothing more is written).
    expect(res.body.details).toEqual(
      MIXED_PROBLEMS.filter((p) => p.code !== 'not_unique').map((p) => ({
        code: p.code,
        path: ['file', p.line, ...(p.column ? [p.column] : [])],
        message: p.message,
      })),
    );
    await expectRowCount(api, table.id, 0);
  });

  it('lists the first 100 problems of a file full of bad rows, and stops there', async () => {
    const table = await people();
    const lines = Array.from({ length: 5000 }, (_, i) => `r${i}@x.org,x${i}`);
    const res = await send(table.id, { csv: csvOf('email,age', ...lines) });
    expectError(res, 400, /100 or more bad rows/);
    expect(res.body.details).toHaveLength(100);
    expect(res.body.details[99].path).toEqual(['file', 101, 'age']);
    await expectRowCount(api, table.id, 0);
  });

  it('keeps nothing when a bad row comes after full batches were written', async () => {
    const table = await makeTable(api, [{ name: 'i', type: 'number', unique: true }]);
    const lines = Array.from({ length: 2500 }, (_, i) => String(i));
    lines.push('7');
    const res = await send(table.id, { csv: csvOf('i', ...lines) });
    expectIssues(res, [['file', 2502, 'i']]);
    expect(res.body.details[0].message).toMatch(
      /^Unique column i already holds this value \(row [0-9a-f-]{36}\)$/,
    );
    await expectRowCount(api, table.id, 0);
  });
});

describe('the audit log', () => {
  it('records an import with its file, mode and counts; an import that keeps nothing leaves no entry', async () => {
    const table = await people();
    const bad = csvOf('email,age', 'a@x.org,1', 'b@x.org,old');
    expectError(await send(table.id, { name: 'bad.csv', csv: bad }), 400);
    expect(await tableAudits(svc, tenant, 'table.rows_imported', table.id)).toEqual([]);
    expectOk(await send(table.id, { name: 'some.csv', csv: bad, mode: 'skip' }));
    const entries = await tableAudits(svc, tenant, 'table.rows_imported', table.id);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      actorId: tenant.user.id,
      resourceType: 'table',
      metadata: { name: table.name, fileName: 'some.csv', mode: 'skip', insertedCount: 1, skippedCount: 1 },
    });
  });
});

describe('mode skip', () => {
  it('imports the good rows and reports the bad ones by line', async () => {
    const table = await people();
    const res = await send(table.id, { csv: MIXED, mode: 'skip' });
    expectOk(res);
    expect(res.body.data).toMatchObject({
      insertedCount: 3,
      skippedCount: 10,
      message: '3 rows imported, 10 skipped',
      problems: MIXED_PROBLEMS,
    });
    expect(await dataOf(table.id)).toEqual([
      { email: 'ok1@x.org', age: 1, active: true, born: '2020-01-01T00:00:00.000Z', meta: {} },
      { email: 'ok2@x.org', age: 2 },
      { email: 'ok5@x.org', meta: [1, 'two'] },
    ]);
    await expectRowCount(api, table.id, 3);
  });

  it('skips a row repeating a unique value the table holds, or one of an earlier batch', async () => {
    const table = await makeTable(api, [
      { name: 'code', type: 'string', unique: true },
      { name: 'n', type: 'number', unique: true },
    ]);
    const existing = await api.insert(table.id, { data: { code: 'taken', n: -1 } });
    const rowId = existing.body.data.row.id;
    const lines = Array.from({ length: 1500 }, (_, i) => `c${i},${i}`);
    lines[1200] = 'c5,99999';
    lines[1300] = 'taken,88888';
    const res = await send(table.id, { csv: csvOf('code,n', ...lines), mode: 'skip' });
    expectOk(res);
    expect(res.body.data.insertedCount).toBe(1498);
    expect(res.body.data.problems).toEqual([
      {
        line: 1202,
        column: 'code',
        code: 'not_unique',
        message: `Unique column code already holds this value (row ${(await allRows(api, table.id))[6]?.id})`,
      },
      {
        line: 1302,
        column: 'code',
        code: 'not_unique',
        message: `Unique column code already holds this value (row ${rowId})`,
      },
    ]);
    await expectRowCount(api, table.id, 1499);
  });

  it('is all or nothing too when the file cannot be read: invalid UTF-8 is a 400, nothing kept', async () => {
    const table = await people();
    const bytes = Buffer.concat([
      Buffer.from('email,name\r\na@x.org,ok\r\nb@x.org,caf'),
      Buffer.from([0xe9, 0x0d, 0x0a]),
    ]);
    expectError(await send(table.id, { csv: bytes, mode: 'skip' }), 400, /not UTF-8/);
    await expectRowCount(api, table.id, 0);
  });
});

describe('the row cap', () => {
  it('counts a row that would pass the cap as bad: skipped in mode skip, fatal in mode all', async () => {
    const capped = await roomyTenant(svc, { maxRowsPerTable: 5 });
    const cappedApi = tablesApi(svc, capped.key, capped.workspace.id);
    const table = await makeTable(cappedApi, [{ name: 'i', type: 'number' }]);
    expectOk(await cappedApi.insert(table.id, { rows: [{ i: 1 }, { i: 2 }] }));
    const file = csvOf('i', '3', '4', 'x', '5', '6', '7');
    const importCapped = (mode: string) =>
      importCsv(svc, capped.key, table.id, { workspaceId: capped.workspace.id, csv: file, mode });

    const all = await importCapped('all');
    expectError(all, 400, /line 4: Column i expects a number/);
    expect(all.body.details.map((d: { path: unknown[] }) => d.path)).toEqual([['file', 4, 'i']]);
    await expectRowCount(cappedApi, table.id, 2);

    const skip = await importCapped('skip');
    expectOk(skip);
    const cap = 'Row limit reached: the table holds at most 5 rows';
    expect(skip.body.data).toMatchObject({
      insertedCount: 3,
      skippedCount: 3,
      problems: [
        { line: 4, column: 'i', code: 'invalid_type', message: 'Column i expects a number, not "x"' },
        { line: 6, code: 'too_big', message: cap },
        { line: 7, code: 'too_big', message: cap },
      ],
    });
    expect((await allRows(cappedApi, table.id)).map((r) => r.data.i)).toEqual([1, 2, 3, 4, 5]);

    // At the cap, mode all refuses the first row over it.
    const full = await importCapped('all');
    expectError(full, 400);
    expect(full.body.details[0]).toEqual({ code: 'too_big', path: ['file', 2], message: cap });
    await expectRowCount(cappedApi, table.id, 5);
  });

  it('fills the table to the cap exactly across batches, a row lost to a unique value leaving room', async () => {
    const capped = await roomyTenant(svc, { maxRowsPerTable: 1500 });
    const cappedApi = tablesApi(svc, capped.key, capped.workspace.id);
    const table = await makeTable(cappedApi, [{ name: 'i', type: 'number', unique: true }]);
    const lines = Array.from({ length: 1600 }, (_, i) => String(i));
    lines[10] = '5';
    const res = await importCsv(svc, capped.key, table.id, {
      workspaceId: capped.workspace.id,
      csv: csvOf('i', ...lines),
      mode: 'skip',
    });
    expectOk(res);
    expect(res.body.data).toMatchObject({ insertedCount: 1500, skippedCount: 100 });
    expect(res.body.data.problems[0]).toMatchObject({ line: 12, code: 'not_unique' });
    expect(res.body.data.problems[1]).toMatchObject({ line: 1503, code: 'too_big' });
    await expectRowCount(cappedApi, table.id, 1500);
  });

  it('holds the cap when imports race each other and single inserts', async () => {
    const capped = await roomyTenant(svc, { maxRowsPerTable: 1500 });
    const cappedApi = tablesApi(svc, capped.key, capped.workspace.id);
    const table = await makeTable(cappedApi, [{ name: 'i', type: 'number' }]);
    const file = csvOf('i', ...Array.from({ length: 1000 }, (_, i) => String(i)));
    const answers = await Promise.all([
      ...[1, 2, 3].map(() =>
        importCsv(svc, capped.key, table.id, { workspaceId: capped.workspace.id, csv: file, mode: 'skip' }),
      ),
      ...Array.from({ length: 10 }, (_, i) => cappedApi.insert(table.id, { data: { i } })),
    ]);
    for (const a of answers) expect([200, 400]).toContain(a.status);
    const imported = answers.slice(0, 3).reduce((n, a) => n + a.body.data.insertedCount, 0);
    const single = answers.slice(3).filter((a) => a.status === 200).length;
    expect(imported + single).toBe(1500);
    await expectRowCount(cappedApi, table.id, 1500);
  });
});

describe('the header', () => {
  it('refuses names the table does not have, naming them, and imports nothing', async () => {
    const table = await people();
    const res = await send(table.id, { csv: csvOf('email,phone,fax', 'a@x.org,1,2'), mode: 'skip' });
    expectIssues(res, [
      ['file', 'header', 'phone'],
      ['file', 'header', 'fax'],
    ]);
    expect(res.body.error).toBe('The header names columns the table does not have: phone, fax');
    await expectRowCount(api, table.id, 0);
  });

  it('refuses a header without a required column, with a name twice, or with an empty name', async () => {
    const table = await people();
    const missing = await send(table.id, { csv: csvOf('name,age', 'Ann,3') });
    expectIssues(missing, [['file', 'header', 'email']]);
    expect(missing.body.error).toBe('The header lacks required columns: email');
    expectIssues(await send(table.id, { csv: csvOf('email,age,age', 'a@x.org,1,2') }), [
      ['file', 'header', 'age'],
    ]);
    expectIssues(await send(table.id, { csv: csvOf('email,,age', 'a@x.org,,1') }), [['file', 'header', 1]]);
    await expectRowCount(api, table.id, 0);
  });

  it('refuses an empty file, and a malformed header row', async () => {
    const table = await people();
    for (const csv of ['', '\uFEFF', '\r\n\r\n']) {
      expectError(await send(table.id, { csv }), 400, /The file is empty: it needs a header row/);
    }
    expectError(
      await send(table.id, { csv: 'email,"na"me\r\n' }),
      400,
      /Line 1: the header row is malformed/,
    );
    await expectRowCount(api, table.id, 0);
  });

  it('refuses a record over the size limit (a quote left open) without reading on', async () => {
    const table = await people();
    const csv = `email,name\r\na@x.org,"${'x'.repeat(1_100_000)}\r\nb@x.org,b\r\n`;
    expectError(await send(table.id, { csv, mode: 'skip' }), 400, /Line 2: a record over 1048576 characters/);
    await expectRowCount(api, table.id, 0);
  });
});
