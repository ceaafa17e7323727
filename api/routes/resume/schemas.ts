// The request and answers of the resume endpoints (api/routes/resume/routes.ts): POST
// /api/resume/{workflowId}/{executionId}/{contextId} (the original service's path) and GET
// /api/workflows/{id}/paused.
import { z } from 'zod';
import { EX } from '../../openapi/components.ts';
import { pauseSchema } from '../jobs/schemas.ts';
import { uuidParam } from '../router.ts';

export const resumeParams = z.object({
  workflowId: uuidParam('The workflow the paused execution runs', EX.workflowId),
  executionId: uuidParam('The paused execution', EX.executionId),
  contextId: uuidParam('The pause to answer: `metadata.pause.contextId` of its Job record', EX.contextId),
});

export const resumeBody = z
  .object({
    approved: z.boolean().meta({ description: 'true takes the `approved` branch, false the `rejected` one' }),
    data: z.record(z.string(), z.unknown()).optional().meta({
      description:
        "The approval's fields (`metadata.pause.fields`): only those, each of its type; required ones on an approval",
    }),
  })
  .strict()
  .meta({ id: 'ResumeRequest' });

export const resumeAnswer = z
  .object({
    success: z.literal(true),
    async: z.literal(true).meta({ description: 'The execution goes on in the background: poll its job' }),
    executionId: z.uuid(),
    status: z.enum(['processing', 'queued']).meta({
      description:
        '`processing`: it goes on at once; `queued`: its workflow has a concurrency limit, and it waits for a slot',
    }),
    approved: z.boolean(),
    data: z
      .record(z.string(), z.unknown())
      .meta({ description: 'The answer as recorded (defaults filled in)' }),
    by: z
      .string()
      .meta({ description: 'Who answered: `user:<id>` (a personal key) or `key:<id>` (a workspace key)' }),
    at: z.iso.datetime(),
    message: z.string(),
    links: z.object({ status: z.string() }),
  })
  .meta({ id: 'ResumeQueued', description: 'The answer recorded; the execution goes on' });

export const pausedParams = z.object({
  id: uuidParam('The workflow', EX.workflowId, 'workflowId'),
});

export const pausedQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50).meta({
    description: 'At most this many (1 to 200, default 50), oldest first',
    example: 50,
  }),
});

export const pausedList = z
  .object({
    success: z.literal(true),
    data: z.array(
      z.object({
        executionId: z.uuid(),
        workflowId: z.uuid(),
        createdAt: z.iso.datetime(),
        pause: pauseSchema,
      }),
    ),
  })
  .meta({ id: 'PausedExecutions', description: "A workflow's paused executions, oldest first" });
