// What every part of the OpenAPI document shares: the error body, the response headers (request id,
// rate limits, Retry-After, idempotency), example identifiers, and the helpers that build responses
// and attach documentation (descriptions, examples) to the zod schemas the routes validate with.
import type { OpenAPIRegistry, ResponseConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

/** Identifiers used across the examples, so one example's ids lead to another's. */
export const EX = {
  organizationId: '0b3e2f6a-5c1d-4e8f-9a7b-1c2d3e4f5a60',
  userId: '1c4f3a7b-6d2e-4f90-8b8c-2d3e4f5a6b71',
  workspaceId: '2d5a4b8c-7e3f-4a01-9c9d-3e4f5a6b7c82',
  workflowId: '3e6b5c9d-8f4a-4b12-8dae-4f5a6b7c8d93',
  executionId: '4f7c6dae-9a5b-4c23-9ebf-5a6b7c8d9ea4',
  logId: '5a8d7ebf-ab6c-4d34-8fc0-6b7c8d9eafb5',
  tableId: '6b9e8fc0-bc7d-4e45-90d1-7c8d9eafb0c6',
  rowId: '7cafa0d1-cd8e-4f56-a1e2-8d9eafb0c1d7',
  rowId2: '8db0b1e2-de9f-4067-b2f3-9eafb0c1d2e8',
  fileId: '9ec1c2f3-efa0-4178-83a4-afb0c1d2e3f9',
  folderId: 'afd2d3a4-f0b1-4289-94b5-b0c1d2e3f4a0',
  knowledgeBaseId: 'b0e3e4b5-a1c2-439a-a5c6-c1d2e3f4a5b1',
  documentId: 'c1f4f5c6-b2d3-44ab-86d7-d2e3f4a5b6c2',
  auditLogId: 'd2a5a6d7-c3e4-45bc-97e8-e3f4a5b6c7d3',
  apiKeyId: 'e3b6b7e8-d4f5-46cd-a8f9-f4a5b6c7d8e4',
  requestId: '6f0d3c55-0b8a-4d0e-9a51-2f9e1d7c4b3a',
  time: '2026-01-15T09:30:00.000Z',
  later: '2026-01-15T09:30:00.412Z',
  contextId: 'e4c7c8f9-e5a6-47de-b9a0-a5b6c7d8e9f5',
  reset: '2026-01-15T09:31:00.000Z',
} as const;

type AnyObject = z.ZodObject<z.ZodRawShape>;

/** A whole number carried as text (validate.ts wholeNumberParam): a string piped into an integer. */
function wholeNumberBounds(field: z.ZodType): { minimum?: number; maximum?: number } | null {
  let s: z.ZodType = field;
  while (s instanceof z.ZodOptional || s instanceof z.ZodDefault) s = s.unwrap() as z.ZodType;
  if (!(s instanceof z.ZodPipe) || !(s.out instanceof z.ZodNumber)) return null;
  const { minValue, maxValue } = s.out;
  return {
    ...(minValue !== null && Number.isSafeInteger(minValue) ? { minimum: minValue } : {}),
    ...(maxValue !== null && Number.isSafeInteger(maxValue) ? { maximum: maxValue } : {}),
  };
}

/**
 * A copy of an object schema with its fields documented (the original, perhaps a store's, is left
 * as it was). Whole numbers carried as text are shown as the integers they stand for.
 */
export function withFieldDocs<S extends AnyObject>(
  schema: S,
  fields: { [K in keyof S['shape']]?: Record<string, unknown> },
): S {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, meta] of Object.entries(fields) as [string, Record<string, unknown>][]) {
    const field = schema.shape[name] as z.ZodType | undefined;
    if (!field) throw new Error(`No field ${name} to document`);
    const bounds = wholeNumberBounds(field);
    const fallback = field instanceof z.ZodDefault ? { default: field._zod.def.defaultValue } : {};
    shape[name] = field.meta(bounds ? { type: 'integer', ...bounds, ...fallback, ...meta } : meta);
  }
  // safeExtend: a schema with refinements across fields keeps them (extend refuses such a schema).
  return schema.safeExtend(shape) as unknown as S;
}

// --- Headers --------------------------------------------------------------------------------------

const header = (description: string, schema: Record<string, unknown>, example: unknown) => ({
  description,
  schema: { ...schema, example },
});

/** Registers the response headers as components; responses refer to them. */
export function registerHeaders(registry: OpenAPIRegistry) {
  registry.registerComponent('headers', 'X-Request-Id', {
    ...header(
      'The id of this request, as logged; send it when reporting a problem',
      { type: 'string' },
      EX.requestId,
    ),
    required: true,
  });
  registry.registerComponent(
    'headers',
    'X-RateLimit-Limit',
    header(
      'Requests per minute of the bucket this request drew from or shows (when billing is enabled)',
      { type: 'integer' },
      30,
    ),
  );
  registry.registerComponent(
    'headers',
    'X-RateLimit-Remaining',
    header('Whole requests that would pass now', { type: 'integer' }, 59),
  );
  registry.registerComponent(
    'headers',
    'X-RateLimit-Reset',
    header('When the bucket is full again, in Unix seconds', { type: 'integer' }, 1768469460),
  );
  registry.registerComponent(
    'headers',
    'Retry-After',
    header('Seconds to wait before one more request would pass', { type: 'integer', minimum: 1 }, 2),
  );
  registry.registerComponent(
    'headers',
    'Idempotent-Replayed',
    header(
      'Present (true) when this is the stored answer to an earlier request with the same Idempotency-Key',
      { type: 'string', enum: ['true'] },
      'true',
    ),
  );
}

