// The one error type of the service. Stores, routes and admin procedures throw it; the API's error
// middleware and the admin plane's error formatter turn it into a response. Its message is meant
// for the client; anything else that escapes is a 500 with a logged request id.
import type { z } from 'zod';

export interface FieldIssue {
  code: string;
  path: (string | number)[];
  message: string;
}

export class ServiceError extends Error {
  readonly status: 400 | 401 | 402 | 403 | 404 | 409 | 413 | 415 | 422 | 429 | 502 | 503;
  readonly details?: FieldIssue[];
  readonly headers?: Record<string, string>;

  constructor(
    status: ServiceError['status'],
    message: string,
    extra: { details?: FieldIssue[]; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'ServiceError';
    this.status = status;
    if (extra.details) this.details = extra.details;
    if (extra.headers) this.headers = extra.headers;
  }
}

/** A 400 naming one field, shaped like the zod issues that validation failures carry. */
export function invalidField(path: string, message: string, code = 'custom'): ServiceError {
  return new ServiceError(400, 'Invalid request', { details: [{ code, path: path.split('.'), message }] });
}

export const notFound = (what: string) => new ServiceError(404, `${what} not found`);
export const forbidden = (message: string) => new ServiceError(403, message);
export const conflict = (message: string) => new ServiceError(409, message);

/** True for a Postgres unique violation, optionally on one named constraint. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint_name?: string; constraint?: string } | null;
  if (e?.code !== '23505') return false;
  return constraint === undefined || (e.constraint_name ?? e.constraint) === constraint;
}

/** A zod validation failure's issues as our `details` (code, path, message). */
export function issuesOf(error: z.ZodError): FieldIssue[] {
  return error.issues.map((i) => ({
    code: i.code,
    path: i.path.map((p) => (typeof p === 'symbol' ? String(p) : p)),
    message: i.message,
  }));
}
