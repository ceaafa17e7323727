// Filters over rows, per column type and operator: each case selects exactly the expected rows,
// both in a bulk update (PUT rows, which answers the ids it updated) and in a query. Filters that
// name unknown columns or operators, or give operands of the wrong type, are 400s naming them.
import { beforeAll, describe, expect, it } from 'vitest';
import { expectIssues, expectOk, makeTable, useTablesService } from './tables-helpers.ts';

let tableId: string;
let ids: string[];

const ROWS = [
  { s: 'apple', n: 1, b: true, d: '2024-01-01', j: { k: 1 } },
  { s: 'banana', n: 2.5, b: false, d: '2024-06-15T12:00:00Z', j: [1, 2] },
  { s: 'cherry pie', n: -3, b: true, d: '2023-12-31', j: 'text' },
  { s: 'Apple', n: 10 },
  { b: false, d: '2025-01-01', j: { k: 2 } },
  { s: '50% off_now', n: 0 },
];

const { api } = useTablesService();

beforeAll(async () => {
  const table = await makeTable(api, [
    { name: 's', type: 'string' },
    { name: 'n', type: 'number' },
    { name: 'b', type: 'boolean' },
    { name: 'd', type: 'date' },
    { name: 'j', type: 'json' },
    { name: 'tag', type: 'string' },
  ]);
  tableId = table.id;
  const res = await api.insert(tableId, { rows: ROWS });
  expectOk(res);
  ids = res.body.data.rows.map((r: { id: string }) => r.id);
});

const CASES: [string, unknown, number[]][] = [
  // string
  ['string equality', { s: 'apple' }, [0]],
  ['string eq', { s: { eq: 'apple' } }, [0]],
  ['string ne (absent values included)', { s: { ne: 'apple' } }, [1, 2, 3, 4, 5]],
  ['string gt', { s: { gt: 'banana' } }, [2]],
  ['string gte', { s: { gte: 'banana' } }, [1, 2]],
  ['string lt', { s: { lt: 'banana' } }, [0, 3, 5]],
  ['string lte', { s: { lte: 'banana' } }, [0, 1, 3, 5]],
  ['string in', { s: { in: ['apple', 'banana', 'zzz'] } }, [0, 1]],
  ['string nin', { s: { nin: ['apple', 'banana'] } }, [2, 3, 4, 5]],
  ['contains', { s: { contains: 'pp' } }, [0, 3]],
  ['contains across a space', { s: { contains: 'y p' } }, [2]],
  ['contains % literally', { s: { contains: '%' } }, [5]],
  ['contains _ literally', { s: { contains: '_' } }, [5]],
  ['startsWith, case-sensitive', { s: { startsWith: 'a' } }, [0]],
  ['startsWith %', { s: { startsWith: '50%' } }, [5]],
  ['endsWith', { s: { endsWith: 'pie' } }, [2]],
  ['endsWith _', { s: { endsWith: '_now' } }, [5]],
  ['string isNull', { s: { isNull: true } }, [4]],
  ['string isNull false', { s: { isNull: false } }, [0, 1, 2, 3, 5]],
  ['string isNotNull', { s: { isNotNull: true } }, [0, 1, 2, 3, 5]],
  ['string null', { s: null }, [4]],
  // number
  ['number equality', { n: 1 }, [0]],
  ['number zero', { n: 0 }, [5]],
  ['number negative', { n: { eq: -3 } }, [2]],
  ['number ne', { n: { ne: 1 } }, [1, 2, 3, 4, 5]],
  ['number gt', { n: { gt: 1 } }, [1, 3]],
  ['number gt compares as numbers, not text', { n: { gt: 9 } }, [3]],
  ['number gte', { n: { gte: 1 } }, [0, 1, 3]],
  ['number lt', { n: { lt: 2.5 } }, [0, 2, 5]],
  ['number lte', { n: { lte: 2.5 } }, [0, 1, 2, 5]],
  ['number range', { n: { gt: 0, lt: 5 } }, [0, 1]],
  ['number in', { n: { in: [1, 10] } }, [0, 3]],
  ['number nin', { n: { nin: [1, 10] } }, [1, 2, 4, 5]],
  ['number isNull', { n: { isNull: true } }, [4]],
  // boolean
  ['boolean equality', { b: true }, [0, 2]],
  ['boolean false', { b: false }, [1, 4]],
  ['boolean ne', { b: { ne: true } }, [1, 3, 4, 5]],
  ['boolean in', { b: { in: [false] } }, [1, 4]],
  ['boolean nin', { b: { nin: [true] } }, [1, 3, 4, 5]],
  ['boolean isNotNull', { b: { isNotNull: true } }, [0, 1, 2, 4]],
  // date
  ['date equality of a bare day', { d: '2024-01-01' }, [0]],
  ['date eq of the same instant', { d: { eq: '2024-01-01T00:00:00Z' } }, [0]],
  ['date ne', { d: { ne: '2024-01-01' } }, [1, 2, 3, 4, 5]],
  ['date gt', { d: { gt: '2024-01-01' } }, [1, 4]],
  ['date gte', { d: { gte: '2024-01-01T00:00:00+00:00' } }, [0, 1, 4]],
  ['date lt with an offset', { d: { lt: '2024-01-01T01:00:00+02:00' } }, [2]],
  ['date lte with an offset', { d: { lte: '2024-06-15T14:00:00+02:00' } }, [0, 1, 2]],
  ['date in', { d: { in: ['2023-12-31', '2025-01-01T00:00:00.000Z'] } }, [2, 4]],
  ['date nin', { d: { nin: ['2023-12-31', '2025-01-01'] } }, [0, 1, 3, 5]],
  ['date isNull', { d: { isNull: true } }, [3, 5]],
  // json
  ['json object equality', { j: { k: 1 } }, [0]],
  ['json array equality', { j: [1, 2] }, [1]],
  ['json string equality', { j: 'text' }, [2]],
  ['json eq', { j: { eq: { k: 2 } } }, [4]],
  ['json ne', { j: { ne: 'text' } }, [0, 1, 3, 4, 5]],
  ['json in', { j: { in: ['text', [1, 2]] } }, [1, 2]],
  ['json nin', { j: { nin: ['text'] } }, [0, 1, 3, 4, 5]],
  ['json isNull', { j: { isNull: true } }, [3, 5]],
  // several conditions: all must hold
  ['two columns', { s: { startsWith: 'a' }, n: 1 }, [0]],
  ['boolean and number', { b: true, n: { lt: 0 } }, [2]],
  ['value and isNull', { n: { gte: 0 }, b: { isNull: true } }, [3, 5]],
  ['nothing', { n: { gt: 100 } }, []],
];

