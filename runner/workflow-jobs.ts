// The runner's work on queue `workflow-execute`: claim the execution, run its deployed version,
// record the outcome (which notifies the waiting API), and fail executions whose job ran out of
// retries because the runners holding it kept dying.
import type { Job } from 'pg-boss';
import { createBatcher } from '../db/batcher.ts';
import type { Db } from '../db/client.ts';
import {
  abandonExecution,
  type Claim,
  claimExecutions,
  type ExecutionOutcome,
  finishExecutions,
} from '../db/executions.ts';
import { loadSecrets } from '../db/secrets.ts';
import { createVersionCache } from '../db/version-cache.ts';
import { deployedVersion } from '../db/workflows.ts';
import type { Logger } from '../logger.ts';
import type { RunnerSettings } from './blocks/block.ts';
import type { Embedders } from './embeddings/embedder.ts';
import { executionCost } from './execution-cost.ts';
import { executeWorkflow } from './executor/execute.ts';
import type { FunctionPool } from './pool.ts';
import type { WorkflowExecutePayload } from './queues.ts';

export interface WorkflowJobDeps {
  db: Db;
  embedders: Embedders;
  encryptionKey: Buffer;
  pool: FunctionPool;
  settings: RunnerSettings;
  log: Logger;
  defaultTimeoutMs: number;
  /** Aborted on a forced shutdown: running executions stop and are recorded as cancelled. */
  signal?: AbortSignal;
}

export function workflowJobHandler(deps: WorkflowJobDeps) {
  const { db } = deps;
  const versions = createVersionCache(db);
  // Concurrent executions claim and record together: one statement per batch, not per execution.
  const claimExecution = createBatcher(async (ids: string[]) => {
    const claims = await claimExecutions(db, ids);
    return ids.map((id): Claim | null => claims.get(id) ?? null);
  });
  const finishExecution = createBatcher(
    async (results: { id: string; attempt: number; outcome: ExecutionOutcome }[]) => {
      const recorded = await finishExecutions(db, results);
      return results.map((r) => recorded.has(r.id));
    },
  );
  const loadChild = async (workspaceId: string, workflowId: string) => {
    const d = await deployedVersion(db, workflowId);
    return d && d.workspaceId === workspaceId
      ? ((await versions.get(workflowId, d.version))?.definition ?? null)
      : null;
  };
  return async (job: Job<WorkflowExecutePayload>) => {
    const { executionId } = job.data;
    const claim = await claimExecution(executionId);
    if (!claim) return; // finished already: this delivery is a duplicate
    const startedAt = claim.started_at;
    const version = await versions.get(claim.workflow_id, claim.version);
    if (!version) {
      const error = 'The deployed version no longer exists';
      const outcome: ExecutionOutcome = { status: 'failed', error, startedAt, endedAt: new Date() };
      await finishExecution({ id: executionId, attempt: claim.attempt, outcome });
      return;
    }
    const result = await executeWorkflow(
      {
        executionId,
        workspaceId: claim.workspace_id,
        workflowId: claim.workflow_id,
        definition: version.definition,
        inputs: claim.inputs,
        secrets: version.needsSecrets
          ? await loadSecrets(db, deps.encryptionKey, claim.workspace_id)
          : new Map(),
        depth: claim.depth,
        ...(deps.signal ? { signal: deps.signal } : {}),
      },
      {
        pool: deps.pool,
        db,
        embedders: deps.embedders,
        settings: deps.settings,
        defaultTimeoutMs: deps.defaultTimeoutMs,
        loadDeployed: loadChild,
      },
    );
    const recorded = await finishExecution({
      id: executionId,
      attempt: claim.attempt,
      outcome: {
        status: result.success ? 'completed' : 'failed',
        ...(result.success ? { output: result.output } : { error: result.error }),
        trace: result.spans,
        cost: executionCost(result.models),
        startedAt,
        endedAt: result.endedAt,
      },
    });
    if (!recorded) {
      deps.log.warn('execution taken over by another attempt; result dropped', {
        executionId,
        attempt: claim.attempt,
      });
    }
  };
}

export function deadExecutionHandler(db: Db) {
  return async (job: Job<WorkflowExecutePayload>) => {
    await abandonExecution(
      db,
      job.data.executionId,
      'The runner executing this workflow stopped responding, and retries ran out',
    );
  };
}
