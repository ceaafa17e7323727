// The runner's work on queue `workflow-execute`: claim the execution, run its deployed version,
// record the outcome and complete its job in one transaction (the outcome notifies the waiting API,
// and enqueues the completion callback when the execution has one), and fail executions whose job
// ran out of retries because the runners holding it kept dying.
import type { Job, PgBoss } from 'pg-boss';
import { createBatcher } from '../db/batcher.ts';
import { type Db, GENERIC_PLANS } from '../db/client.ts';
import { type CancelledRun, settleCancelledStatement } from '../db/execution-cancels.ts';
import { type CheckpointRow, saveCheckpointsStatement } from '../db/execution-checkpoints.ts';
import { claimLimitedExecution, lockGroups } from '../db/execution-concurrency.ts';
import { parkExecution } from '../db/execution-parks.ts';
import {
  abandonExecution,
  type Claim,
  claimExecutions,
  type ExecutionOutcome,
  type FinishedExecution,
  finishExecutions,
  finishStatement,
  recordedIds,
} from '../db/executions.ts';
import { loadSecrets } from '../db/secrets.ts';
import { createVersionCache } from '../db/version-cache.ts';
import { deployedVersion } from '../db/workflow-deployments.ts';
import { completeJobsStatement, type JobAttempt } from '../jobs/boss.ts';
import { releaseSlots } from '../jobs/concurrency-slots.ts';
import { QUEUES, type WorkflowExecutePayload } from '../jobs/queues.ts';
import type { SendCallbacks, SendPausedCallback } from '../jobs/send-callbacks.ts';
import type { Logger } from '../logger.ts';
import type { RunnerSettings } from './blocks/block.ts';
import type { CancelWatch } from './cancel-watch.ts';
import { checkpointStore } from './checkpoint-store.ts';
import type { Embedders } from './embeddings/embedder.ts';
import { executionCost } from './execution-cost.ts';
import type { Definition } from './executor/definition.ts';
import { executeWorkflow } from './executor/execute.ts';
import type { PauseDetails } from './executor/park.ts';
import type { RetryDelay } from './executor/retry.ts';
import type { SettleLane } from './job-pump.ts';
import type { FunctionPool } from './sandbox/pool.ts';
import { streamWriter } from './stream-events.ts';

export interface WorkflowJobDeps {
  db: Db;
  /** The queue, whose jobs this handler completes together with their executions' ends. */
  boss: PgBoss;
  /** The lane the pump settles and marks its jobs in (see settleLane). */
  settle: SettleLane;
  embedders: Embedders;
  encryptionKey: Buffer;
  pool: FunctionPool;
  settings: RunnerSettings;
  log: Logger;
  defaultTimeoutMs: number;
  /** The wait between a block's retry attempts; in-process by default (runner/executor/retry.ts). */
  retryDelay?: RetryDelay;
  /** Aborted on a forced shutdown: running executions stop and are recorded as cancelled. */
  signal?: AbortSignal;
  /** Enqueues completion callbacks in the transaction that records the end. */
  sendCallbacks: SendCallbacks;
  /** Enqueues a callback's `paused` event in the transaction that pauses the execution. */
  sendPausedCallback?: SendPausedCallback;
  /** Tells of executions cancelled while they run; none: they run to the end. */
  cancels?: CancelWatch;
  /** STREAM_EVENTS_ASYNC_COMMIT: stream events commit without waiting for the disk. */
  streamAsyncCommit?: boolean;
  /** The heartbeat of the jobs sent to executions let in by a concurrency slot that freed. */
  heartbeatSeconds?: number;
  /** The clock parked blocks are due by (runner/executor/park.ts); the system clock by default. */
  now?: () => Date;
}

