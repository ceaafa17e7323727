// OpenAPI: POST /api/workflows/{id}/execute (1), sync and async, with the limits object every
// execute answer carries, and the completion callback an async execution may ask for.
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { PLAN_NAMES } from '../../db/plans.ts';
import type { LimitsObject } from '../../db/usage.ts';
import { executeBody } from '../routes/workflows.ts';
import {
  annotate,
  annotateFields,
  EX,
  errors,
  idempotencyHeaders,
  invalid,
  jsonBody,
  ok,
  RESOURCE_WRITE_DENIED,
  uuidPath,
  withIdempotency,
} from './components.ts';
import { jobMetadata, jobMetadataExample, jobStatus } from './jobs.ts';

const bucket = z.object({
  requestsPerMinute: z.number().int(),
  maxBurst: z.number().int().meta({ description: 'Bucket capacity: twice the per-minute rate' }),
  remaining: z.number().int().meta({ description: 'Whole requests that would pass now' }),
  resetAt: z.iso.datetime().meta({ description: 'When the bucket is full again' }),
});

export const limitsSchema = z
  .object({
    workflowExecutionRateLimit: z.object({ sync: bucket, async: bucket }),
    usage: z.object({
      currentPeriodCost: z.number().meta({ description: 'Dollars spent this billing period' }),
      limit: z.number().meta({ description: 'Dollars the plan allows per period' }),
      plan: z.enum(PLAN_NAMES),
      isExceeded: z.boolean(),
    }),
  })
  .meta({
    id: 'Limits',
    description: 'Rate-limit and spend figures, sync and async apart',
  }) satisfies z.ZodType<LimitsObject>;

export const limitsExample = {
  workflowExecutionRateLimit: {
    sync: { requestsPerMinute: 50, maxBurst: 100, remaining: 99, resetAt: '2026-01-15T09:30:01.200Z' },
    async: { requestsPerMinute: 200, maxBurst: 400, remaining: 400, resetAt: EX.time },
  },
  usage: { currentPeriodCost: 0.015, limit: 5, plan: 'free', isExceeded: false },
};

const runMetadata = z.object({
  duration: z.number().int().meta({ description: 'Milliseconds' }),
  startTime: z.iso.datetime(),
  endTime: z.iso.datetime(),
});

export const completed = z
  .object({
    success: z.literal(true),
    executionId: z.uuid(),
    output: z.unknown().meta({ description: "The workflow's result: the data of its response block" }),
    limits: limitsSchema,
    metadata: runMetadata,
  })
  .meta({ id: 'ExecutionResult', description: 'A sync execution that completed' });

export const failed = z
  .object({
    success: z.literal(false),
    executionId: z.uuid(),
    error: z.string().nullable().meta({ description: 'Why the run failed' }),
    limits: limitsSchema,
    metadata: runMetadata,
  })
  .meta({ id: 'ExecutionFailure', description: 'A sync execution that ran and failed' });

export const accepted = z
  .object({
    success: z.literal(true),
    taskId: z.uuid().meta({ description: 'The job id: poll GET /api/jobs/{taskId}' }),
    status: z.literal('queued'),
    createdAt: z.iso.datetime(),
    links: z.object({ status: z.string().meta({ description: 'Where to poll' }) }),
    limits: limitsSchema,
  })
  .meta({ id: 'AsyncExecutionAccepted', description: 'The acknowledgement of an async execution' });

export const stillRunning = z
  .object({
    success: z.literal(false),
    error: z.string(),
    taskId: z.uuid(),
    status: jobStatus,
    output: z.unknown().optional(),
    metadata: jobMetadata.optional(),
    limits: limitsSchema,
  })
  .meta({
    id: 'ExecutionStillRunning',
    description: 'A sync execution still running when the wait (SYNC_WAIT_TIMEOUT_MS) ended: poll its job',
  });

annotateFields(executeBody, {
  inputs: {
    description: "The workflow's inputs, checked against its declared inputs (400 with details otherwise)",
  },
  input: { description: 'The inputs under the name clients of the original API use' },
  async: { description: 'true: answer 202 at once with a job to poll; default false (wait for the result)' },
  callbackUrl: {
    description:
      'Async only: an absolute http(s) URL (at most 2048 characters, no credentials) that is POSTed the ' +
      'Job record, signed, when the execution ends (see the `completion` callback). Private, loopback, ' +
      'link-local and metadata addresses are refused unless the operator allow-lists them (HTTP_ALLOW_LIST): ' +
      'a literal address at once (400), a host name at each delivery, on what it then resolves to',
    example: 'https://example.com/hooks/workflow-done',
  },
});
annotate(executeBody, {
  description:
    'The inputs as `inputs` (or, for clients of the original API, as `input` or the body itself), `async`, ' +
    'and for async executions an optional `callbackUrl`',
});

