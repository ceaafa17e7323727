// Request parsing with zod: a body or query that does not fit its schema is a 400 whose `details`
// are the zod issues (code, path, message); malformed JSON is a 400 too, never a 500.
import type { Context } from 'hono';
import { z } from 'zod';
import { type FieldIssue, invalidField, ServiceError } from '../../db/errors.ts';

export function issuesOf(error: z.ZodError): FieldIssue[] {
  return error.issues.map((i) => ({
    code: i.code,
    path: i.path.map((p) => (typeof p === 'symbol' ? String(p) : p)),
    message: i.message,
  }));
}

function parse<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new ServiceError(400, `Invalid ${what}`, { details: issuesOf(result.error) });
  return result.data;
}

export async function jsonBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S>> {
  const text = await c.req.text();
  let value: unknown;
  try {
    value = text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    throw new ServiceError(400, 'Malformed JSON body');
  }
  return parse(schema, value, 'request body');
}

/** Parses the query string; a parameter given twice is a 400 rather than a silent pick. */
export function queryParams<S extends z.ZodType>(c: Context, schema: S): z.output<S> {
  const all = c.req.queries();
  const single: Record<string, string> = {};
  const repeated: FieldIssue[] = [];
  for (const [k, values] of Object.entries(all)) {
    if (values.length > 1) repeated.push({ code: 'custom', path: [k], message: 'Give this parameter once' });
    single[k] = values[0] as string;
  }
  if (repeated.length) throw new ServiceError(400, 'Invalid query parameters', { details: repeated });
  return parse(schema, single, 'query parameters');
}

/** A whole number in a query string; stricter than z.coerce, which reads '' as 0 and '1e3' as 1000. */
export const wholeNumberParam = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, 'Must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

const uuid = z.uuid();

/** A path parameter that must be a UUID (400 naming it otherwise). */
export function uuidParam(c: Context, param: string, field = param): string {
  const id = c.req.param(param);
  if (!uuid.safeParse(id).success) throw invalidField(field, 'Must be a UUID', 'invalid_format');
  return id as string;
}
