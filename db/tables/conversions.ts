// How a stored value becomes a value of another column type when a column's type changes. Every
// conversion ends in the write path's own check (checkValue), so a converted value is one an
// insert of the new type would have stored. What converts (docs/api.md lists the same):
//   to string:  numbers as JavaScript prints them, booleans as true/false, dates as their stored
//               ISO instant, json strings as they are and other json as its JSON text
//   to number:  decimal text (spaces around allowed; 12, -3.5, 1e3), json numbers
//   to boolean: the text true or false (any case, spaces around allowed), json booleans
//   to date:    ISO 8601 text (as a date column takes it), json strings likewise
//   to json:    every value as it is (a date stays its ISO text)
//   to select:  text, numbers and booleans that name an option (its id or name)
//   from select: the option's name, then as text
// Anything else (a boolean to number, a number to date, a json object to number) does not convert.
import { optionName } from './select-options.ts';
import { type ColumnDef, checkValue } from './values.ts';

export type Converted = { ok: true; value: unknown } | { ok: false; message: string };

const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** A value as a refusal quotes it: its JSON, cut short. */
export function quote(v: unknown): string {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/** The value a column of the target type would take for `v`, or why there is none. */
function convertTo(to: ColumnDef, v: unknown): unknown {
  switch (to.type) {
    case 'string':
      if (typeof v === 'string') return v;
      if (typeof v === 'number' || typeof v === 'boolean') return String(v);
      return JSON.stringify(v);
    case 'number':
      if (typeof v === 'number') return v;
      if (typeof v === 'string' && DECIMAL.test(v.trim())) return Number(v.trim());
      return undefined;
    case 'boolean': {
      if (typeof v === 'boolean') return v;
      const text = typeof v === 'string' ? v.trim().toLowerCase() : '';
      return text === 'true' ? true : text === 'false' ? false : undefined;
    }
    case 'date':
      return typeof v === 'string' ? v.trim() : undefined;
    case 'json':
    case 'select':
      // A select target resolves the value's text in checkValue; json takes anything storable.
      return v;
  }
}

const TYPE_NAMES: Record<ColumnDef['type'], string> = {
  string: 'text',
  number: 'a number',
  boolean: 'true or false',
  date: 'an ISO 8601 date',
  json: 'JSON',
  select: 'one of the options',
};

/**
 * Converts a value stored under `from` into the stored form of `to` (see the rules above), or
 * says why it does not convert.
 */
export function convertValue(from: ColumnDef, to: ColumnDef, stored: unknown): Converted {
  // A select column stores option ids; what it means to anything else is the option's name.
  const v =
    from.type === 'select' && typeof stored === 'string' ? optionName(from.options ?? [], stored) : stored;
  const candidate = convertTo(to, v);
  const checked = candidate === undefined ? null : checkValue(to, candidate);
  if (checked?.ok) return { ok: true, value: checked.value };
  return { ok: false, message: `${quote(v)} is not ${TYPE_NAMES[to.type]}` };
}
