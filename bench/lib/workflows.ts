// The workflow the execution benches run (a function, a condition on its output, a response), and
// its deployment on a scratch service whose limits no bench request reaches: the benches measure
// execution, so every request must be admitted.
import { ADMIN_ACTOR } from '../../db/audit-logs.ts';
import { setQuotas } from '../../db/quotas.ts';
import { deployWorkflow } from '../../db/workflow-deployments.ts';
import { createWorkflow } from '../../db/workflows.ts';
import { parseDefinition } from '../../runner/executor/definition.ts';
import type { ScratchService } from './scratch-service.ts';

export const THREE_BLOCKS = {
  inputs: { name: { type: 'string', required: true } },
  blocks: [
    { id: 'greet', type: 'function', code: 'return { message: `Hello, ${inputs.name}!` }' },
    {
      id: 'check',
      type: 'condition',
      branches: [{ id: 'long', if: '<greet.message>.length > 12' }, { id: 'short' }],
    },
    { id: 'done', type: 'response', data: { message: '<greet.message>', size: '<check.selected>' } },
  ],
  edges: [
    { from: 'greet', to: 'check' },
    { from: 'check', to: 'done', branch: 'long' },
    { from: 'check', to: 'done', branch: 'short' },
  ],
};

/** Deploys THREE_BLOCKS (or another definition) with the organization's limits out of reach; answers the workflow id. */
export async function deployBenchWorkflow(
  svc: ScratchService,
  definition: unknown = THREE_BLOCKS,
): Promise<string> {
  await setQuotas(svc.db, svc.organizationId, {
    sync: { requestsPerMinute: 1_000_000, maxBurst: 2_000_000 },
    async: { requestsPerMinute: 1_000_000, maxBurst: 2_000_000 },
    usageLimit: 1_000_000,
  });
  const wf = await createWorkflow(svc.db, ADMIN_ACTOR, {
    workspaceId: svc.workspaceId,
    name: 'bench',
    definition: parseDefinition(definition),
  });
  await deployWorkflow(svc.db, ADMIN_ACTOR, wf.id, parseDefinition);
  return wf.id;
}
