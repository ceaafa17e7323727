// Examples of the resume endpoints' answers, with the shared example ids.
import { EX } from '../../openapi/components.ts';

const pause = {
  blockId: 'approve',
  contextId: EX.contextId,
  message: 'Refund 120 EUR to order 1042?',
  fields: { comment: { type: 'string', required: false } },
  resumeUrl: `/api/resume/${EX.workflowId}/${EX.executionId}/${EX.contextId}`,
  pausedAt: EX.time,
  expiresAt: '2026-01-16T09:30:00.000Z',
};

export const resumeExample = {
  success: true,
  async: true,
  executionId: EX.executionId,
  status: 'processing',
  approved: true,
  data: { comment: 'ok, customer is right' },
  by: `key:${EX.apiKeyId}`,
  at: EX.later,
  message: 'Resume execution queued',
  links: { status: `/api/jobs/${EX.executionId}` },
};

export const resumeRequestExample = { approved: true, data: { comment: 'ok, customer is right' } };

export const pausedExample = {
  success: true,
  data: [{ executionId: EX.executionId, workflowId: EX.workflowId, createdAt: EX.time, pause }],
};
