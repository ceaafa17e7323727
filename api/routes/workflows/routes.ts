// POST /api/workflows/{id}/execute: runs the deployed version of a workflow, synchronously (waits
// for the runner's result) or asynchronously (answers 202 with a job to poll). Clients of the
// original API may send `X-Execution-Mode: async`, and the inputs as the body itself or `{input}`.
// An async execution may name a `callbackUrl`, POSTed its Job record when it ends (runner/callback-jobs.ts).
// This is the hot path bench/execute.ts measures: the handler does only what the request needs.
import { createRoute } from '@hono/zod-openapi';
import { z } from 'zod';
import { invalidField } from '../../../errors.ts';
import { literalAddressRefusal } from '../../../net/callback-url.ts';
import { parseAllowList } from '../../../net/network-guard.ts';
import type { ApiDeps } from '../../context.ts';
import { executionAnswers } from '../../execution-answer.ts';
import { EX, jsonBody, ok, RESOURCE_WRITE_DENIED } from '../../openapi/components.ts';
import { errors, withIdempotency } from '../../openapi/error-answers.ts';
import { type Guards, Router } from '../router.ts';
import {
  callbackJobExample,
  executeInvalid,
  executeRequestExamples,
  finishedExamples,
  queuedOrRunningExamples,
} from './examples.ts';
import {
  accepted,
  completed,
  executeBody,
  executeHeaders,
  executeParams,
  failed,
  stillRunning,
} from './schemas.ts';
import { eventStreamContent } from './stream-schemas.ts';

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
          'application/json': { schema: { $ref: '#/components/schemas/Job' }, example: callbackJobExample },
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

export const executeWorkflowRoute = createRoute({
  method: 'post',
  path: '/api/workflows/{id}/execute',
  operationId: 'executeWorkflow',
  scope: 'workflows:execute' as const,
  tags: ['Workflows'],
  summary: 'Execute a workflow',
  description:
    'Runs the deployed version of a workflow. Sync (default): waits for the result and answers ' +
    '`{success, output, limits}`. Async (`"async": true`): answers 202 at once with a `taskId` to poll. ' +
    'Streamed (`"stream": true` or `X-Stream-Response: true`): answers Server-Sent Events as it runs ' +
    '(ExecutionStreamEvent), resumable with GET …/executions/{executionId}/stream; it draws from the sync ' +
    'bucket, and a client that disconnects does not cancel it; a retry under the same Idempotency-Key ' +
    'replays the stream of the execution it started (from event 1, or after its `Last-Event-ID`), then live. ' +
    'Sync and async executions draw from separate rate-limit buckets; past the spend limit of the ' +
    'plan the answer is 402. Refused requests (400, 402, 429) cost nothing.\n\n' +
    '**Completion callback.** An async execution may name a `callbackUrl`. When the execution ends ' +
    '(completed, failed or cancelled), the service POSTs its Job record (exactly what `GET /api/jobs/{taskId}` ' +
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
    params: executeParams,
    // Documented, not validated: the handler reads X-Execution-Mode case-insensitively, and the
    // Idempotency-Key is judged by its guard.
    headers: executeHeaders,
    body: jsonBody(executeBody, { inputs: { name: 'Ada' } }, { examples: executeRequestExamples }),
  },
  callbacks: { completion: completionCallback },
  responses: {
    200: withEventStream(
      ok(
        {
          description:
            'Sync: the run finished; `success` says whether it completed or failed. Streamed ' +
            '(`stream: true`): `text/event-stream`, with the execution id in `X-Execution-Id`',
          schema: z.union([completed, failed]),
          examples: finishedExamples,
        },
        'execute',
        { idempotent: true },
      ),
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
        400: executeInvalid,
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

/** A JSON answer that is an event stream when the caller streams. */
function withEventStream<A extends { content: object }>(answer: A) {
  return { ...answer, content: { ...answer.content, ...eventStreamContent } };
}

// Fields of the body that steer the call rather than feed the workflow.
const CONTROL_FIELDS = ['inputs', 'input', 'async', 'stream', 'selectedOutputs', 'workflowId', 'callbackUrl'];

function inputsOf(body: z.output<typeof executeBody>): Record<string, unknown> {
  if (body.inputs !== undefined) return body.inputs;
  if (body.input !== undefined) {
    if (body.input === null || typeof body.input !== 'object' || Array.isArray(body.input)) {
      throw invalidField('input', 'Must be an object of workflow inputs', 'invalid_type');
    }
    return body.input as Record<string, unknown>;
  }
  return Object.fromEntries(Object.entries(body).filter(([k]) => !CONTROL_FIELDS.includes(k)));
}

/**
 * Not under the `api` bucket: an execution draws from its sync or async bucket as it is admitted
 * (jobs/start-execution.ts), so a refused request costs nothing.
 */
export function workflowRoutes(deps: ApiDeps, guards: Guards) {
  const executions = executionAnswers(deps);
  const allowList = parseAllowList(deps.config.HTTP_ALLOW_LIST);

  return new Router(guards, { rateLimited: false }).openapi(executeWorkflowRoute, async (c) => {
    const { id } = c.req.valid('param');
    const body = c.req.valid('json');
    const isAsync = body.async === true || c.req.header('x-execution-mode')?.toLowerCase() === 'async';
    if (body.callbackUrl !== undefined) {
      if (!isAsync) {
        throw invalidField(
          'callbackUrl',
          'A callback needs an async execution: add "async": true (or the header X-Execution-Mode: async)',
        );
      }
      const refusal = await literalAddressRefusal(new URL(body.callbackUrl), allowList);
      if (refusal) throw invalidField('callbackUrl', refusal);
    }
    const stream = body.stream === true || c.req.header('x-stream-response')?.toLowerCase() === 'true';
    if (stream && isAsync) {
      throw invalidField('stream', 'A stream follows the execution as it runs: it cannot be async as well');
    }
    if (body.selectedOutputs !== undefined && !stream) {
      throw invalidField('selectedOutputs', 'Selected outputs shape a stream: add "stream": true');
    }
    const started = await executions.start({
      workflowId: id,
      by: { principal: c.get('principal') },
      inputs: () => inputsOf(body),
      // A stream is a caller waiting for the run: it draws from the sync bucket.
      mode: isAsync ? 'async' : 'sync',
      trigger: 'api',
      ...(body.callbackUrl !== undefined ? { callbackUrl: body.callbackUrl } : {}),
      ...(stream ? { streamOutputs: (body.selectedOutputs as string[] | undefined) ?? [] } : {}),
    });
    // The event stream is a plain Response; its media type is documented on the route.
    if (stream) return executions.stream(c, started) as never;
    return executions.answer(c, started, isAsync ? 'async' : 'sync');
  }).app;
}
