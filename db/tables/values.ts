// What a table may hold: the column definitions a table is created with, and the values its rows
// may carry, checked and brought to the one form they are stored and compared in (dates as the
// ISO instant, so text order is time order; unique values as a canonical text key).
import { z } from 'zod';
import { type FieldIssue, ServiceError } from '../../errors.ts';
import { parseIsoInstant } from '../instants.ts';
import {
  describeOptions,
  normalizeOptions,
  resolveOption,
  type SelectOption,
  selectOptionsInput,
} from './select-options.ts';

export const COLUMN_TYPES = ['string', 'number', 'boolean', 'date', 'json', 'select'] as const;
export type ColumnType = (typeof COLUMN_TYPES)[number];

export interface ColumnDef {
  name: string;
  type: ColumnType;
  required: boolean;
  unique: boolean;
  /** A select column's options (./select-options.ts); no other type has any. */
  options?: SelectOption[];
}

export const MAX_COLUMNS = 1000;
export const MAX_TABLE_NAME = 128;
export const MAX_COLUMN_NAME = 50;
const COLUMN_NAME = /^[a-z_][a-z0-9_]*$/;

/** Text Postgres can store: no NUL, no lone surrogate (either fails the statement as a 500). */
export const isStorableText = (s: string) => s.isWellFormed() && !s.includes('\u0000');
/** How deep JSON may nest anywhere it is stored: a json column, inputs, a filter. */
export const MAX_JSON_DEPTH = 100;

export const columnDefSchema = z
  .object({
    name: z
      .string()
      .max(MAX_COLUMN_NAME)
      .regex(COLUMN_NAME, 'Column names are lower-case letters, digits and _, not starting with a digit')
      // Assigning it sets an object's prototype instead of a value.
      .refine((n) => n !== '__proto__', 'The name __proto__ is reserved'),
    type: z.enum(COLUMN_TYPES),
    required: z.boolean().optional(),
    unique: z.boolean().optional(),
    options: selectOptionsInput.optional(),
  })
  .strict();

/**
 * The rules a column definition must keep beyond its fields' own: a select column has options
 * (and no other type has any); json and select columns cannot be unique (a select's stored option
 * id would allow one row per option). Issues are added under `path`.
 */
export function columnRuleIssues(
  c: { type: ColumnType; unique?: boolean | undefined; options?: unknown[] | undefined },
  path: (string | number)[],
  add: (issue: { path: (string | number)[]; message: string }) => void,
): void {
  if (c.type === 'select' && !c.options) {
    add({ path: [...path, 'options'], message: 'A select column needs its options' });
  }
  if (c.type !== 'select' && c.options) {
    add({ path: [...path, 'options'], message: 'Only a select column has options' });
  }
  if (c.unique && (c.type === 'json' || c.type === 'select')) {
    add({ path: [...path, 'unique'], message: `A ${c.type} column cannot be unique` });
  }
}

/** The column definitions of a new table: 1 to 1000, names unique, each keeping columnRuleIssues. */
export const tableColumnsSchema = z
  .array(columnDefSchema)
  .min(1)
  .max(MAX_COLUMNS)
  .superRefine((columns, ctx) => {
    const seen = new Set<string>();
    for (const [i, c] of columns.entries()) {
      if (seen.has(c.name)) {
        ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `Duplicate column name ${c.name}` });
      }
      seen.add(c.name);
      columnRuleIssues(c, [i], (issue) => ctx.addIssue({ code: 'custom', ...issue }));
      for (const issue of c.options ? normalizeOptions(c.options).issues : []) {
        ctx.addIssue({ code: 'custom', path: [i, 'options', ...issue.path], message: issue.message });
      }
    }
  });

/** Checks column definitions (issues under `path`) and fills in required and unique. */
export function parseColumns(input: unknown, path: (string | number)[] = ['schema', 'columns']): ColumnDef[] {
  const parsed = tableColumnsSchema.safeParse(input);
  if (!parsed.success) {
    throw new ServiceError(400, 'Invalid table schema', {
      details: parsed.error.issues.map((i) => ({
        code: i.code,
        path: [...path, ...i.path.map((p) => (typeof p === 'symbol' ? String(p) : p))],
        message: i.message,
      })),
    });
  }
  return parsed.data.map((c) => ({
    name: c.name,
    type: c.type,
    required: c.required === true,
    unique: c.unique === true,
    ...(c.options ? { options: normalizeOptions(c.options).options } : {}),
  }));
}

