// Request parsing with zod: a body or query that does not fit its schema is a 400 whose `details`
// are the zod issues (code, path, message); malformed JSON is a 400 too, never a 500.
import type { Context } from 'hono';
import { z } from 'zod';
import { unstorableIssue } from '../../db/unstorable.ts';
import { type FieldIssue, invalidField, issuesOf, ServiceError } from '../../errors.ts';
import { parseJson } from '../../json-errors.ts';
import '../../zod-messages.ts';

// What a 400 says for each part of the request (the validation targets of Hono).
const INVALID: Record<string, string> = {
  json: 'Invalid request body',
  query: 'Invalid query parameters',
  param: 'Invalid request',
};

/** The 400 of a request part that does not fit its schema: `details` are the field issues. */
export function invalidRequest(target: string, problem: z.ZodError | FieldIssue[]): ServiceError {
  const details = Array.isArray(problem) ? problem : issuesOf(problem);
  return new ServiceError(400, INVALID[target] ?? 'Invalid request', { details });
}

function parse<S extends z.ZodType>(schema: S, value: unknown, target: 'json' | 'query'): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw invalidRequest(target, result.error);
  return result.data;
}

// JSON is UTF-8 (RFC 8259): invalid bytes are refused, not silently stored as U+FFFD.
const utf8 = new TextDecoder('utf-8', { fatal: true });

export async function jsonBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S>> {
  return parse(schema, jsonValueOf(utf8Text(await c.req.arrayBuffer())), 'json');
}

/** A request body's text: refused (400) unless it is valid UTF-8. */
export function utf8Text(raw: ArrayBuffer | Uint8Array): string {
  try {
    return utf8.decode(raw);
  } catch {
    throw new ServiceError(400, 'Request body is not valid UTF-8');
  }
}

/** The JSON value of a body's text (an empty body is `{}`), refused (400) if malformed or unstorable. */
export function jsonValueOf(text: string): unknown {
  let value: unknown;
  try {
    value = text.trim() === '' ? {} : parseJson(text);
  } catch (err) {
    // The parse error names the line and column of the first mistake.
    throw new ServiceError(400, `Malformed JSON body: ${(err as Error).message}`);
  }
  refuseUnstorable(value);
  return value;
}

/** Refuses (400) a body holding text Postgres cannot store or nesting too deep, naming where. */
export function refuseUnstorable(value: unknown): void {
  const issue = unstorableIssue(value);
  if (issue) throw new ServiceError(400, 'Invalid request body', { details: [issue] });
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
  const issue = unstorableIssue(single);
  if (issue) throw new ServiceError(400, 'Invalid query parameters', { details: [issue] });
  return parse(schema, single, 'query');
}

/** A whole number in a query string; stricter than z.coerce, which reads '' as 0 and '1e3' as 1000. */
export const wholeNumberParam = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, 'Must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

const uuid = z.uuid();

/** A path parameter that must be a UUID (400 naming it otherwise), for a plain handler: the Router checks the others. */
export function uuidFromPath(c: Context, param: string, field = param): string {
  const id = c.req.param(param);
  if (!uuid.safeParse(id).success) throw invalidField(field, 'Must be a UUID', 'invalid_format');
  return id as string;
}

/**
 * The text fields of a multipart upload (read as the upload streams, so not by the Router), checked:
 * a 400 naming the first field at fault.
 */
export function uploadFields<S extends z.ZodType>(schema: S, fields: Record<string, string>): z.output<S> {
  const r = schema.safeParse(fields);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw invalidField(String(issue?.path[0] ?? 'workspaceId'), issue?.message ?? 'Invalid', issue?.code);
  }
  return r.data;
}
