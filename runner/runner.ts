// A runner: the queue consumer of this process. It pumps `workflow-execute` into the executor with
// bounded concurrency, with user code in a worker-thread pool, and stops gracefully: no new jobs,
// running executions finish, then the pool and queue close.
import type { Clock, PgBoss } from 'pg-boss';
import type { Config } from '../config.ts';
import type { Db } from '../db/client.ts';
import { startBoss } from '../jobs/boss.ts';
import {
  type ExecutionCallbackPayload,
  type KnowledgeIngestPayload,
  QUEUES,
  type WorkflowExecutePayload,
  type WorkflowSchedulePayload,
} from '../jobs/queues.ts';
import { reconcileSchedules } from '../jobs/schedules.ts';
import { callbackSender, pausedCallbackSender } from '../jobs/send-callbacks.ts';
import { executionStarter } from '../jobs/start-execution.ts';
import type { Logger } from '../logger.ts';
import { createStorage } from '../storage/index.ts';
import { callbackJobHandler } from './callback-jobs.ts';
import { startCancelWatch } from './cancel-watch.ts';
import { createEmbedders } from './embeddings/index.ts';
import { startEventSweeper } from './event-sweeper.ts';
import type { RetryDelay } from './executor/retry.ts';
import { createIngestPool } from './ingestion/pool.ts';
import { settleLane, startPump } from './job-pump.ts';
import { deadDocumentHandler, ingestJobsInHand, knowledgeJobHandler } from './knowledge-jobs.ts';
import { startParkSweeper } from './park-sweeper.ts';
import { createFunctionPool } from './sandbox/pool.ts';
import { scheduleJobHandler } from './schedule-jobs.ts';
import { runnerSettings } from './settings.ts';
import { heapGuardLoads } from './threads/heap-guard.ts';
import { deadExecutionHandler, workflowJobHandler } from './workflow-jobs.ts';

export interface Runner {
  boss: PgBoss;
  stop(): Promise<void>;
}

