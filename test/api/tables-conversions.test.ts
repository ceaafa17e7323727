// Changing a column's type (every value converted first, all or nothing, the refusal naming the
// rows that do not convert) and the select column type: its options, its values on every write
// path (insert, batch, bulk update, upsert, filters, the runner's table block), and changes to its
// options.
import { describe, expect, it } from 'vitest';
import { tableBlock } from '../../runner/blocks/table.ts';
import { blockContext } from '../helpers/block-context.ts';
import { columnsApi, expectSlotsExact, insertMany, storedTable } from './columns-helpers.ts';
import {
  allRows,
  expectError,
  expectIssues,
  expectOk,
  makeTable,
  useTablesService,
} from './tables-helpers.ts';

const { svc, tenant, api, apiOf } = useTablesService();
const cols = apiOf(columnsApi);

type Value = unknown;

/** A one-column table of `type` holding `values` (in order), then retyped to `to`: the answer and the values after. */
async function retype(type: string, values: Value[], to: string, more: Record<string, unknown> = {}) {
  const column = { name: 'v', type, ...(type === 'select' ? { options: ['red', 'Green'] } : {}) };
  const table = await makeTable(api, [column, { name: 'i', type: 'number' }]);
  await insertMany(
    api,
    table.id,
    values.map((v, i) => ({ v, i })),
  );
  const res = await cols.update(table.id, 'v', { type: to, ...more });
  const rows = await allRows(api, table.id);
  return { res, table, rows, after: rows.map((r) => r.data.v) };
}

