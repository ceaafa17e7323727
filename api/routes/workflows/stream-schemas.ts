// The Server-Sent Events of a streaming execution (issue 29), as the OpenAPI document describes
// them: the event stream media type of POST …/execute with `stream: true` and of
// GET …/executions/{executionId}/stream, its events, and the reconnect route. The answers themselves
// are written by api/execution-stream.ts; these schemas document them.
import { createRoute } from '@hono/zod-openapi';
import { z } from 'zod';
import { EX } from '../../openapi/components.ts';
import { errors, invalid } from '../../openapi/error-answers.ts';
import { uuidParam } from '../router.ts';
import { limitsSchema } from './schemas.ts';

export const STREAM_EVENT_NAMES = [
  'execution.started',
  'block.started',
  'block.completed',
  'token',
  'execution.completed',
  'execution.failed',
  'execution.cancelled',
] as const;

export const streamEvent = z
  .object({
    id: z.number().int().min(1).meta({ description: '`id:` increasing within the execution, from 1' }),
    event: z.enum(STREAM_EVENT_NAMES).meta({ description: '`event:` what happened' }),
    data: z.union([
      z.object({ executionId: z.uuid(), workflowId: z.uuid(), startedAt: z.iso.datetime() }),
      z.object({ blockId: z.string(), blockType: z.string() }),
      z.object({
        blockId: z.string(),
        blockType: z.string(),
        success: z.boolean(),
        output: z
          .unknown()
          .optional()
          .meta({
            description:
              'The block output; with `selectedOutputs`, only the selected paths of it (by path), and ' +
              'absent for blocks none is selected from',
          }),
        error: z.string().optional(),
      }),
      z.object({ blockId: z.string(), chunk: z.string().meta({ description: 'A text delta of the model' }) }),
      z.object({
        success: z.boolean(),
        executionId: z.uuid(),
        output: z.unknown().optional(),
        error: z.string().nullable().optional(),
        status: z.literal('cancelled').optional(),
        limits: limitsSchema,
      }),
    ]),
  })
  .meta({
    id: 'ExecutionStreamEvent',
    description:
      'One Server-Sent Event (`id:`, `event:`, `data:` JSON). In order: `execution.started`; per block ' +
      '`block.started`, then `token` events `{blockId, chunk}` as an agent block streams, then ' +
      '`block.completed`; last, exactly one of `execution.completed` `{success: true, output, executionId, ' +
      'limits}`, `execution.failed` `{success: false, error, executionId, limits}` or `execution.cancelled`. ' +
      'Lines starting with `:` are heartbeat comments.',
  });

const streamExample =
  'id: 1\nevent: execution.started\ndata: {"executionId":"4f7c6dae-9a5b-4c23-9ebf-5a6b7c8d9ea4","workflowId":"3e6b5c9d-8f4a-4b12-8dae-4f5a6b7c8d93","startedAt":"2026-01-15T09:30:00.000Z"}\n\n' +
  'id: 2\nevent: block.started\ndata: {"blockId":"agent","blockType":"agent"}\n\n' +
  'id: 3\nevent: token\ndata: {"blockId":"agent","chunk":"Hello"}\n\n' +
  'id: 4\nevent: token\ndata: {"blockId":"agent","chunk":", Ada"}\n\n' +
  'id: 5\nevent: block.completed\ndata: {"blockId":"agent","blockType":"agent","success":true,"output":{"content":"Hello, Ada"}}\n\n' +
  ': heartbeat\n\n' +
  'id: 6\nevent: execution.completed\ndata: {"success":true,"output":{"answer":"Hello, Ada"},"executionId":"4f7c6dae-9a5b-4c23-9ebf-5a6b7c8d9ea4","limits":{…}}\n\n';

/** The `text/event-stream` content of a streaming answer. */
export const eventStreamContent = {
  'text/event-stream': {
    // The stream is a sequence of these, each as `id:`, `event:` and a JSON `data:` line.
    schema: streamEvent.meta({
      description: `One event of the stream, e.g.:\n\n\`\`\`\n${streamExample}\`\`\``,
    }),
    example: { id: 3, event: 'token', data: { blockId: 'agent', chunk: 'Hello' } },
  },
};

export const streamParams = z.object({
  id: uuidParam('The workflow the execution runs', EX.workflowId, 'workflowId'),
  executionId: uuidParam('The streaming execution (the `X-Execution-Id` of its answer)', EX.executionId),
});

export const streamQuery = z.object({
  from: z.string().optional().meta({
    description: 'Send the events after this id (as `Last-Event-ID`, which wins when both are given)',
    example: '5',
  }),
});

export const streamHeaders = z.object({
  'Last-Event-ID': z.string().optional().meta({
    description: 'The id of the last event received: the stream resumes after it',
    example: '5',
  }),
});

export const executionStreamRoute = createRoute({
  method: 'get',
  path: '/api/workflows/{id}/executions/{executionId}/stream',
  operationId: 'streamExecution',
  scope: 'workflows:execute' as const,
  tags: ['Workflows'],
  summary: 'Reconnect to an execution stream',
  description:
    'The Server-Sent Events of an execution started with `stream: true` (or `X-Stream-Response: true`): ' +
    'the events after `Last-Event-ID` (or `?from=`; all of them without either), then the live ones ' +
    'until its terminal event. A finished execution replays and closes. Events are kept for ' +
    'EXECUTION_EVENTS_RETENTION_HOURS (default 24). Disconnecting never cancels the execution. ' +
    'Draws from the `api` rate-limit bucket.',
  request: { params: streamParams, query: streamQuery, headers: streamHeaders },
  responses: {
    200: {
      description: 'The event stream (ExecutionStreamEvent)',
      content: eventStreamContent,
    },
    ...errors(
      {
        400: invalid(['from'], 'Must be a whole number of 0 or more', 'invalid_format'),
        404: 'Execution not found',
        409: 'The execution was not started with stream: true, so it has no event stream',
      },
      {
        metering: 'api',
        meanings: { 404: 'No such execution of this workflow, or not in the reach of this key' },
      },
    ),
  },
});
