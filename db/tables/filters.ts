// Row filters and sort orders of user tables, compiled to parameterised SQL over `table_rows.data`.
// Column names reach the SQL only as parameters (`data->>$n`), after being checked against the
// table's schema; each comparison is typed by its column (numbers as numeric, dates as their
// stored ISO text, json as jsonb), and operands are checked against the column type first.
import type { FieldIssue } from '../../errors.ts';
import { type ColumnDef, type ColumnType, checkValue, invalidRows, isStorableText } from './values.ts';

export const FILTER_OPERATORS = [
  'eq',
  'ne',
  'gt',
  'gte',
  'lt',
  'lte',
  'in',
  'nin',
  'contains',
  'startsWith',
  'endsWith',
  'isNull',
  'isNotNull',
] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

/**
 * Column name to a value (equality; null means "has no value") or to an object of operators, all
 * of which must hold: `{age: {gte: 18, lt: 65}, city: 'Oslo', email: {endsWith: '@x.org'}}`.
 */
export type RowFilter = Record<string, unknown>;

/** `[{column, direction}]`, or `{column: direction}` in key order; createdAt, updatedAt, position too. */
export type RowSort = { column: string; direction?: 'asc' | 'desc' }[] | Record<string, 'asc' | 'desc'>;

const ORDERED = ['gt', 'gte', 'lt', 'lte'] as const;
const TEXT_MATCH = ['contains', 'startsWith', 'endsWith'] as const;
const ALLOWED: Record<ColumnType, ReadonlySet<FilterOperator>> = {
  string: new Set(FILTER_OPERATORS),
  number: new Set(FILTER_OPERATORS.filter((o) => !(TEXT_MATCH as readonly string[]).includes(o))),
  date: new Set(FILTER_OPERATORS.filter((o) => !(TEXT_MATCH as readonly string[]).includes(o))),
  boolean: new Set(['eq', 'ne', 'in', 'nin', 'isNull', 'isNotNull']),
  json: new Set(['eq', 'ne', 'in', 'nin', 'isNull', 'isNotNull']),
  // Operands name an option (by id or name) and compare as its stored id.
  select: new Set(['eq', 'ne', 'in', 'nin', 'isNull', 'isNotNull']),
};
const COMPARE: Record<(typeof ORDERED)[number], string> = { gt: '>', gte: '>=', lt: '<', lte: '<=' };
const MAX_IN = 1000;

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Collects parameters; the SQL names each by its number. */
class Params {
  private readonly names = new Map<string, string>();
  readonly values: unknown[];
  constructor(values: unknown[]) {
    this.values = values;
  }
  add(v: unknown): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
  /** One parameter per column name, however often it is used. */
  column(name: string): string {
    let p = this.names.get(name);
    if (!p) {
      p = this.add(name);
      this.names.set(name, p);
    }
    return p;
  }
}

/** The SQL value of a column in a row, in the type its comparisons and ordering use. */
function field(column: ColumnDef, p: Params): string {
  const n = p.column(column.name);
  switch (column.type) {
    case 'number':
      return `(data->>${n}::text)::numeric`;
    case 'date':
      // Stored as toISOString() text: byte order is time order.
      return `(data->>${n}::text) collate "C"`;
    case 'json':
      return `(data->${n}::text)`;
    default:
      // Booleans compare as their text, 'true' or 'false'.
      return `(data->>${n}::text)`;
  }
}

/** A checked operand as a parameter of the column's comparison type. */
function operand(column: ColumnDef, stored: unknown, p: Params): string {
  switch (column.type) {
    case 'number':
      return `${p.add(String(stored))}::numeric`;
    case 'json':
      return `${p.add(JSON.stringify(stored))}::jsonb`;
    default:
      return `${p.add(String(stored))}::text`;
  }
}

function operandList(column: ColumnDef, stored: unknown[], p: Params): string {
  const texts = stored.map((v) => (column.type === 'json' ? JSON.stringify(v) : String(v)));
  const cast = column.type === 'number' ? '::numeric[]' : column.type === 'json' ? '::jsonb[]' : '';
  return `${p.add(texts)}::text[]${cast}`;
}

function compileOperator(
  column: ColumnDef,
  op: FilterOperator,
  value: unknown,
  p: Params,
  path: (string | number)[],
  issues: FieldIssue[],
): string | null {
  const issue = (message: string, code = 'invalid_type', at = path) => {
    issues.push({ code, path: at, message });
    return null;
  };
  if (!ALLOWED[column.type].has(op)) {
    return issue(`Operator ${op} does not apply to ${column.type} column ${column.name}`, 'invalid_value');
  }
  const lhs = field(column, p);
  if (op === 'isNull' || op === 'isNotNull') {
    if (typeof value !== 'boolean') return issue(`${op} takes true or false`);
    return `${lhs} ${(op === 'isNull') === value ? 'is null' : 'is not null'}`;
  }
  if (op === 'in' || op === 'nin') {
    if (!Array.isArray(value) || value.length > MAX_IN)
      return issue(`${op} takes an array of at most ${MAX_IN} values`);
    const stored: unknown[] = [];
    for (const [i, v] of value.entries()) {
      const checked = v === null ? null : checkValue(column, v);
      if (!checked?.ok) {
        return issue(checked ? checked.message : `${op} values cannot be null`, 'invalid_type', [...path, i]);
      }
      stored.push(checked.value);
    }
    const any = `${lhs} = any(${operandList(column, stored, p)})`;
    return op === 'in' ? any : `not coalesce(${any}, false)`;
  }
  if ((TEXT_MATCH as readonly string[]).includes(op)) {
    if (typeof value !== 'string' || !isStorableText(value)) return issue(`${op} takes a string`);
    const v = p.add(value);
    if (op === 'contains') return `strpos(${lhs}, ${v}::text) > 0`;
    if (op === 'startsWith') return `starts_with(${lhs}, ${v}::text)`;
    return `right(${lhs}, char_length(${v}::text)) = ${v}::text`;
  }
  if (value === null && (op === 'eq' || op === 'ne'))
    return `${lhs} ${op === 'eq' ? 'is null' : 'is not null'}`;
  const checked = value === null ? null : checkValue(column, value);
  if (!checked?.ok) return issue(checked ? checked.message : `${op} cannot compare with null`);
  const rhs = operand(column, checked.value, p);
  if (op === 'eq') return `${lhs} = ${rhs}`;
  if (op === 'ne') return `${lhs} is distinct from ${rhs}`;
  return `${lhs} ${COMPARE[op as (typeof ORDERED)[number]]} ${rhs}`;
}