// The form dates are stored in (toISOString's): most values written back arrive in it already, and
// are checked field by field rather than parsed, since rows come in batches of a thousand (read
// digit by digit: a regular expression's match cost more than the rest of a row's checks).
const SEPARATORS: [number, number][] = [4, 7, 10, 13, 16, 19, 23].map((i, k) => [i, '--T::.Z'.charCodeAt(k)]);
const daysInMonth = (y: number, m: number) =>
  m === 2 ? (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(m) ? 30 : 31;

/** The number written by the ASCII digits v[from, to), or -1 if any is not a digit. */
function digits(v: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = v.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/** The fields of YYYY-MM-DDTHH:MM:SS.sssZ, or null when v is not written so. */
function canonicalFields(v: string): number[] | null {
  if (v.length !== 24) return null;
  for (const [i, c] of SEPARATORS) if (v.charCodeAt(i) !== c) return null;
  const fields = [digits(v, 0, 4), digits(v, 5, 7), digits(v, 8, 10), digits(v, 11, 13), digits(v, 14, 16)];
  fields.push(digits(v, 17, 19), digits(v, 20, 23));
  return fields.includes(-1) ? null : fields;
}

/** A date or date-time in its stored form (the UTC instant as toISOString writes it), or null. */
export function storedInstant(v: string): string | null {
  const f = canonicalFields(v);
  if (f) {
    const [y, mo, d, h, mi, s] = f as [number, number, number, number, number, number];
    const valid =
      y >= 1 && mo >= 1 && mo <= 12 && d >= 1 && d <= daysInMonth(y, mo) && h < 24 && mi < 60 && s < 60;
    return valid ? v : null;
  }
  return parseIsoInstant(v)?.toISOString() ?? null;
}

type Checked = { ok: true; value: unknown } | { ok: false; code: string; message: string };

/** A JSON value Postgres stores as given: finite numbers, storable text, keys included. */
function isStorableJson(v: unknown, depth = 0): boolean {
  if (depth > MAX_JSON_DEPTH) return false;
  if (v === null || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v);
  if (typeof v === 'string') return isStorableText(v);
  // Loops rather than every/entries: a batch checks a thousand of these per request.
  if (Array.isArray(v)) {
    for (const x of v) if (!isStorableJson(x, depth + 1)) return false;
    return true;
  }
  if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) if (!isStorableText(k) || !isStorableJson(o[k], depth + 1)) return false;
    return true;
  }
  return false;
}

/** One non-null value checked against its column's type, in its stored form. */
export function checkValue(column: ColumnDef, v: unknown): Checked {
  const wrong = (what: string): Checked => ({
    ok: false,
    code: 'invalid_type',
    message: `Column ${column.name} expects ${what}`,
  });
  switch (column.type) {
    case 'string':
      if (typeof v !== 'string') return wrong('a string');
      return isStorableText(v)
        ? { ok: true, value: v }
        : {
            ok: false,
            code: 'invalid_format',
            message: `Column ${column.name}: text with NUL or lone surrogates`,
          };
    case 'number':
      return typeof v === 'number' && Number.isFinite(v) ? { ok: true, value: v } : wrong('a finite number');
    case 'boolean':
      return typeof v === 'boolean' ? { ok: true, value: v } : wrong('a boolean');
    case 'date': {
      const at = typeof v === 'string' ? storedInstant(v) : null;
      return at
        ? { ok: true, value: at }
        : {
            ok: false,
            code: 'invalid_format',
            message: `Column ${column.name} expects an ISO 8601 date or date-time`,
          };
    }
    case 'json':
      return isStorableJson(v) ? { ok: true, value: v } : wrong('a JSON value');
    case 'select': {
      // Stored as the option's id, whichever way the value named it.
      const id = resolveOption(column.options ?? [], v);
      return id !== null
        ? { ok: true, value: id }
        : {
            ok: false,
            code: 'invalid_value',
            message: `Column ${column.name} expects one of its options (${describeOptions(column.options ?? [])})`,
          };
    }
  }
}

export interface CheckedRow {
  /** The values to store, in stored form; no nulls. Test presence with Object.hasOwn. */
  values: Record<string, unknown>;
  /** Columns given as null: in a patch, the values to remove. */
  cleared: string[];
}

/**
 * Checks one row's data against the columns, adding an issue per offending column under `path`.
 * A full row (`patch` false) must give every required column; a patch gives only the columns it
 * changes, and may clear (null) any but a required one. Unknown columns are refused either way.
 */
export function checkRow(
  columns: readonly ColumnDef[],
  data: unknown,
  path: (string | number)[],
  issues: FieldIssue[],
  patch = false,
): CheckedRow {
  const out: CheckedRow = { values: {}, cleared: [] };
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    issues.push({ code: 'invalid_type', path, message: 'A row is an object of column name to value' });
    return out;
  }
  const given = data as Record<string, unknown>;
  let known = 0;
  for (const column of columns) {
    // Own keys only: a column may be named `constructor`.
    const v = Object.hasOwn(given, column.name) ? given[column.name] : undefined;
    if (v !== undefined) known++;
    if (v === undefined || v === null) {
      if (column.required && (!patch || v === null)) {
        const message = `Column ${column.name} is required`;
        issues.push({ code: 'required', path: [...path, column.name], message });
      } else if (v === null) out.cleared.push(column.name);
      continue;
    }
    const checked = checkValue(column, v);
    if (checked.ok) out.values[column.name] = checked.value;
    else issues.push({ code: checked.code, path: [...path, column.name], message: checked.message });
  }
  // Keys naming no column, looked for only when there are more keys than known ones (this runs
  // for every row of a batch: no set of names is built per row otherwise).
  let keys = 0;
  for (const key in given) if (Object.hasOwn(given, key) && given[key] !== undefined) keys++;
  if (keys > known) {
    const names = new Set(columns.map((c) => c.name));
    for (const key of Object.keys(given)) {
      if (given[key] !== undefined && !names.has(key)) {
        issues.push({ code: 'unrecognized_keys', path: [...path, key], message: `No column named ${key}` });
      }
    }
  }
  return out;
}

/** The canonical text of a stored value of a unique column: equal values, equal keys. */
export function uniqueKey(value: unknown): string {
  return typeof value === 'string' ? value : String(value);
}

/** A 400 listing the issues found (the first hundred; the message counts them all). */
export function invalidRows(issues: FieldIssue[], message = 'Invalid row data'): ServiceError {
  const shown = issues.slice(0, 100);
  const more = issues.length > shown.length ? ` (${issues.length} issues, first ${shown.length} shown)` : '';
  return new ServiceError(400, `${message}${more}`, { details: shown });
}
