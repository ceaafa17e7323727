// Date ranges in query strings (startDate, endDate), shared by the list endpoints that filter by
// time: what a date or date-time names, and where a range given as bare dates begins and ends.
import { z } from 'zod';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATE = /^(\d{4}-\d{2}-\d{2})(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
const FIRST_INSTANT = Date.parse('0001-01-01T00:00:00.000Z');
const LAST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * The instant an ISO date or date-time names, or null. Without an offset it is UTC, not the server's
 * zone. Date.parse rolls impossible days over (Feb 30 is Mar 1), so the day must read back as
 * written; and the instant must lie in years 1 to 9999, which Postgres reads as we write them.
 */
export function toInstant(v: string): Date | null {
  const m = ISO_DATE.exec(v);
  const day = m?.[1];
  if (!m || !day) return null;
  const midnight = Date.parse(`${day}T00:00:00Z`);
  if (Number.isNaN(midnight) || new Date(midnight).toISOString().slice(0, 10) !== day) return null;
  const t = Date.parse(m[2] && !m[5] ? `${v}Z` : v);
  return Number.isNaN(t) || t < FIRST_INSTANT || t > LAST_INSTANT ? null : new Date(t);
}

/** A query parameter holding an ISO 8601 date or date-time that toInstant accepts. */
export const isoDate = z
  .string()
  .regex(ISO_DATE, 'Must be an ISO 8601 date or date-time')
  .refine((v) => toInstant(v) !== null, 'Not a valid date');

/** Where a range starting at a valid isoDate begins: a bare date begins at its midnight (UTC). */
export const rangeStart = (v: string): Date => toInstant(v) as Date;

/** Where a range ending at a valid isoDate ends: a bare date means the whole of that day. */
export const rangeEnd = (v: string): Date => toInstant(DATE_ONLY.test(v) ? `${v}T23:59:59.999Z` : v) as Date;

/** For `.refine` on a parsed query: a range may not end before it starts. */
export const rangeInOrder = (q: { startDate?: Date | undefined; endDate?: Date | undefined }) =>
  !q.startDate || !q.endDate || q.startDate <= q.endDate;
export const RANGE_OUT_OF_ORDER = { path: ['endDate'], message: 'endDate must not be before startDate' };