export const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
/** The header every answer carries. */
export const REQUEST_ID = { 'X-Request-Id': ref('X-Request-Id') };
export const RATE_LIMIT = {
  'X-RateLimit-Limit': ref('X-RateLimit-Limit'),
  'X-RateLimit-Remaining': ref('X-RateLimit-Remaining'),
  'X-RateLimit-Reset': ref('X-RateLimit-Reset'),
};

/** Response headers written out (not as a zod object). */
export type HeadersObject = Exclude<ResponseConfig['headers'], z.ZodType | undefined>;

/**
 * How an operation meets the rate limits, which decides the headers its answers carry (when billing
 * is enabled): `api` draws from the /api/v1 bucket before the route runs, so the route's answers
 * show it; `shown` shows that bucket without drawing (job polls, usage figures); `execute` judges its
 * sync or async bucket as it admits the execution, so only admitted runs, 402 and 429 show it.
 */
export type Metering = 'none' | 'api' | 'shown' | 'execute';

export interface Answer<S extends z.ZodType = z.ZodType> {
  description: string;
  schema: S;
  example?: unknown;
  /** Several named examples instead of one. */
  examples?: Record<string, { summary: string; value: unknown }>;
}

type Examples = Record<string, { summary: string; value: unknown }>;

/** A success response in JSON, typed by its schema so a route's answers are checked. */
export function ok<S extends z.ZodType>(
  answer: Answer<S>,
  metering: Metering,
  extra: { idempotent?: boolean; headers?: HeadersObject } = {},
): {
  description: string;
  headers: HeadersObject;
  content: { 'application/json': { schema: S; example?: unknown; examples?: Examples } };
} {
  return { ...okHeaders(answer, metering, extra), content: { 'application/json': mediaOf(answer) } };
}

/** A success response of another media type (a file's bytes). */
export function okMedia<S extends z.ZodType>(
  mediaType: string,
  answer: Answer<S>,
  metering: Metering,
  extra: { idempotent?: boolean; headers?: HeadersObject } = {},
) {
  return { ...okHeaders(answer, metering, extra), content: { [mediaType]: mediaOf(answer) } };
}

function okHeaders(
  answer: Answer,
  metering: Metering,
  extra: { idempotent?: boolean; headers?: HeadersObject },
): { description: string; headers: HeadersObject } {
  return {
    description: answer.description,
    headers: {
      ...REQUEST_ID,
      ...(metering !== 'none' ? RATE_LIMIT : {}),
      ...(extra.idempotent ? { 'Idempotent-Replayed': ref('Idempotent-Replayed') } : {}),
      ...extra.headers,
    },
  };
}

const mediaOf = <S extends z.ZodType>(answer: Answer<S>) => ({
  schema: answer.schema,
  ...(answer.example !== undefined ? { example: answer.example } : {}),
  ...(answer.examples ? { examples: answer.examples } : {}),
});

// --- Request pieces -------------------------------------------------------------------------------

/** A JSON request body with its example (or named examples). */
export function jsonBody<S extends z.ZodType>(
  schema: S,
  example: unknown,
  more: { description?: string; examples?: Record<string, { summary: string; value: unknown }> } = {},
) {
  return {
    required: true as const,
    ...(more.description ? { description: more.description } : {}),
    content: {
      'application/json': {
        schema,
        ...(more.examples ? { examples: more.examples } : { example }),
      },
    },
  };
}

/** The Idempotency-Key request header of the operations that do work a retry must not repeat. */
export const idempotencyHeaders = z.object({
  'Idempotency-Key': z
    .string()
    .regex(/^[\x20-\x7e]{1,255}$/)
    .optional()
    .meta({
      description:
        'Makes a retry safe: 1 to 255 printable ASCII characters, unique per request. The same key with ' +
        'the same request within 24 hours replays the first answer (with `Idempotent-Replayed: true`, ' +
        'taking no rate-limit token) instead of doing the work again. The same key for another request ' +
        'is a 422; while the first request is still in flight, a 409 with Retry-After.',
      example: 'order-7fa3-retry-1',
    }),
});

/** The page of a cursor-paged list. */
export const cursorParam = 'The `nextCursor` of the previous page';

/** The 403s of a request that names a workspace it needs read access to. */
export const READ_DENIED = [
  'You do not have access to this workspace',
  'This workspace key belongs to another workspace',
  'Personal API keys are disabled in this workspace; use a workspace key',
];

/** The 403s of a request that names a workspace it needs write access to. */
export const WRITE_DENIED = [
  'This action needs write permission on the workspace',
  'The workspace is archived',
  ...READ_DENIED,
];

/**
 * The 403s of a request for a resource found by its own id that needs write access (a key that
 * cannot act in the resource's workspace at all gets a 404 instead: it learns nothing).
 */
export const RESOURCE_WRITE_DENIED = [
  'This action needs write permission on the workspace',
  'The workspace is archived',
  'Personal API keys are disabled in this workspace; use a workspace key',
];

/** The 429 of the /api/v1 bucket. */
export const API_RATE_LIMITED = 'Rate limit exceeded: 30 API requests per minute; retry in 2 s';

/** The `{success: true, data}` envelope of the /api/v1 answers. */
export const envelope = <S extends z.ZodRawShape>(data: S) =>
  z.object({ success: z.literal(true), data: z.object(data) });
