// Examples of POST /api/workflows/{id}/execute: the requests, the answers (sync finished, async
// queued, sync still running; the webhook answers reuse them), the 400s, and the completion
// callback's body.
import { EX } from '../../openapi/components.ts';
import { invalid } from '../../openapi/error-answers.ts';
import { jobMetadataExample } from '../jobs/examples.ts';

export const executeRequestExamples = {
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
};

export const limitsExample = {
  workflowExecutionRateLimit: {
    sync: { requestsPerMinute: 50, maxBurst: 100, remaining: 99, resetAt: '2026-01-15T09:30:01.200Z' },
    async: { requestsPerMinute: 200, maxBurst: 400, remaining: 400, resetAt: EX.time },
  },
  usage: { currentPeriodCost: 0.015, limit: 5, plan: 'free', isExceeded: false },
};

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
  cancelled: {
    summary: 'Cancelled while the caller waited',
    value: {
      success: false,
      executionId: EX.executionId,
      error: 'Execution was cancelled',
      status: 'cancelled',
      limits: limitsExample,
      metadata: { duration: 412, startTime: EX.time, endTime: EX.later },
    },
  },
};

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

export const executeInvalid = [
  {
    error: 'Invalid workflow inputs',
    details: [
      { code: 'invalid_type', path: ['inputs', 'name'], message: 'Expected string, received number' },
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
];

/** The body a completion callback carries: the Job record of the ended execution. */
export const callbackJobExample = {
  success: true,
  taskId: EX.executionId,
  status: 'completed',
  output: { message: 'Hello, Ada!' },
  metadata: jobMetadataExample,
};
