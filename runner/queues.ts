// Queue names and payload types: the contract between the API (which sends) and runners (which work).
export const QUEUES = {
  workflowExecute: 'workflow-execute',
  knowledgeIngest: 'knowledge-ingest',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

export interface WorkflowExecutePayload {
  executionId: string;
}

export interface KnowledgeIngestPayload {
  documentId: string;
}