describe('changing a column type', () => {
  it.each([
    ['number', [12, -3.5, 1e21, 0.1], 'string', ['12', '-3.5', '1e+21', '0.1']],
    ['boolean', [true, false], 'string', ['true', 'false']],
    [
      'date',
      ['2024-02-29', '2024-03-01T12:30:00+02:00'],
      'string',
      ['2024-02-29T00:00:00.000Z', '2024-03-01T10:30:00.000Z'],
    ],
    [
      'json',
      ['text', 5, true, { a: [1, 'b'] }, [1, 2]],
      'string',
      ['text', '5', 'true', '{"a":[1,"b"]}', '[1,2]'],
    ],
    ['string', ['12', ' -3.5 ', '1e3', '.5', '+7'], 'number', [12, -3.5, 1000, 0.5, 7]],
    ['json', [5, '6'], 'number', [5, 6]],
    ['string', ['true', ' FALSE ', 'True'], 'boolean', [true, false, true]],
    ['json', [true, 'false'], 'boolean', [true, false]],
    [
      'string',
      ['2024-02-29', '2024-03-01T12:30:00+02:00'],
      'date',
      ['2024-02-29T00:00:00.000Z', '2024-03-01T10:30:00.000Z'],
    ],
    ['string', ['a', '{"x":1}'], 'json', ['a', '{"x":1}']],
    ['number', [1.5], 'json', [1.5]],
    ['date', ['2024-02-29'], 'json', ['2024-02-29T00:00:00.000Z']],
    ['select', ['red', 'GREEN'], 'string', ['red', 'Green']],
    ['string', ['Red', 'green'], 'select', ['red', 'Green']],
  ] as const)('%s %j to %s: %j', async (type, values, to, expected) => {
    const more = to === 'select' ? { options: ['red', 'Green'] } : {};
    const { res, after, table } = await retype(type, [...values], to, more);
    expectOk(res);
    expect(after).toEqual(expected);
    const column = res.body.data.columns[0];
    expect(column.type).toBe(to);
    if (to === 'select')
      expect(column.options).toEqual([
        { id: 'red', name: 'red' },
        { id: 'Green', name: 'Green' },
      ]);
    else expect(column.options).toBeUndefined();
    // New writes take the new type.
    const sample = expected[0];
    expectOk(await api.insert(table.id, { data: { v: sample } }));
  });

  it.each([
    [
      'string',
      ['12', 'many', '4', '12 or so', ''],
      'number',
      [1, 3, 4],
      ['"many" is not a number', '"12 or so" is not a number', '"" is not a number'],
    ],
    ['boolean', [true], 'number', [0], ['true is not a number']],
    ['number', [1, 0], 'boolean', [0, 1], ['1 is not true or false', '0 is not true or false']],
    ['number', [1700000000000], 'date', [0], ['1700000000000 is not an ISO 8601 date']],
    [
      'string',
      ['2024-02-30', 'yesterday'],
      'date',
      [0, 1],
      ['"2024-02-30" is not an ISO 8601 date', '"yesterday" is not an ISO 8601 date'],
    ],
    ['json', [{ a: 1 }, 3], 'number', [0], ['{"a":1} is not a number']],
    ['string', ['red', 'blue'], 'select', [1], ['"blue" is not one of the options']],
  ] as const)(
    '%s %j to %s: refused, naming the rows that do not convert',
    async (type, values, to, bad, messages) => {
      const column = { name: 'v', type };
      const table = await makeTable(api, [column]);
      await insertMany(
        api,
        table.id,
        values.map((v) => ({ v })),
      );
      const rows = await allRows(api, table.id);
      const before = await storedTable(svc, table.id);
      const more = to === 'select' ? { options: ['red', 'Green'] } : {};
      const res = await cols.update(table.id, 'v', { type: to, ...more });
      const details = expectIssues(
        res,
        bad.map((i) => ['rows', rows[i]?.id as string, 'v']),
      );
      expect(details.map((d) => d.message)).toEqual(
        bad.map((i, n) => `Row at position ${i + 1}: ${messages[n]}`),
      );
      expect(details.every((d) => d.code === 'not_convertible')).toBe(true);
      const count = bad.length === 1 ? '1 row' : `${bad.length} rows`;
      expect(res.body.error).toBe(`Column v cannot become ${to}: values do not convert (${count})`);
      expect(await storedTable(svc, table.id)).toEqual(before);
    },
  );

  it('converts a table of several pages all or nothing: a bad value on the last page undoes the first', async () => {
    const table = await makeTable(api, [{ name: 'v', type: 'string' }]);
    const values = Array.from({ length: 2500 }, (_, i) => ({ v: i === 2400 ? 'n/a' : String(i) }));
    await insertMany(api, table.id, values);
    const before = await storedTable(svc, table.id);
    const res = await cols.update(table.id, 'v', { type: 'number' });
    expectError(res, 400, /\(1 row\)$/);
    expect(res.body.details[0].message).toBe('Row at position 2401: "n/a" is not a number');
    expect(await storedTable(svc, table.id)).toEqual(before);
    expectOk(await api.update(table.id, { v: 'n/a' }, { v: '-1' }));
    expectOk(await cols.update(table.id, 'v', { type: 'number' }));
    const page = await api.query(table.id, { filter: { v: { gte: 2398, lt: 2402 } }, sort: { v: 'asc' } });
    expect(page.body.data.rows.map((r: { data: { v: number } }) => r.data.v)).toEqual([2398, 2399, 2401]);
  });

  it('a unique column keeps unique through a type change, refused when converted values repeat', async () => {
    const table = await makeTable(api, [{ name: 'v', type: 'string', unique: true }]);
    await insertMany(api, table.id, [{ v: '5' }, { v: '5.0' }, { v: '6' }]);
    const rows = await allRows(api, table.id);
    const before = await storedTable(svc, table.id);
    const res = await cols.update(table.id, 'v', { type: 'number' });
    expectIssues(res, [['rows', rows[1]?.id as string, 'v']]);
    expect(res.body.error).toBe(
      'Column v cannot become a unique number column: converted values repeat (1 row)',
    );
    expect(await storedTable(svc, table.id)).toEqual(before);
    expectOk(await api.deleteRows(table.id, { rowIds: [rows[1]?.id] }));
    expectOk(await cols.update(table.id, 'v', { type: 'number', name: 'n' }));
    await expectSlotsExact(svc, table.id);
    expectIssues(await api.insert(table.id, { data: { n: 6 } }), [['data', 'n']]);
    expectOk(await api.insert(table.id, { data: { n: 7 } }));
    // To a type that cannot be unique, only by saying so.
    expectIssues(await cols.update(table.id, 'n', { type: 'json' }), [['updates', 'unique']]);
    expectOk(await cols.update(table.id, 'n', { type: 'json', unique: false }));
    await expectSlotsExact(svc, table.id);
    expectOk(await api.insert(table.id, { data: { n: 7 } }));
  });

  it('a required column stays required, and may become so with the change', async () => {
    const table = await makeTable(api, [
      { name: 'v', type: 'string' },
      { name: 'w', type: 'string' },
    ]);
    await insertMany(api, table.id, [{ v: '1' }, { w: 'x' }]);
    const before = await storedTable(svc, table.id);
    expectIssues(await cols.update(table.id, 'v', { type: 'number', required: true }), [
      ['rows', (await allRows(api, table.id))[1]?.id as string, 'v'],
    ]);
    expect(await storedTable(svc, table.id)).toEqual(before);
    expectOk(await cols.update(table.id, 'v', { type: 'number' }));
    expect((await allRows(api, table.id)).map((r) => r.data.v)).toEqual([1, undefined]);
  });
});

