// Date ranges in query strings (startDate, endDate), shared by the list endpoints that filter by
// time: what a date or date-time names, and where a range given as bare dates begins and ends.
import { z } from 'zod';
import { ISO_DATE, parseIsoInstant } from '../db/instants.ts';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** A query parameter holding an ISO 8601 date or date-time that parseIsoInstant accepts. */
export const isoDate = z
  .string()
  .regex(ISO_DATE, 'Must be an ISO 8601 date or date-time')
  .refine((v) => parseIsoInstant(v) !== null, 'Not a valid date');

/** Where a range starting at a valid isoDate begins: a bare date begins at its midnight (UTC). */
export const rangeStart = (v: string): Date => parseIsoInstant(v) as Date;

/** Where a range ending at a valid isoDate ends: a bare date means the whole of that day. */
export const rangeEnd = (v: string): Date =>
  parseIsoInstant(DATE_ONLY.test(v) ? `${v}T23:59:59.999Z` : v) as Date;

/** For `.refine` on a parsed query: a range may not end before it starts. */
export const rangeInOrder = (q: { startDate?: Date | undefined; endDate?: Date | undefined }) =>
  !q.startDate || !q.endDate || q.startDate <= q.endDate;
export const RANGE_OUT_OF_ORDER = { path: ['endDate'], message: 'endDate must not be before startDate' };
