// Examples of GET /api/jobs/{jobId}: a job completed, failed and queued. The metadata example is
// also that of a completion callback and of a sync execute still running.
import { EX } from '../../openapi/components.ts';

export const jobMetadataExample = {
  startTime: EX.time,
  endTime: EX.later,
  duration: 412,
  createdAt: '2026-01-15T09:29:59.950Z',
  workflowId: EX.workflowId,
  mode: 'async',
  trigger: 'api',
};

export const jobExamples = {
  completed: {
    summary: 'Completed',
    value: {
      success: true,
      taskId: EX.executionId,
      status: 'completed',
      output: { message: 'Hello, Ada!' },
      metadata: jobMetadataExample,
    },
  },
  failed: {
    summary: 'Failed',
    value: {
      success: false,
      taskId: EX.executionId,
      status: 'failed',
      error: 'Block "boom" failed: Error: boom',
      metadata: jobMetadataExample,
    },
  },
  cancelled: {
    summary: 'Cancelled',
    value: {
      success: false,
      taskId: EX.executionId,
      status: 'cancelled',
      error: 'Execution was cancelled',
      metadata: {
        ...jobMetadataExample,
        cancelledAt: EX.later,
        cancelledBy: `user:${EX.userId}`,
      },
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
};
