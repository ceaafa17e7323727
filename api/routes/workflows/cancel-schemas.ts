// The request and answer of POST /api/workflows/{id}/executions/{executionId}/cancel, shaped as the
// original service's (its `cancelWorkflowExecutionContract`), with examples. Fields that name the
// original's machinery (Redis, a local abort) keep their names and say what they mean here.
import { z } from 'zod';
import { EX } from '../../openapi/components.ts';
import { uuidParam } from '../router.ts';

export const cancelParams = z.object({
  id: uuidParam('The workflow the execution runs', EX.workflowId, 'workflowId'),
  executionId: uuidParam('The execution to cancel (the `taskId` of an async start)', EX.executionId),
});

export const cancelAnswer = z
  .object({
    success: z.literal(true).meta({ description: 'The execution is cancelled (now or before)' }),
    executionId: z.uuid(),
    status: z.literal('cancelled'),
    reason: z.enum(['queue_cancelled', 'recorded', 'already_cancelled']).meta({
      description:
        '`queue_cancelled`: it was queued and will never start; `recorded`: it was running, and its runner ' +
        'stops it within a second; `already_cancelled`: an earlier request cancelled it, nothing changed',
    }),
    durablyRecorded: z.boolean().meta({
      description: 'true when this request recorded the cancel; false when it was cancelled before',
    }),
    cancelledAt: z.iso.datetime(),
    redisAvailable: z.boolean().meta({
      description:
        'Always true: the cancel travels through Postgres, which recorded it (kept for clients of the original API)',
    }),
    locallyAborted: z.boolean().meta({
      description: 'Always false: the runner holding the execution aborts it, not the API process',
    }),
    pausedCancelled: z.boolean().meta({
      description: 'true when this request cancelled a paused execution (waiting for an approval)',
    }),
  })
  .meta({ id: 'ExecutionCancelled', description: 'The outcome of a cancel' });

const answer = (reason: 'queue_cancelled' | 'recorded' | 'already_cancelled') => ({
  success: true,
  executionId: EX.executionId,
  status: 'cancelled',
  reason,
  durablyRecorded: reason !== 'already_cancelled',
  cancelledAt: EX.later,
  redisAvailable: true,
  locallyAborted: false,
  pausedCancelled: false,
});

export const cancelExamples = {
  running: { summary: 'Was running: its runner stops it', value: answer('recorded') },
  queued: { summary: 'Was queued: it never starts', value: answer('queue_cancelled') },
  again: { summary: 'Cancelled before: nothing changed', value: answer('already_cancelled') },
};
