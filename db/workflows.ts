// Workflow records. This foundation creates them (a new workspace's default agent workflow); the
// Workflows issue adds validation of definitions, versions and deployments here.
import { type Actor, recordAudit } from './audit-logs.ts';
import type { Queryable } from './client.ts';

/** The agent workflow every new workspace starts with, unless asked not to: a chat turn. */
export const DEFAULT_AGENT_WORKFLOW = {
  inputs: { message: { type: 'string', required: true } },
  blocks: [
    {
      id: 'agent',
      type: 'agent',
      model: 'gpt-4o-mini',
      systemPrompt: 'You are a helpful assistant.',
      prompt: '<start.message>',
    },
    { id: 'respond', type: 'response', data: { content: '<agent.content>' } },
  ],
  edges: [{ from: 'agent', to: 'respond' }],
} as const;

export async function insertWorkflow(
  tx: Queryable,
  actor: Actor,
  input: {
    organizationId: string;
    workspaceId: string;
    name: string;
    description?: string;
    definition: unknown;
  },
): Promise<{ id: string }> {
  const [row] = await tx.query<{ id: string }>(
    `insert into workflows (workspace_id, name, description, definition, created_by)
     values ($1, $2, $3, $4::jsonb, $5) returning id`,
    [input.workspaceId, input.name, input.description ?? '', JSON.stringify(input.definition), actor.userId],
  );
  const id = (row as { id: string }).id;
  await recordAudit(tx, actor, {
    organizationId: input.organizationId,
    workspaceId: input.workspaceId,
    action: 'workflow.created',
    resourceType: 'workflow',
    resourceId: id,
    metadata: { name: input.name },
  });
  return { id };
}