/** An object read as operators: always on a typed column; on json only when every key is one. */
function operatorsOf(column: ColumnDef, cond: unknown): Record<string, unknown> | null {
  if (!isPlainObject(cond)) return null;
  if (column.type !== 'json') return cond;
  const keys = Object.keys(cond);
  return keys.length > 0 && keys.every((k) => (FILTER_OPERATORS as readonly string[]).includes(k))
    ? cond
    : null;
}

/**
 * The SQL condition a filter stands for ('true' for none or {}), its parameters appended to
 * `params` (so the caller's own come first). An unknown column or operator, or an operand of the
 * wrong type, is a 400 whose details name it under `path`.
 */
export function compileFilter(
  columns: readonly ColumnDef[],
  filter: unknown,
  params: unknown[],
  path: (string | number)[] = ['filter'],
): string {
  const issues: FieldIssue[] = [];
  if (filter === undefined) return 'true';
  if (!isPlainObject(filter))
    throw invalidRows([{ code: 'invalid_type', path, message: 'A filter is an object' }], 'Invalid filter');
  const p = new Params(params);
  const byName = new Map(columns.map((c) => [c.name, c]));
  const parts: string[] = [];
  for (const [name, cond] of Object.entries(filter)) {
    const column = byName.get(name);
    if (!column) {
      issues.push({ code: 'unrecognized_keys', path: [...path, name], message: `No column named ${name}` });
      continue;
    }
    const ops = operatorsOf(column, cond);
    const entries: [string, unknown][] = ops ? Object.entries(ops) : [['eq', cond]];
    if (ops && entries.length === 0) {
      issues.push({ code: 'invalid_value', path: [...path, name], message: 'Give at least one operator' });
    }
    for (const [op, value] of entries) {
      const at = ops ? [...path, name, op] : [...path, name];
      if (!(FILTER_OPERATORS as readonly string[]).includes(op)) {
        issues.push({ code: 'invalid_value', path: at, message: `Unknown operator ${op}` });
        continue;
      }
      const sql = compileOperator(column, op as FilterOperator, value, p, at, issues);
      if (sql) parts.push(`(${sql})`);
    }
  }
  if (issues.length) throw invalidRows(issues, 'Invalid filter');
  return parts.length ? parts.join(' and ') : 'true';
}

const SYSTEM_SORT = new Map([
  ['createdAt', 'created_at'],
  ['updatedAt', 'updated_at'],
  ['position', 'position'],
]);

/**
 * The ORDER BY list a sort stands for; position ascending when none is given, and as the final
 * tie-break always. A schema column wins over the system names (only `position` can clash).
 */
export function compileSort(
  columns: readonly ColumnDef[],
  sort: unknown,
  params: unknown[],
  path: (string | number)[] = ['sort'],
): string {
  if (sort === undefined || sort === null) return 'position asc';
  const issues: FieldIssue[] = [];
  const keys: [string, unknown, (string | number)[]][] = Array.isArray(sort)
    ? sort.map((s, i) =>
        isPlainObject(s) ? [String(s.column), s.direction ?? 'asc', [...path, i]] : ['', null, [...path, i]],
      )
    : isPlainObject(sort)
      ? Object.entries(sort).map(([c, d]) => [c, d, [...path, c]])
      : [];
  if (!Array.isArray(sort) && !isPlainObject(sort)) {
    issues.push({
      code: 'invalid_type',
      path,
      message: 'A sort is [{column, direction}] or {column: direction}',
    });
  }
  const p = new Params(params);
  const byName = new Map(columns.map((c) => [c.name, c]));
  const terms: string[] = [];
  for (const [name, direction, at] of keys) {
    if (direction !== 'asc' && direction !== 'desc') {
      issues.push({ code: 'invalid_value', path: at, message: 'Direction is asc or desc' });
      continue;
    }
    const column = byName.get(name);
    const system = SYSTEM_SORT.get(name);
    if (!column && !system) {
      issues.push({ code: 'invalid_value', path: at, message: `No column named ${name}` });
      continue;
    }
    terms.push(`${column ? field(column, p) : system} ${direction}`);
  }
  if (issues.length) throw invalidRows(issues, 'Invalid sort');
  if (!keys.some(([name]) => name === 'position' && !byName.has('position'))) terms.push('position asc');
  return terms.join(', ');
}
