// The error answers of the OpenAPI document: the error body every 4xx and 5xx carries, what each
// status means, and the helper that writes an operation's error responses with their examples (the
// messages the service really gives).
import { z } from 'zod';
import { EX, type HeadersObject, type Metering, RATE_LIMIT, REQUEST_ID, ref } from './components.ts';

export const fieldIssue = z
  .object({
    code: z.string().meta({ description: 'The zod issue code, e.g. invalid_type, too_small, custom' }),
    path: z
      .array(z.union([z.string(), z.number()]))
      .meta({ description: 'Where the problem is: field names and array indexes' }),
    message: z.string(),
  })
  .meta({ id: 'FieldIssue', description: 'One problem with one field of the request' });

export const errorBody = z
  .object({
    error: z.string().meta({ description: 'What went wrong, for a person to read' }),
    details: z.array(fieldIssue).optional().meta({
      description:
        'On 400: the field issues (code, path, message); on a 404, the field whose id was not found',
    }),
    requestId: z
      .string()
      .optional()
      .meta({ description: 'On 500: the request id, as logged (also in the X-Request-Id header)' }),
  })
  .meta({
    id: 'Error',
    description: 'Every error answer: `{error}`, with `details` on a 400 that names fields',
  });

export type ErrorStatus =
  | 400
  | 401
  | 402
  | 403
  | 404
  | 405
  | 406
  | 409
  | 410
  | 413
  | 415
  | 422
  | 429
  | 500
  | 502
  | 503;

const ERROR_MEANING: Record<ErrorStatus, string> = {
  400: 'Invalid request: read `details` for the field issues',
  401: 'Missing, unknown or revoked API key',
  402: 'Usage limit exceeded for the billing period',
  403: 'The key may not do this',
  404: 'Not found, or not in the reach of this key',
  405: 'Method not allowed',
  406: 'Not acceptable',
  409: 'Conflict with the current state',
  410: 'The answer to this Idempotency-Key was too large to keep: the work was done and is not repeated',
  413: 'Too large',
  415: 'Unsupported media type',
  422: 'Idempotency-Key reused for a different request',
  429: 'Rate limit exceeded: retry after `Retry-After` seconds',
  500: 'Internal error: report the requestId',
  502: 'A server this request needed (e.g. the rerank server) failed or was too slow',
  503: 'Not ready',
};

const DEFAULT_ERROR: Partial<Record<ErrorStatus, z.infer<typeof errorBody>>> = {
  401: { error: 'Missing API key: send it in the X-API-Key header' },
  413: { error: 'Request body over 10485760 bytes' },
  429: { error: 'Rate limit exceeded: 30 API requests per minute; retry in 2 s' },
  500: { error: 'Internal server error', requestId: EX.requestId },
};

/** A 400 as validation reports it: one issue naming a field. */
export const invalid = (
  path: (string | number)[],
  message: string,
  code = 'custom',
  error = 'Invalid request',
) => ({
  error,
  details: [{ code, path, message }],
});

/** One error example: a bare message, or a whole body; several become named examples. */
export type ErrorExample = string | z.infer<typeof errorBody>;

/** An operation's error answers: each status with its example or examples. */
export type ErrorCases = Partial<Record<ErrorStatus, ErrorExample | ErrorExample[]>>;

/** One error answer: the error body, with its example or named examples. */
interface ErrorResponse {
  description: string;
  headers: HeadersObject;
  content: {
    'application/json': {
      schema: typeof errorBody;
      example?: unknown;
      examples?: Record<string, { summary: string; value: unknown }>;
    };
  };
}

/** An operation's error answers by status (401 and 500 always): typed, so its answers are checked. */
export type ErrorResponses<K extends ErrorStatus> = { [S in K | 401 | 500]: ErrorResponse };

/**
 * The error responses of an operation, each with its examples (the messages the service really
 * gives in that case). 401 and 500 are added to every authenticated operation.
 */
export function errors<C extends ErrorCases>(
  cases: C,
  options: {
    metering: Metering;
    authenticated?: boolean;
    meanings?: Partial<Record<ErrorStatus, string>>;
    /** The statuses that carry Retry-After: 429 always; 409 where an Idempotency-Key is in flight. */
    retryAfter?: ErrorStatus[];
  },
): ErrorResponses<keyof C & ErrorStatus> {
  const all: ErrorCases = {
    ...cases,
    ...(options.authenticated === false
      ? {}
      : { 401: cases[401] ?? [DEFAULT_ERROR[401] as ErrorExample, { error: 'Invalid or revoked API key' }] }),
    500: cases[500] ?? (DEFAULT_ERROR[500] as ErrorExample),
  };
  const out: Record<string, ErrorResponse> = {};
  for (const key of Object.keys(all)
    .map(Number)
    .sort((a, b) => a - b) as ErrorStatus[]) {
    const given = all[key];
    const list = (Array.isArray(given) ? given : [given ?? (DEFAULT_ERROR[key] as ErrorExample)]).map((e) =>
      typeof e === 'string' ? { error: e } : e,
    );
    const rated =
      options.metering === 'execute'
        ? key === 402 || key === 429
        : options.metering !== 'none' && key !== 401 && key !== 500;
    out[key] = {
      description: options.meanings?.[key] ?? ERROR_MEANING[key],
      headers: {
        ...REQUEST_ID,
        ...(rated ? RATE_LIMIT : {}),
        ...(key === 429 || options.retryAfter?.includes(key) ? { 'Retry-After': ref('Retry-After') } : {}),
        ...(key === 410 ? { 'Idempotent-Replayed': ref('Idempotent-Replayed') } : {}),
      },
      content: {
        'application/json':
          list.length === 1
            ? { schema: errorBody, example: list[0] }
            : {
                schema: errorBody,
                examples: Object.fromEntries(
                  list.map((e, i) => [`case${i + 1}`, { summary: e.error, value: e }]),
                ),
              },
      },
    };
  }
  return out as ErrorResponses<keyof C & ErrorStatus>;
}

const asList = (v: ErrorExample | ErrorExample[] | undefined): ErrorExample[] =>
  v === undefined ? [] : Array.isArray(v) ? v : [v];

/** An operation's error cases with those an Idempotency-Key adds (pass `retryAfter: [409]` too). */
export function withIdempotency(cases: ErrorCases): ErrorCases {
  return {
    ...cases,
    400: [
      ...asList(cases[400]),
      {
        error: 'Invalid Idempotency-Key header',
        details: [
          {
            code: 'invalid_format',
            path: ['Idempotency-Key'],
            message: 'Must be 1 to 255 printable ASCII characters',
          },
        ],
      },
    ],
    409: [
      ...asList(cases[409]),
      'A request with this Idempotency-Key is still in progress: retry once it has been answered',
    ],
    410:
      'The request with this Idempotency-Key was answered 200 at 2026-01-15T09:30:00.000Z, but its answer ' +
      '(2097152 bytes) was too large to keep for replays; the work was done and is not repeated. Look its ' +
      'result up (an execution is listed by GET /api/v1/logs), or send a new key to do it again',
    422: [
      'This Idempotency-Key was used with a different request body: send a new key for a new request',
      'This Idempotency-Key was used for POST /api/v1/files: send a new key for a new request',
    ],
  };
}
