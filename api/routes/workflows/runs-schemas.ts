// The requests and answers of a workflow's runs: GET /api/v1/workflows/{id}/runs (its executions in
// any state, newest first, cursor-paged) and POST …/executions/{executionId}/rerun (a new execution
// with the inputs of an earlier one), with their examples.
import { z } from 'zod';
import type { ExecutionSummary } from '../../../db/execution-lists.ts';
import { wholeNumberParam } from '../../middleware/validate.ts';
import { cursorParam, EX, withFieldDocs } from '../../openapi/components.ts';
import { invalid } from '../../openapi/error-answers.ts';
import { jobStatus } from '../jobs/schemas.ts';
import { uuidParam } from '../router.ts';

export const runsParams = z.object({
  id: uuidParam('The workflow whose runs to list', EX.workflowId, 'workflowId'),
});

const NEXT_RUN = '7a1e0c52-3b9d-4f6e-8c2a-5d4b3e2f1a09';

export const runsQuery = withFieldDocs(
  z.object({
    status: jobStatus.optional(),
    limit: wholeNumberParam(1, 100).default(20),
    // The cursor is the id of the last run served: checked as one, so a mangled cursor is a 400.
    cursor: z.uuid({ error: 'Not a cursor returned by this listing' }).optional(),
  }),
  {
    status: { description: 'Only the runs in this state', example: 'processing' },
    limit: { description: 'Runs per page (1 to 100, default 20)', example: 20 },
    cursor: { description: cursorParam, example: NEXT_RUN },
  },
);

const runSchema = z
  .object({
    id: z.uuid().meta({ description: 'The execution id (the `taskId` of an async start)' }),
    workflowId: z.uuid(),
    version: z.number().int().meta({ description: 'The deployed version it runs' }),
    status: jobStatus,
    mode: z.enum(['sync', 'async']),
    trigger: z
      .string()
      .meta({ description: 'What started it: `api`, `mcp`, `webhook`, `schedule`, `manual`' }),
    error: z.string().nullable().meta({ description: 'Why it failed or was cancelled; null otherwise' }),
    createdAt: z.iso.datetime().meta({ description: 'When it was queued' }),
    startedAt: z.iso.datetime().nullable().meta({ description: 'null while queued' }),
    endedAt: z.iso.datetime().nullable().meta({ description: 'null while queued or processing' }),
  })
  .meta({
    id: 'Run',
    description: 'One execution of a workflow, without its inputs, output or trace',
  }) satisfies z.ZodType<ExecutionSummary>;

export const runPage = z
  .object({
    success: z.literal(true),
    data: z.array(runSchema),
    nextCursor: z.string().nullable().meta({ description: 'null on the last page' }),
  })
  .meta({ id: 'RunPage' });

const run = (over: Partial<ExecutionSummary>): ExecutionSummary => ({
  id: EX.executionId,
  workflowId: EX.workflowId,
  version: 3,
  status: 'completed',
  mode: 'sync',
  trigger: 'api',
  error: null,
  createdAt: EX.time,
  startedAt: EX.time,
  endedAt: EX.later,
  ...over,
});

export const runPageExamples = {
  page: {
    summary: 'A running and a finished run, more to come',
    value: {
      success: true,
      data: [
        run({ id: NEXT_RUN, status: 'processing', mode: 'async', endedAt: null }),
        run({ status: 'failed', error: 'kaput' }),
      ],
      nextCursor: EX.executionId,
    },
  },
  last: { summary: 'The last page', value: { success: true, data: [run({})], nextCursor: null } },
};

export const runsInvalid = [
  invalid(['cursor'], 'Not a cursor returned by this listing'),
  invalid(
    ['status'],
    'Invalid option: expected one of "queued"|"processing"|"completed"|"failed"|"cancelled"',
    'invalid_value',
  ),
  invalid(['workflowId'], 'Must be a UUID', 'invalid_format'),
];

export const rerunParams = z.object({
  id: uuidParam('The workflow the execution ran', EX.workflowId, 'workflowId'),
  executionId: uuidParam('The execution to run again (any state)', EX.executionId),
});

export const rerunBody = z
  .strictObject({
    latest: z.boolean().optional().meta({
      description: 'true: run the version deployed now; default false: the version the execution ran',
    }),
    async: z.boolean().optional().meta({
      description: 'true: answer 202 at once with a job to poll; default false (wait for the result)',
    }),
  })
  .meta({ description: 'How to run it again; the inputs are the earlier execution’s' });

export const rerunInvalid = [
  invalid(['latest'], 'Invalid input: expected boolean, received string', 'invalid_type'),
  'Workflow is not deployed: deploy it before executing it',
  {
    error: 'Invalid workflow inputs',
    details: [
      { code: 'invalid_type', path: ['inputs', 'name'], message: 'Expected string, received number' },
    ],
  },
];
