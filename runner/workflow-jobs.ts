// The runner's work on queue `workflow-execute`: claim the execution, run its deployed version,
// record the outcome (which notifies the waiting API, and enqueues the completion callback when the
// execution has one), and fail executions whose job ran out of retries because the runners holding
// it kept dying.
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
import type { SendCallbacks } from './callback-jobs.ts';
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
  /** Enqueues completion callbacks in the transaction that records the end. */
  sendCallbacks: SendCallbacks;
}

export function workflowJobHandler(deps: WorkflowJobDeps) {
  const { db } = deps;
  const versions = createVersionCache(db);
  // Concurrent executions claim and record together: one statement per batch, not per execution.
  const claimExecution = createBatcher(async (ids: string[]) => {
    const claims = await claimExecutions(db, ids);
    return ids.map((id): Claim | null => claims.get(id) ?? null);
  });
  type Finished = { id: string; attempt: number; outcome: ExecutionOutcome };
  const finishPlain = createBatcher(async (results: Finished[]) => {
    const recorded = await finishExecutions(db, results);
    return results.map((r) => recorded.has(r.id));
  });
  // Executions with a callback pay for a transaction, so the end and its delivery job commit together.
  const finishWithCallback = createBatcher((results: Finished[]) =>
    db.transaction(async (tx) => {
      const recorded = await finishExecutions(tx, results);
      await deps.sendCallbacks(tx, [...recorded]);
      return results.map((r) => recorded.has(r.id));
    }),
  );
  const finishExecution = (claim: Claim, result: Finished) =>
    claim.has_callback ? finishWithCallback(result) : finishPlain(result);
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
      await finishExecution(claim, { id: executionId, attempt: claim.attempt, outcome });
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
    const recorded = await finishExecution(claim, {
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

export function deadExecutionHandler(db: Db, sendCallbacks: SendCallbacks) {
  return async (job: Job<WorkflowExecutePayload>) => {
    const { executionId } = job.data;
    await db.transaction(async (tx) => {
      const ended = await abandonExecution(
        tx,
        executionId,
        'The runner executing this workflow stopped responding, and retries ran out',
      );
      if (ended?.hasCallback) await sendCallbacks(tx, [executionId]);
    });
  };
}
