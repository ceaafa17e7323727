// Queue names, payload types and the wake-up channel: the contract between the API (which sends)
// and runners (which work). Used by both sides.
export const QUEUES = {
  workflowExecute: 'workflow-execute',
  /** Executions whose job ran out of retries (its runners kept dying): marked failed here. */
  workflowExecuteDead: 'workflow-execute-dead',
  knowledgeIngest: 'knowledge-ingest',
  /** Documents whose ingestion ran out of retries (its runners kept dying): marked failed here. */
  knowledgeIngestDead: 'knowledge-ingest-dead',
  /** One job per firing of a schedule (sent by pg-boss's cron pass): starts its execution. */
  workflowSchedule: 'workflow-schedule',
  /** Completion callbacks: POST an ended execution's Job record to its callback URL (retried with backoff). */
  executionCallback: 'execution-callback',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/** NOTIFY channel a sender signals after sending, so idle runners fetch at once instead of polling. */
export const WAKE_CHANNEL = 'runner_wake';

export interface WorkflowExecutePayload {
  executionId: string;
  /** Its workflow has a concurrency limit: claimed under its group's lock (db/execution-concurrency.ts). */
  limited?: true;
}

/** A schedule's firing: the job's id becomes the execution's, so a redelivery starts nothing twice. */
export interface WorkflowSchedulePayload {
  scheduleId: string;
}

/** Deliver the completion callback of an ended execution; `retryLimit`: the retries it was sent with. */
export interface ExecutionCallbackPayload {
  executionId: string;
  retryLimit: number;
  /** A `paused` event (an approval waits on this pause), not the execution's end: see runner/callback-jobs.ts. */
  paused?: { contextId: string };
}

/** Process a document into the chunks of one generation (a later generation makes this job stale). */
export interface KnowledgeIngestPayload {
  documentId: string;
  generation: number;
}