export async function startRunner(deps: {
  db: Db;
  config: Config;
  log: Logger;
  encryptionKey: Buffer;
  /** pg-boss's clock (tests drive schedules with pg-boss's TestClock); the system clock otherwise. */
  bossClock?: Clock;
  /** The wait between a block's retry attempts (tests record delays instead of sleeping). */
  retryDelay?: RetryDelay;
  /** The clock parked executions are due by (tests move it); the system clock otherwise. */
  clock?: () => Date;
}): Promise<Runner> {
  const { db, config, log } = deps;
  const boss = await startBoss(db, {
    log,
    heartbeatSeconds: config.QUEUE_HEARTBEAT_SECONDS,
    superviseIntervalSeconds: config.QUEUE_SUPERVISE_SECONDS,
    schedule: true,
    scheduleCheckSeconds: config.SCHEDULE_CHECK_SECONDS,
    ...(deps.bossClock ? { clock: deps.bossClock } : {}),
  });
  const pool = createFunctionPool({
    ...(config.WORKER_THREADS ? { maxThreads: config.WORKER_THREADS } : {}),
    memoryMb: config.FUNCTION_MEMORY_MB,
    httpAllowList: config.HTTP_ALLOW_LIST,
  });
  void heapGuardLoads().then((loads) => {
    if (loads) return;
    // Deno sets no heap limit on worker threads and loads no Node addon: no build helps there.
    if (process.versions.deno !== undefined) {
      log.warn('memory limits do not hold on Deno', {
        risk: 'FUNCTION_MEMORY_MB and INGEST_MEMORY_MB are not enforced (Deno applies no worker heap limits; the heap guard is a Node addon): a function or a document takes what memory the machine gives until its time limit stops it',
        fix: 'run untrusted code and untrusted documents on Node 24',
      });
      return;
    }
    log.warn('heap guard not built for this Node', {
      risk: 'a function or a document allocating one huge object can abort this runner',
      fix: 'npm run build:native (needs Python 3, make and a C++ compiler)',
    });
  });
  const ingestPool = createIngestPool({
    maxThreads: config.INGEST_CONCURRENCY,
    memoryMb: config.INGEST_MEMORY_MB,
  });
  const embedders = createEmbedders(config, { embedLocalBatch: ingestPool.embedLocal });
  const storage = createStorage(config);
  const shutdown = new AbortController();
  // A statement settling jobs gives up after their heartbeat: by then the jobs it held up (their
  // heartbeats wait in the same lane) are being taken over anyway, and a slow database under load
  // should not cost retries before that.
  const settleDeadlineMs = config.QUEUE_HEARTBEAT_SECONDS * 1000;
  const common = { boss, db, log, settleDeadlineMs };
  const sendCallbacks = callbackSender(boss, config);
  // Executions complete their own jobs, in the statements that record their ends.
  const settleExecutions = settleLane(settleDeadlineMs);
  const cancels = await startCancelWatch(db, log);
  const executions = await startPump<WorkflowExecutePayload>({
    ...common,
    queue: QUEUES.workflowExecute,
    concurrency: config.RUNNER_CONCURRENCY,
    settle: settleExecutions,
    handlerCompletes: true,
    handle: workflowJobHandler({
      db,
      boss,
      settle: settleExecutions,
      embedders,
      encryptionKey: deps.encryptionKey,
      pool,
      settings: runnerSettings(config),
      log,
      defaultTimeoutMs: config.WORKFLOW_TIMEOUT_MS,
      ...(deps.retryDelay ? { retryDelay: deps.retryDelay } : {}),
      signal: shutdown.signal,
      sendCallbacks,
      sendPausedCallback: pausedCallbackSender(boss, config),
      cancels,
      streamAsyncCommit: config.STREAM_EVENTS_ASYNC_COMMIT,
      heartbeatSeconds: config.QUEUE_HEARTBEAT_SECONDS,
      ...(deps.clock ? { now: deps.clock } : {}),
    }),
  });
  const parked = startParkSweeper({
    db,
    boss,
    log,
    now: deps.clock ?? (() => new Date()),
    heartbeatSeconds: config.QUEUE_HEARTBEAT_SECONDS,
  });
  const sweptEvents = startEventSweeper({
    db,
    log,
    now: deps.clock ?? (() => new Date()),
    retentionHours: config.EXECUTION_EVENTS_RETENTION_HOURS,
  });
  const dead = await startPump<WorkflowExecutePayload>({
    ...common,
    queue: QUEUES.workflowExecuteDead,
    concurrency: 4,
    pollMs: 5000,
    handle: deadExecutionHandler(db, sendCallbacks, boss, config.QUEUE_HEARTBEAT_SECONDS),
  });
  const documents = await startPump<KnowledgeIngestPayload>({
    ...common,
    queue: QUEUES.knowledgeIngest,
    // More documents than store at once: the next ones are prepared while these store.
    concurrency: ingestJobsInHand(config.INGEST_CONCURRENCY),
    handle: knowledgeJobHandler({
      db,
      storage,
      pool: ingestPool,
      embedders,
      log,
      signal: shutdown.signal,
      storeConcurrency: config.INGEST_CONCURRENCY,
    }),
  });
  const deadDocuments = await startPump<KnowledgeIngestPayload>({
    ...common,
    queue: QUEUES.knowledgeIngestDead,
    concurrency: 4,
    pollMs: 5000,
    handle: deadDocumentHandler(db),
  });
  // Deliveries wait on receivers, not on the CPU: many at once. Retries are due by time, not by a
  // wake-up, so the poll finds them.
  // Firings start executions through the same path as the API: billed, limited, audited.
  await reconcileSchedules(db, boss, log);
  const firings = await startPump<WorkflowSchedulePayload>({
    ...common,
    queue: QUEUES.workflowSchedule,
    concurrency: 4,
    handle: scheduleJobHandler({
      db,
      boss,
      log,
      start: executionStarter({ db, config, queue: boss, clock: () => new Date() }),
    }),
  });
  const callbacks = await startPump<ExecutionCallbackPayload>({
    ...common,
    queue: QUEUES.executionCallback,
    concurrency: 16,
    handle: callbackJobHandler({ db, encryptionKey: deps.encryptionKey, config, log }),
  });
  return {
    boss,
    async stop() {
      await parked.stop();
      await sweptEvents.stop();
      await firings.stop();
      await dead.stop();
      // An attempt cut short by a stop is made again by the runner that next takes its job.
      await callbacks.stop(config.CALLBACK_TIMEOUT_MS);
      await deadDocuments.stop();
      // A document cut short is processed again by the next runner that takes its job.
      await documents.stop(10_000);
      // Running executions get the workflow time limit to finish; past it they are cancelled.
      await executions.stop(config.WORKFLOW_TIMEOUT_MS);
      shutdown.abort();
      await cancels.close();
      await pool.destroy();
      await ingestPool.destroy();
      await storage.close();
      // close: false: the database is the service's own, closed last by its owner.
      await boss.stop({ graceful: true, close: false, timeout: 5_000 });
    },
  };
}