describe('each operator selects exactly its rows', () => {
  it.each(CASES)('%s', async (name, filter, expected) => {
    const want = expected.map((i) => ids[i]);
    const updated = await api.update(tableId, filter, { tag: name });
    expectOk(updated);
    expect(updated.body.data.updatedRowIds).toEqual(want);
    expect(updated.body.data.updatedCount).toBe(want.length);
    const queried = await api.query(tableId, { filter });
    expectOk(queried);
    expect(queried.body.data.rows.map((r: { id: string }) => r.id)).toEqual(want);
    expect(queried.body.data.pagination.total).toBe(want.length);
    // Only the selected rows carry this case's tag.
    const tagged = await api.query(tableId, { filter: { tag: name } });
    expect(tagged.body.data.rows.map((r: { id: string }) => r.id)).toEqual(want);
  });

  it('deletes by filter exactly the rows a query selects', async () => {
    const extra = await api.insert(tableId, {
      rows: [
        { s: 'tmp one', n: 1000 },
        { s: 'tmp two', n: 1001 },
      ],
    });
    const tmp = extra.body.data.rows.map((r: { id: string }) => r.id);
    const res = await api.deleteRows(tableId, { filter: { s: { startsWith: 'tmp' }, n: { gte: 1000 } } });
    expect(res.body.data.deletedRowIds).toEqual(tmp);
  });
});

describe('invalid filters', () => {
  it.each([
    ['a string operand for a number', { n: { gt: 'five' } }, [['filter', 'n', 'gt']]],
    ['a number operand for a string', { s: { lt: 5 } }, [['filter', 's', 'lt']]],
    ['a text operator on a number', { n: { contains: '1' } }, [['filter', 'n', 'contains']]],
    ['an ordering operator on a boolean', { b: { gt: true } }, [['filter', 'b', 'gt']]],
    [
      'an ordering operator on json',
      { j: { lt: 1, gt: 0 } },
      [
        ['filter', 'j', 'lt'],
        ['filter', 'j', 'gt'],
      ],
    ],
    ['an unknown operator', { n: { between: [1, 2] } }, [['filter', 'n', 'between']]],
    ['an unknown column', { zz: 1 }, [['filter', 'zz']]],
    ['in without an array', { n: { in: 5 } }, [['filter', 'n', 'in']]],
    ['in with a wrong element', { n: { in: [1, 'x'] } }, [['filter', 'n', 'in', 1]]],
    ['a non-date', { d: { gt: 'soon' } }, [['filter', 'd', 'gt']]],
    ['isNull without a boolean', { s: { isNull: 'yes' } }, [['filter', 's', 'isNull']]],
    ['no operator', { n: {} }, [['filter', 'n']]],
    ['equality of the wrong type', { n: '1' }, [['filter', 'n']]],
    [
      'several problems at once',
      { zz: 1, n: { gt: 'x' }, b: 'yes' },
      [
        ['filter', 'zz'],
        ['filter', 'n', 'gt'],
        ['filter', 'b'],
      ],
    ],
  ])('refuses %s, naming it', async (_, filter, paths) => {
    expectIssues(await api.update(tableId, filter, { tag: 'x' }), paths as (string | number)[][]);
    expectIssues(await api.query(tableId, { filter }), paths as (string | number)[][]);
    expectIssues(await api.deleteRows(tableId, { filter }), paths as (string | number)[][]);
  });

  it('refuses a filter that is not an object', async () => {
    expectIssues(await api.query(tableId, { filter: [1] }), [['filter']]);
    expectIssues(await api.update(tableId, 'x', { tag: 'x' }), [['filter']]);
  });
});
