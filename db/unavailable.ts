// Whether an error means our database cannot be reached right now (a restart, a lost connection),
// as opposed to a statement it refused. The API answers such an error 503; the runner abandons the
// attempt it was recording, for the queue to retry, rather than failing the user's run for it.

// How a lost or refused database connection surfaces: socket errors, the server's shutdown and
// startup refusals (SQLSTATE class 08 and 57P01-57P03), and postgres.js's own connection codes.
const UNAVAILABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  // Not CONNECTION_ENDED/DESTROYED: those mean our own pool was closed, a defect (500) of ours.
  'CONNECTION_CLOSED',
  'CONNECT_TIMEOUT',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
]);

/** Whether err (or what it wraps) says the database cannot be reached right now. */
export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 3) return false;
  const e = err as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === 'string' && UNAVAILABLE.has(e.code)) return true;
  // Node reports a refused connection to a host with several addresses as an AggregateError.
  if (Array.isArray(e.errors) && e.errors.some((x) => isDatabaseUnavailable(x, depth + 1))) return true;
  return isDatabaseUnavailable(e.cause, depth + 1);
}