export function workflowJobHandler(deps: WorkflowJobDeps) {
  const { db } = deps;
  const versions = createVersionCache<Definition>(db);
  // Concurrent executions claim and record together: one statement per batch, not per execution.
  const claimExecution = createBatcher(async (ids: string[]) => {
    const claims = await claimExecutions(db, ids);
    return ids.map((id): Claim | null => claims.get(id) ?? null);
  });
  // An execution's end and its job's completion commit together, so neither is ever recorded
  // without the other, in one round trip for all the executions that ended together.
  type Finished = FinishedExecution & { job: JobAttempt };
  const queue = QUEUES.workflowExecute;
  const completeJobs = (results: Finished[]) =>
    completeJobsStatement(
      deps.boss,
      queue,
      results.map((r) => r.job),
    );
  const finishPlain = createBatcher((results: Finished[]) =>
    deps.settle(async () => {
      const [, finished] = await db.atomically([
        GENERIC_PLANS,
        finishStatement(results),
        await completeJobs(results),
      ]);
      const recorded = recordedIds(finished ?? []);
      return results.map((r) => recorded.has(r.id));
    }),
  );
  // Executions with a callback also enqueue its delivery, in the same transaction.
  const finishWithCallback = createBatcher((results: Finished[]) =>
    deps.settle(() =>
      db.transaction(async (tx) => {
        const recorded = await finishExecutions(tx, results);
        await deps.sendCallbacks(tx, [...recorded]);
        const { text, params } = await completeJobs(results);
        await tx.query(text, params);
        return results.map((r) => recorded.has(r.id));
      }),
    ),
  );
  // A cancelled run's end was recorded by the cancel (callback included): what ran is added to it.
  const settleCancelled = createBatcher((runs: (CancelledRun & { job: JobAttempt })[]) =>
    deps.settle(async () => {
      await db.atomically([
        GENERIC_PLANS,
        settleCancelledStatement(runs),
        await completeJobsStatement(
          deps.boss,
          queue,
          runs.map((r) => r.job),
        ),
      ]);
      return runs.map(() => undefined);
    }),
  );
  // Executions of a limited workflow take their groups' locks first (the order every claim and end
  // of a group follows), record, and hand their slots to the next waiting ones, in one transaction.
  const finishLimited = createBatcher((results: (Finished & { callback: boolean })[]) =>
    deps.settle(() =>
      db.transaction(async (tx) => {
        await lockGroups(
          tx,
          results.map((r) => r.id),
        );
        const recorded = await finishExecutions(tx, results);
        if (recorded.size) {
          const callbacks = results.filter((r) => r.callback && recorded.has(r.id)).map((r) => r.id);
          if (callbacks.length) await deps.sendCallbacks(tx, callbacks);
          await releaseSlots(deps.boss, tx, [...recorded], deps.heartbeatSeconds);
        }
        const { text, params } = await completeJobs(results);
        await tx.query(text, params);
        return results.map((r) => recorded.has(r.id));
      }),
    ),
  );
  const finishExecution = (claim: Claim, result: Finished, limited: boolean) =>
    limited
      ? finishLimited({ ...result, callback: claim.has_callback })
      : claim.has_callback
        ? finishWithCallback(result)
        : finishPlain(result);
  // A limited execution is claimed alone, under its group's lock; one that must wait its turn has
  // its job completed in the same transaction (its slot's release sends it a new one).
  const claimLimited = (executionId: string, job: JobAttempt) =>
    deps.settle(() =>
      db.transaction(async (tx) => {
        await lockGroups(tx, [executionId]);
        const claimed = await claimLimitedExecution(tx, executionId);
        if (claimed && 'waiting' in claimed) {
          const { text, params } = await completeJobsStatement(deps.boss, queue, [job]);
          await tx.query(text, params);
          return 'waiting' as const;
        }
        return claimed?.claim ?? null;
      }),
    );
  // Checkpoints of concurrent runs commit together (a crash after the commit never repeats the block).
  const saveCheckpoint = createBatcher(async (rows: CheckpointRow[]) => {
    const { text, params } = saveCheckpointsStatement(rows);
    await db.query(text, params);
    return rows.map(() => undefined);
  });
  // A parked execution lets go of its concurrency slot and its job in the transaction that parks it;
  // the sweeper (runner/park-sweeper.ts) sends it a new job when it is due.
  const park = (
    id: string,
    attempt: number,
    until: Date | null,
    job: JobAttempt,
    limited: boolean,
    pause?: PauseDetails,
    hasCallback?: boolean,
  ) =>
    deps.settle(() =>
      db.transaction(async (tx) => {
        if (limited) await lockGroups(tx, [id]);
        const parked = await parkExecution(tx, id, attempt, until, pause);
        if (!parked) return false;
        if (pause && hasCallback) await deps.sendPausedCallback?.(tx, id, pause.contextId);
        if (limited) await releaseSlots(deps.boss, tx, [id], deps.heartbeatSeconds);
        const { text, params } = await completeJobsStatement(deps.boss, queue, [job]);
        await tx.query(text, params);
        return true;
      }),
    );
  const loadChild = async (workspaceId: string, workflowId: string) => {
    const d = await deployedVersion(db, workflowId);
    return d && d.workspaceId === workspaceId
      ? ((await versions.get(workflowId, d.version))?.definition ?? null)
      : null;
  };
  return async (job: Job<WorkflowExecutePayload>) => {
    const { executionId } = job.data;
    const limited = job.data.limited === true;
    const jobAttempt = { id: job.id, retryCount: job.retryCount };
    const claim = limited ? await claimLimited(executionId, jobAttempt) : await claimExecution(executionId);
    if (claim === 'waiting') return;
    if (!claim) {
      // Finished already: this delivery is a duplicate.
      await deps.settle(() => deps.boss.complete(queue, [jobAttempt]));
      return;
    }
    const startedAt = claim.started_at;
    const attempt = { id: executionId, attempt: claim.attempt, job: jobAttempt };
    const version = await versions.get(claim.workflow_id, claim.version);
    if (!version) {
      const error = 'The deployed version no longer exists';
      const outcome: ExecutionOutcome = { status: 'failed', error, startedAt, endedAt: new Date() };
      await finishExecution(claim, { ...attempt, outcome }, limited);
      return;
    }
    const watched = deps.cancels?.watch(executionId, deps.signal);
    const signal = watched?.signal ?? deps.signal;
    const events = claim.stream_outputs
      ? streamWriter(db, deps.log, executionId, claim.stream_outputs, {
          workflowId: claim.workflow_id,
          startedAt,
          asyncCommit: deps.streamAsyncCommit === true,
        })
      : undefined;
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
        ...(signal ? { signal } : {}),
        checkpoints: await checkpointStore(db, executionId, claim.attempt, saveCheckpoint),
        ...(events ? { events } : {}),
        parkable: true,
      },
      {
        pool: deps.pool,
        db,
        embedders: deps.embedders,
        settings: deps.settings,
        defaultTimeoutMs: deps.defaultTimeoutMs,
        loadDeployed: loadChild,
        ...(deps.retryDelay ? { retryDelay: deps.retryDelay } : {}),
        ...(deps.now ? { now: deps.now } : {}),
      },
    ).finally(() => watched?.release());
    // A stream's reader ends it when the execution's end is recorded: every event goes first.
    await events?.drain();
    if ((result.parkedUntil || result.pause) && !watched?.cancelled()) {
      const until = result.parkedUntil ?? null;
      if (
        await park(executionId, claim.attempt, until, jobAttempt, limited, result.pause, claim.has_callback)
      )
        return;
    }
    if (watched?.cancelled()) {
      await settleCancelled({
        id: executionId,
        attempt: claim.attempt,
        trace: result.spans,
        cost: executionCost(result.models),
        job: jobAttempt,
      });
      return;
    }
    const recorded = await finishExecution(
      claim,
      {
        ...attempt,
        outcome: {
          status: result.success ? 'completed' : 'failed',
          ...(result.success ? { output: result.output } : { error: result.error }),
          trace: result.spans,
          cost: executionCost(result.models),
          startedAt,
          endedAt: result.endedAt,
        },
      },
      limited,
    );
    if (!recorded) {
      // A cancel that landed as the run ended: what ran goes on the cancelled row (and is charged).
      const { text, params } = settleCancelledStatement([
        { id: executionId, attempt: claim.attempt, trace: result.spans, cost: executionCost(result.models) },
      ]);
      if ((await db.query(text, params)).length > 0) return;
      deps.log.warn('execution taken over by another attempt; result dropped', {
        executionId,
        attempt: claim.attempt,
      });
    }
  };
}

export function deadExecutionHandler(
  db: Db,
  sendCallbacks: SendCallbacks,
  boss?: PgBoss,
  heartbeatSeconds?: number,
) {
  return async (job: Job<WorkflowExecutePayload>) => {
    const { executionId, limited } = job.data;
    await db.transaction(async (tx) => {
      // An abandoned limited execution frees its slot (or its place in the queue) like any end.
      if (limited) await lockGroups(tx, [executionId]);
      const ended = await abandonExecution(
        tx,
        executionId,
        'The runner executing this workflow stopped responding, and retries ran out',
      );
      if (ended?.hasCallback) await sendCallbacks(tx, [executionId]);
      if (limited && ended && boss) await releaseSlots(boss, tx, [executionId], heartbeatSeconds);
    });
  };
}