describe('select columns', () => {
  const OPTIONS = [
    { id: 'lead', name: 'Lead' },
    { id: 'won', name: 'Won' },
  ];

  it('stores the option id, written as the id or the name in any case, on every write path', async () => {
    const table = await makeTable(api, [
      { name: 'email', type: 'string', unique: true },
      { name: 'stage', type: 'select', options: OPTIONS },
    ]);
    expectOk(await api.insert(table.id, { data: { email: 'a', stage: 'lead' } }));
    expectOk(
      await api.insert(table.id, {
        rows: [
          { email: 'b', stage: 'Won' },
          { email: 'c', stage: 'LEAD' },
        ],
      }),
    );
    expectOk(await api.upsert(table.id, { data: { email: 'd', stage: 'won' } }));
    expect((await allRows(api, table.id)).map((r) => r.data.stage)).toEqual(['lead', 'won', 'lead', 'won']);
    expectOk(await api.update(table.id, { stage: 'Lead' }, { stage: 'Won' }));
    const won = await api.query(table.id, { filter: { stage: { in: ['won'] } } });
    expect(won.body.data.pagination.total).toBe(4);

    const before = await storedTable(svc, table.id);
    const refused = await api.insert(table.id, { data: { email: 'e', stage: 'Lost' } });
    expect(expectIssues(refused, [['data', 'stage']])[0]?.message).toBe(
      'Column stage expects one of its options (Lead, Won)',
    );
    expectIssues(await api.insert(table.id, { rows: [{ email: 'f' }, { email: 'g', stage: ['lead'] }] }), [
      ['rows', 1, 'stage'],
    ]);
    expectIssues(await api.update(table.id, { email: 'a' }, { stage: 'lost' }), [['data', 'stage']]);
    expectIssues(await api.upsert(table.id, { data: { email: 'a', stage: 3 } }), [['data', 'stage']]);
    expectIssues(await api.query(table.id, { filter: { stage: 'lost' } }), [['filter', 'stage']]);
    expectIssues(await api.query(table.id, { filter: { stage: { contains: 'l' } } }), [
      ['filter', 'stage', 'contains'],
    ]);
    expect(await storedTable(svc, table.id)).toEqual(before);
  });

  it('is checked in the runner’s table block as at the endpoints', async () => {
    await makeTable(api, [{ name: 'stage', type: 'select', options: OPTIONS }], 'deals');
    const ctx = { ...blockContext(), db: svc.db, workspaceId: tenant.workspace.id };
    const run = (config: Record<string, unknown>) =>
      tableBlock.run(tableBlock.schema.parse({ table: 'deals', ...config }), ctx);
    const done = await run({ operation: 'insert', data: { stage: 'Won' } });
    expect((done.output as { rows: { data: unknown }[] }).rows[0]?.data).toEqual({ stage: 'won' });
    await expect(run({ operation: 'insert', rows: [{ stage: 'lost' }] })).rejects.toThrow(
      /expects one of its options/,
    );
    await expect(run({ operation: 'update', filter: {}, data: { stage: 'lost' } })).rejects.toThrow(
      /expects one of its options/,
    );
  });

  it('changes options: names and new options freely, refusing to leave out an option rows hold', async () => {
    const table = await makeTable(api, [{ name: 'stage', type: 'select', options: OPTIONS }]);
    await insertMany(api, table.id, [{ stage: 'lead' }, { stage: 'won' }, {}, { stage: 'won' }]);
    const rows = await allRows(api, table.id);
    // Renamed by id, one added by name only (its id is its name), one re-sent by name only (keeps its id).
    const res = await cols.update(table.id, 'stage', {
      options: [{ id: 'lead', name: 'Prospect' }, 'won', 'Lost'],
    });
    expectOk(res);
    expect(res.body.data.columns[0].options).toEqual([
      { id: 'lead', name: 'Prospect' },
      { id: 'won', name: 'won' },
      { id: 'Lost', name: 'Lost' },
    ]);
    expectOk(await api.insert(table.id, { data: { stage: 'prospect' } }));
    expect((await allRows(api, table.id)).map((r) => r.data.stage)).toEqual([
      'lead',
      'won',
      undefined,
      'won',
      'lead',
    ]);

    const before = await storedTable(svc, table.id);
    const refused = await cols.update(table.id, 'stage', { options: ['Prospect', 'Lost'] });
    const details = expectIssues(
      refused,
      [1, 3].map((i) => ['rows', rows[i]?.id as string, 'stage']),
    );
    expect(details[0]?.message).toBe(
      'Row at position 2 holds the option "won", which the new options leave out',
    );
    expect(refused.body.error).toBe(
      'The new options of column stage leave out values that rows hold (2 rows)',
    );
    expect(await storedTable(svc, table.id)).toEqual(before);
    expectOk(await cols.update(table.id, 'stage', { options: ['Prospect', 'won'] }));
    // Options only on a select column, and a select column cannot be unique.
    expectIssues(await cols.update(table.id, 'stage', { unique: true }), [['updates', 'unique']]);
    expectIssues(await cols.update(table.id, 'stage', { type: 'string', options: ['a'] }), [
      ['updates', 'options'],
    ]);
    expectIssues(await cols.update(table.id, 'stage', { options: ['a', 'A'] }), [
      ['updates', 'options', 1, 'name'],
    ]);
    expectIssues(await cols.update(table.id, 'stage', { options: [] }), [['updates', 'options']]);
  });

  it('becomes text as the option names, and a select needs its options to be one', async () => {
    const table = await makeTable(api, [{ name: 'v', type: 'string' }]);
    expectIssues(await cols.update(table.id, 'v', { type: 'select' }), [['updates', 'options']]);
    const created = await api.create({
      name: 'sel',
      schema: { columns: [{ name: 's', type: 'select', options: [] }] },
    });
    expectIssues(created, [['schema', 'columns', 0, 'options']]);
  });
});
