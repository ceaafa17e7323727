// The request and answers of POST /api/workflows/{id}/execute: the body (inputs and how to run),
// the headers, and the answers, sync and async, with the limits object every execute answer
// carries. The webhook answers reuse them (api/openapi/webhooks.ts).
import { z } from 'zod';
import { PLAN_NAMES } from '../../../db/plans.ts';
import type { LimitsObject } from '../../../db/usage.ts';
import { CALLBACK_URL_MAX_LENGTH, callbackUrlFormProblem } from '../../../net/callback-url.ts';
import { EX, idempotencyHeaders } from '../../openapi/components.ts';
import { jobMetadata, jobStatus } from '../jobs/schemas.ts';
import { uuidParam } from '../router.ts';

export const executeParams = z.object({
  id: uuidParam('The workflow id (the last UUID of its editor address)', EX.workflowId, 'workflowId'),
});

export const executeBody = z
  .looseObject({
    inputs: z.record(z.string(), z.unknown()).optional().meta({
      description: "The workflow's inputs, checked against its declared inputs (400 with details otherwise)",
    }),
    input: z
      .unknown()
      .optional()
      .meta({ description: 'The inputs under the name clients of the original API use' }),
    async: z.boolean().optional().meta({
      description: 'true: answer 202 at once with a job to poll; default false (wait for the result)',
    }),
    stream: z
      .boolean()
      .optional()
      .meta({
        description:
          "true: answer `text/event-stream`, the execution's events as it runs (see ExecutionStreamEvent); " +
          'as the header `X-Stream-Response: true`. Not with `async`',
      }),
    selectedOutputs: z
      .array(
        z
          .string()
          .min(1)
          .max(200)
          .regex(/^[^.]+(\.[^.]+)*$/, 'Must be `blockId` or `blockId.path`'),
      )
      .max(50)
      .optional()
      .meta({
        description:
          'With `stream`: the outputs `block.completed` events carry, as `blockId.path` (`agent.content`) ' +
          'or `blockId`; only those blocks stream model tokens. Default: every output, every agent',
        example: ['agent.content'],
      }),
    callbackUrl: z
      .string()
      .max(CALLBACK_URL_MAX_LENGTH)
      .superRefine((url, ctx) => {
        const problem = callbackUrlFormProblem(url);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .optional()
      .meta({
        description:
          'Async only: an absolute http(s) URL (at most 2048 characters, no credentials) that is POSTed the ' +
          'Job record, signed, when the execution ends (see the `completion` callback). Private, loopback, ' +
          'link-local and metadata addresses are refused unless the operator allow-lists them (HTTP_ALLOW_LIST): ' +
          'a literal address at once (400), a host name at each delivery, on what it then resolves to',
        example: 'https://example.com/hooks/workflow-done',
      }),
  })
  .meta({
    description:
      'The inputs as `inputs` (or, for clients of the original API, as `input` or the body itself), `async`, ' +
      'and for async executions an optional `callbackUrl`',
  });

/** Idempotency-Key (so the Router guards the route with it), and the original API's mode header. */
export const executeHeaders = idempotencyHeaders.extend({
  'X-Execution-Mode': z
    .enum(['sync', 'async'])
    .optional()
    .meta({ description: '`async` does what `"async": true` does (original API clients)', example: 'async' }),
  'X-Stream-Response': z
    .enum(['true', 'false'])
    .optional()
    .meta({ description: '`true` does what `"stream": true` does (original API clients)', example: 'true' }),
});

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
    error: z
      .string()
      .nullable()
      .meta({ description: 'Why the run failed (`Execution was cancelled` when cancelled)' }),
    status: z.literal('cancelled').optional().meta({
      description:
        'Present only when the run was cancelled (POST …/executions/{executionId}/cancel) while the caller waited',
    }),
    limits: limitsSchema,
    metadata: runMetadata,
  })
  .meta({ id: 'ExecutionFailure', description: 'A sync execution that ran and failed, or was cancelled' });

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