const executeHeaders = idempotencyHeaders.extend({
  'X-Execution-Mode': z
    .enum(['sync', 'async'])
    .optional()
    .meta({ description: '`async` does what `"async": true` does (original API clients)', example: 'async' }),
});

const callbackHeader = (name: string, description: string, example: string) => ({
  name,
  in: 'header' as const,
  required: true,
  description,
  schema: { type: 'string' as const, example },
});

/** The request the service makes to a `callbackUrl` (OpenAPI callback object; the body is the Job schema). */
const completionCallback = {
  '{$request.body#/callbackUrl}': {
    post: {
      summary: 'Completion callback',
      description:
        'Sent when an async execution that named a `callbackUrl` ends. Verify `X-Callback-Signature` ' +
        'before trusting the body: hex HMAC-SHA256 of `<X-Callback-Timestamp>.<raw body>` with the ' +
        "workspace's callback secret. Answer 2xx within 10 s; anything else is retried with backoff " +
        'for about 24 hours.',
      parameters: [
        callbackHeader('X-Callback-Timestamp', 'When this attempt was signed, in Unix seconds', '1768469400'),
        callbackHeader(
          'X-Callback-Signature',
          '`sha256=` and the hex HMAC-SHA256 of `<timestamp>.<body>`',
          'sha256=5f0c6e7d1f0a3b2c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4',
        ),
        callbackHeader('X-Callback-Attempt', '1 for the first attempt, then one more per retry', '1'),
        callbackHeader('X-Execution-Id', 'The execution (the `taskId`): deduplicate on it', EX.executionId),
      ],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: { $ref: '#/components/schemas/Job' },
            example: {
              success: true,
              taskId: EX.executionId,
              status: 'completed',
              output: { message: 'Hello, Ada!' },
              metadata: {
                startTime: EX.time,
                endTime: EX.later,
                duration: 412,
                createdAt: '2026-01-15T09:29:59.950Z',
                workflowId: EX.workflowId,
                mode: 'async',
                trigger: 'api',
              },
            },
          },
        },
      },
      responses: {
        '2XX': { description: 'Delivered: no further attempt' },
        default: {
          description:
            'Not delivered (as is no answer within 10 s, or a redirect): retried with exponential backoff',
        },
      },
    },
  },
};

