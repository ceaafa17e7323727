// The answer of GET /api/jobs/{jobId}: an execution as the spec's Job record (db/executions.ts
// jobRecord, shared with completion callbacks). Its parts are also in the answer a sync execute
// gives when the run outlives its wait (routes/workflows/schemas.ts).
import { z } from 'zod';
import { EX } from '../../openapi/components.ts';

/**
 * The job id. Documented as a UUID, but any text is accepted: an id that is not a UUID names no
 * job, and answers 404 like any other unknown job (not a 400), as it always has.
 */
export const jobParams = z.object({
  jobId: z.string().meta({
    format: 'uuid',
    description: 'The taskId of the async acknowledgement',
    example: EX.executionId,
  }),
});

/** One field an approval asks for, declared like a workflow input. */
const pauseField = z
  .object({
    type: z.string().meta({ description: '`string`, `number`, `boolean`, `object`, `array` or `any`' }),
    required: z.boolean(),
    default: z.unknown().optional(),
    description: z.string().optional(),
  })
  .meta({ id: 'PauseField' });

export const pauseSchema = z
  .object({
    blockId: z.string().meta({ description: 'The approval block that paused the execution' }),
    contextId: z.uuid().meta({ description: 'Names this pause; a resume names it' }),
    message: z.string().meta({ description: 'What the approver is asked' }),
    fields: z.record(z.string(), pauseField).meta({
      description: 'What the approver sends back as `data` with the answer, typed like workflow inputs',
    }),
    resumeUrl: z.string().meta({
      description:
        'Where a resume is POSTed with an API key: `/api/resume/{workflowId}/{executionId}/{contextId}`',
    }),
    approvalUrl: z
      .string()
      .optional()
      .meta({
        description:
          'A signed, expiring, single-use link for a person without an API key: its page shows the message, a ' +
          'form for the fields and Approve / Reject (`/approve/{executionId}/{contextId}?expires=…&signature=…`)',
      }),
    pausedAt: z.iso.datetime(),
    expiresAt: z.iso.datetime().nullable().meta({
      description:
        'When the `timeout` branch is taken without an answer; null: the pause lasts until answered or cancelled',
    }),
  })
  .meta({ id: 'Pause', description: 'Only while paused: what the execution waits for (an approval block)' });

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
    resumeAt: z.iso.datetime().optional().meta({
      description:
        'Only while parked (a long `wait` or retry delay; status stays `processing`): when it is due to go on. No runner holds it meanwhile',
    }),
    pause: pauseSchema.optional(),
    cancelledAt: z.iso
      .datetime()
      .optional()
      .meta({ description: 'When it was cancelled; only when cancelled' }),
    cancelledBy: z.string().optional().meta({
      description:
        'Who cancelled it; only when cancelled: `user:<userId>` (a personal key), `key:<keyId>` (a workspace key) or `admin` (the admin plane)',
      example: 'user:6f9619ff-8b86-d011-b42d-00cf4fc964ff',
    }),
  })
  .meta({ id: 'JobMetadata' });

export const jobStatus = z.enum(['queued', 'processing', 'paused', 'completed', 'failed', 'cancelled']).meta({
  description:
    '`queued` → `processing` → `completed` or `failed`; `processing` ⇄ `paused` while an approval block waits ' +
    'for a person (`metadata.pause`); a queued, processing or paused job may end `cancelled` instead',
});

export const jobSchema = z
  .object({
    success: z.boolean().meta({ description: 'false once the job failed or was cancelled' }),
    taskId: z.uuid().meta({ description: 'The execution id' }),
    status: jobStatus,
    output: z.unknown().optional().meta({ description: 'The workflow result; present only when completed' }),
    error: z.string().nullable().optional().meta({
      description: 'Why it failed; present only when failed, or cancelled (`Execution was cancelled`)',
    }),
    metadata: jobMetadata,
  })
  .meta({ id: 'Job', description: 'An execution as a job to poll' });
