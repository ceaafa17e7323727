// Enqueues completion callbacks (delivered by runner/callback-jobs.ts) inside the transaction that
// records an execution's end: a runner finishing it, or an API or operator cancelling it.
import type { PgBoss } from 'pg-boss';
import type { Config } from '../config.ts';
import type { Queryable } from '../db/client.ts';
import { sendInTransaction } from './boss.ts';
import { type ExecutionCallbackPayload, QUEUES } from './queues.ts';

/** Enqueues the callback deliveries of executions that just ended, inside the transaction recording it. */
export type SendCallbacks = (tx: Queryable, executionIds: string[]) => Promise<void>;

/** Enqueues the `paused` event of an execution that just paused, inside the transaction pausing it. */
export type SendPausedCallback = (tx: Queryable, executionId: string, contextId: string) => Promise<void>;

export function pausedCallbackSender(boss: PgBoss, config: Config): SendPausedCallback {
  const retryLimit = config.CALLBACK_RETRY_LIMIT;
  return (tx, executionId, contextId) =>
    sendInTransaction(boss, tx, QUEUES.executionCallback, [
      {
        // Its own job id: the execution's id is kept for the delivery of its end.
        id: crypto.randomUUID(),
        data: { executionId, retryLimit, paused: { contextId } } satisfies ExecutionCallbackPayload,
        retryLimit,
        retryDelay: config.CALLBACK_RETRY_DELAY_SECONDS,
        retryBackoff: true,
        retryDelayMax: config.CALLBACK_RETRY_DELAY_MAX_SECONDS,
        expireInSeconds: Math.ceil(config.CALLBACK_TIMEOUT_MS / 1000) + 60,
      },
    ]);
}

export function callbackSender(boss: PgBoss, config: Config): SendCallbacks {
  const retryLimit = config.CALLBACK_RETRY_LIMIT;
  return (tx, executionIds) =>
    sendInTransaction(
      boss,
      tx,
      QUEUES.executionCallback,
      // The execution id is the job id: an execution's end can only enqueue one delivery.
      executionIds.map((id) => ({
        id,
        data: { executionId: id, retryLimit } satisfies ExecutionCallbackPayload,
        retryLimit,
        retryDelay: config.CALLBACK_RETRY_DELAY_SECONDS,
        retryBackoff: true,
        retryDelayMax: config.CALLBACK_RETRY_DELAY_MAX_SECONDS,
        // An attempt lasts the timeout plus a DNS lookup; a runner that died mid-attempt loses it.
        expireInSeconds: Math.ceil(config.CALLBACK_TIMEOUT_MS / 1000) + 60,
      })),
    );
}
