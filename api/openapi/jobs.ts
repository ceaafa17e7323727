// OpenAPI: GET /api/jobs/{jobId} (2), the state of an execution. The Job schema is also part of the
// answer a sync execute gives when the run outlives its wait.
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { EX, errors, ok, uuidPath } from './components.ts';

export const jobMetadata = z
  .object({
    startTime: z.iso
      .datetime()
      .meta({ description: 'When the run started; while queued, when it was queued' }),
    endTime: z.iso.datetime().optional().meta({ description: 'When it finished' }),
    duration: z.number().int().optional().meta({ description: 'Milliseconds from start to end' }),
    createdAt: z.iso.datetime().meta({ description: 'When it was queued' }),
    workflowId: z.uuid(),
    mode: z.enum(['sync', 'async']),
    trigger: z.string().meta({ description: 'What started it, e.g. `api`' }),
  })
  .meta({ id: 'JobMetadata' });

export const jobStatus = z
  .enum(['queued', 'processing', 'completed', 'failed'])
  .meta({ description: '`queued` → `processing` → `completed` or `failed`' });

export const jobSchema = z
  .object({
    success: z.boolean().meta({ description: 'false once the job failed' }),
    taskId: z.uuid().meta({ description: 'The execution id' }),
    status: jobStatus,
    output: z.unknown().optional().meta({ description: 'The workflow result; present only when completed' }),
    error: z.string().nullable().optional().meta({ description: 'Why it failed; present only when failed' }),
    metadata: jobMetadata,
  })
  .meta({ id: 'Job', description: 'An execution as a job to poll' });

const metadataExample = {
  startTime: EX.time,
  endTime: EX.later,
  duration: 412,
  createdAt: '2026-01-15T09:29:59.950Z',
  workflowId: EX.workflowId,
  mode: 'async',
  trigger: 'api',
};

export function registerJobs(registry: OpenAPIRegistry) {
  registry.registerPath({
    method: 'get',
    path: '/api/jobs/{jobId}',
    operationId: 'getJob',
    tags: ['Workflows'],
    summary: 'Get job status',
    description:
      'The state of an execution started with `async: true` (its `taskId`), or of any execution by id. ' +
      'Poll until `status` is `completed` (with `output`) or `failed` (with `error`). Polls do not draw ' +
      'from a rate-limit bucket; their X-RateLimit-* headers show the /api/v1 bucket.',
    request: { params: uuidPath('jobId', 'The taskId of the async acknowledgement', EX.executionId) },
    responses: {
      200: ok(
        {
          description: 'The job',
          schema: jobSchema,
          examples: {
            completed: {
              summary: 'Completed',
              value: {
                success: true,
                taskId: EX.executionId,
                status: 'completed',
                output: { message: 'Hello, Ada!' },
                metadata: metadataExample,
              },
            },
            failed: {
              summary: 'Failed',
              value: {
                success: false,
                taskId: EX.executionId,
                status: 'failed',
                error: 'Block "boom" failed: Error: boom',
                metadata: metadataExample,
              },
            },
            queued: {
              summary: 'Queued',
              value: {
                success: true,
                taskId: EX.executionId,
                status: 'queued',
                metadata: {
                  startTime: EX.time,
                  createdAt: EX.time,
                  workflowId: EX.workflowId,
                  mode: 'async',
                  trigger: 'api',
                },
              },
            },
          },
        },
        'shown',
      ),
      ...errors(
        {
          403: 'Personal API keys are disabled in this workspace; use a workspace key',
          404: 'Job not found',
        },
        { metering: 'shown', meanings: { 404: 'No such job, or not in the reach of this key' } },
      ),
    },
  });
}

export { metadataExample as jobMetadataExample };
