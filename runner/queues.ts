// Queue names, payload types and the wake-up channel: the contract between the API (which sends)
// and runners (which work). Used by both sides.
export const QUEUES = {
  workflowExecute: 'workflow-execute',
  /** Executions whose job ran out of retries (its runners kept dying): marked failed here. */
  workflowExecuteDead: 'workflow-execute-dead',
  knowledgeIngest: 'knowledge-ingest',
  /** Documents whose ingestion ran out of retries (its runners kept dying): marked failed here. */
  knowledgeIngestDead: 'knowledge-ingest-dead',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/** NOTIFY channel a sender signals after sending, so idle runners fetch at once instead of polling. */
export const WAKE_CHANNEL = 'runner_wake';

export interface WorkflowExecutePayload {
  executionId: string;
}

/** Process a document into the chunks of one generation (a later generation makes this job stale). */
export interface KnowledgeIngestPayload {
  documentId: string;
  generation: number;
}
