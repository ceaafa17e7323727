// ISO 8601 dates and date-times as instants, shared by query-string date ranges and table date
// columns: strict about days that do not exist, and UTC when no offset is given.

/** An ISO 8601 date or date-time, with an optional offset. */
export const ISO_DATE = /^(\d{4}-\d{2}-\d{2})(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
const FIRST_INSTANT = Date.parse('0001-01-01T00:00:00.000Z');
const LAST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * The instant an ISO 8601 date or date-time names, or null. Without an offset it is UTC, not the
 * server's zone. Date.parse rolls impossible days over (Feb 30 is Mar 1), so the day must read back
 * as written; and years stay within 1 to 9999, which Postgres reads as we write them and whose
 * toISOString text has four year digits, so it sorts as time does.
 */
export function parseIsoInstant(v: string): Date | null {
  const m = ISO_DATE.exec(v);
  const day = m?.[1];
  if (!m || !day) return null;
  const midnight = Date.parse(`${day}T00:00:00Z`);
  if (Number.isNaN(midnight) || new Date(midnight).toISOString().slice(0, 10) !== day) return null;
  const t = Date.parse(m[2] && !m[5] ? `${v}Z` : v);
  return Number.isNaN(t) || t < FIRST_INSTANT || t > LAST_INSTANT ? null : new Date(t);
}
