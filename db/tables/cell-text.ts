// The text form of a column's values, as a CSV file carries them: read on import (a cell's text to
// the value the column takes) and written on export (a stored value to its text), so a file written
// by an export imports back to the same values. An empty cell is no value; the stored value is
// then checked like any other (values.ts checkRow).
import type { ColumnDef } from './values.ts';

export type CellValue = { ok: true; value: unknown } | { ok: false; code: string; message: string };

// A decimal number as people and spreadsheets write it, exponent allowed; not hex, not Infinity,
// not "1,000" (Number() would take "0x10" and " "; a thousands separator is ambiguous).
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** The start of a value in a message: enough to find it in the file. */
function quoted(text: string): string {
  const shown = text.length > 40 ? `${text.slice(0, 40)}…` : text;
  return JSON.stringify(shown);
}

/**
 * The value a non-empty cell gives its column: numbers in decimal notation, booleans as true or
 * false (any case), dates as ISO 8601 text (checked by the store), json as JSON text; any other
 * type takes the text itself and is checked by the store.
 */
export function cellValue(column: ColumnDef, text: string): CellValue {
  const wrong = (what: string): CellValue => ({
    ok: false,
    code: 'invalid_type',
    message: `Column ${column.name} expects ${what}, not ${quoted(text)}`,
  });
  switch (column.type) {
    case 'number': {
      const t = text.trim();
      const n = DECIMAL.test(t) ? Number(t) : Number.NaN;
      return Number.isFinite(n) ? { ok: true, value: n } : wrong('a number');
    }
    case 'boolean': {
      const t = text.trim().toLowerCase();
      return t === 'true' || t === 'false' ? { ok: true, value: t === 'true' } : wrong('true or false');
    }
    case 'date':
      return { ok: true, value: text.trim() };
    case 'json':
      try {
        return { ok: true, value: JSON.parse(text) };
      } catch {
        return wrong('JSON');
      }
    default:
      return { ok: true, value: text };
  }
}

/** The text of a stored value ('' for none): what cellValue reads back to the same value. */
export function cellText(column: ColumnDef, value: unknown): string {
  if (value === undefined || value === null) return '';
  if (column.type === 'json' || (typeof value === 'object' && value !== null)) return JSON.stringify(value);
  return String(value);
}