export function registerWorkflows(registry: OpenAPIRegistry) {
  registry.registerPath({
    method: 'post',
    path: '/api/workflows/{id}/execute',
    operationId: 'executeWorkflow',
    tags: ['Workflows'],
    summary: 'Execute a workflow',
    description:
      'Runs the deployed version of a workflow. Sync (default): waits for the result and answers ' +
      '`{success, output, limits}`. Async (`"async": true`): answers 202 at once with a `taskId` to poll. ' +
      'Sync and async executions draw from separate rate-limit buckets; past the spend limit of the ' +
      'plan the answer is 402. Refused requests (400, 402, 429) cost nothing.\n\n' +
      '**Completion callback.** An async execution may name a `callbackUrl`. When the execution ends ' +
      '(completed or failed), the service POSTs its Job record (exactly what `GET /api/jobs/{taskId}` ' +
      'answers) to that URL with the headers `Content-Type: application/json`, `X-Callback-Timestamp` ' +
      '(Unix seconds), `X-Callback-Signature: sha256=<hex>`, `X-Callback-Attempt` (1, 2, …) and ' +
      "`X-Execution-Id`. The signature is the hex HMAC-SHA256, keyed with the workspace's callback secret " +
      '(an operator reads it through the admin plane, `callbacks.secret`), of `<timestamp>.<raw body>`: ' +
      'recompute it over the bytes received, compare in constant time, and reject old timestamps ' +
      '(say, over 5 minutes) to stop replays. A 2xx answer within 10 s delivers the callback. Any other ' +
      'answer (4xx included; redirects are not followed) or none is retried with exponential backoff for ' +
      'about 24 hours; every attempt is visible to operators (`callbacks.deliveries`). Deliveries are ' +
      'at least once: deduplicate on `X-Execution-Id`.',
    request: {
      params: uuidPath('id', 'The workflow id (the last UUID of its editor address)', EX.workflowId),
      headers: executeHeaders,
      body: jsonBody(
        executeBody,
        { inputs: { name: 'Ada' } },
        {
          examples: {
            sync: { summary: 'Sync: wait for the result', value: { inputs: { name: 'Ada' } } },
            async: {
              summary: 'Async: answer at once with a job',
              value: { inputs: { name: 'Ada' }, async: true },
            },
            original: { summary: 'Original API: inputs as the body itself', value: { name: 'Ada' } },
            callback: {
              summary: 'Async, with a completion callback',
              value: {
                inputs: { name: 'Ada' },
                async: true,
                callbackUrl: 'https://example.com/hooks/workflow-done',
              },
            },
          },
        },
      ),
    },
    callbacks: { completion: completionCallback },
    responses: {
      200: ok(
        {
          description: 'Sync: the run finished; `success` says whether it completed or failed',
          schema: z.union([completed, failed]),
          examples: finishedExamples,
        },
        'execute',
        { idempotent: true },
      ),
      202: ok(
        {
          description: 'Async: queued (or a sync run that outlived its wait: poll its job)',
          schema: z.union([accepted, stillRunning]),
          examples: queuedOrRunningExamples('api'),
        },
        'execute',
        { idempotent: true },
      ),
      ...errors(
        withIdempotency({
          400: [
            {
              error: 'Invalid workflow inputs',
              details: [
                {
                  code: 'invalid_type',
                  path: ['inputs', 'name'],
                  message: 'Expected string, received number',
                },
              ],
            },
            invalid(['workflowId'], 'Must be a UUID', 'invalid_format'),
            invalid(
              ['callbackUrl'],
              'A callback needs an async execution: add "async": true (or the header X-Execution-Mode: async)',
            ),
            invalid(
              ['callbackUrl'],
              'refused to connect to 169.254.169.254: link-local addresses are not allowed (not in the HTTP allow-list)',
            ),
            'Workflow is not deployed: deploy it before executing it',
            'Malformed JSON body: Unexpected token } at line 1, column 21: expected a value',
          ],
          402: 'Usage limit exceeded: $5.001 spent of $5 this billing period (free plan)',
          403: RESOURCE_WRITE_DENIED,
          404: 'Workflow not found',
          413: 'Request body over 10485760 bytes',
          429: 'Rate limit exceeded for sync executions: 50 per minute (free plan); retry in 2 s',
        }),
        { metering: 'execute', retryAfter: [409] },
      ),
    },
  });
}

/** The 202 answers of an execution start: queued (async), or a sync run still going after the wait. */
export const queuedOrRunningExamples = (trigger: string) => ({
  queued: {
    summary: 'Async: queued',
    value: {
      success: true,
      taskId: EX.executionId,
      status: 'queued',
      createdAt: EX.time,
      links: { status: `/api/jobs/${EX.executionId}` },
      limits: limitsExample,
    },
  },
  stillRunning: {
    summary: 'Sync: still running after the wait',
    value: {
      success: false,
      error: 'The execution is still running: poll its job',
      taskId: EX.executionId,
      status: 'processing',
      metadata: {
        startTime: jobMetadataExample.startTime,
        createdAt: jobMetadataExample.createdAt,
        workflowId: EX.workflowId,
        mode: 'sync',
        trigger,
      },
      limits: limitsExample,
    },
  },
});

/** The 200 answers of a sync execution: completed or failed. */
export const finishedExamples = {
  completed: {
    summary: 'Completed',
    value: {
      success: true,
      executionId: EX.executionId,
      output: { message: 'Hello, Ada!' },
      limits: limitsExample,
      metadata: { duration: 48, startTime: EX.time, endTime: '2026-01-15T09:30:00.048Z' },
    },
  },
  failed: {
    summary: 'Failed',
    value: {
      success: false,
      executionId: EX.executionId,
      error: 'Block "boom" failed: Error: boom',
      limits: limitsExample,
      metadata: { duration: 30, startTime: EX.time, endTime: '2026-01-15T09:30:00.030Z' },
    },
  },
};
