// How a runner learns that an execution it is running was cancelled: the API (or admin plane) that
// records the cancel notifies EXECUTION_CANCEL_CHANNEL, which this process LISTENs to (the same
// mechanism in embedded PGlite and on a server); a notice missed while the connection was being
// re-established is caught by a poll of the running executions' states, every POLL_MS while any run.
import type { Db } from '../db/client.ts';
import { cancelledAmong, EXECUTION_CANCEL_CHANNEL } from '../db/execution-cancels.ts';
import type { Logger } from '../logger.ts';
import { linkedAbort } from './executor/signals.ts';

const POLL_MS = 250;

/** The reason a cancelled run's signal carries. */
export class CancelledError extends Error {
  override name = 'CancelledError';
  constructor() {
    super('Execution was cancelled');
  }
}

export interface Watched {
  /** Aborted when the execution is cancelled, or when `parent` (the runner's shutdown) aborts. */
  signal: AbortSignal;
  /** True once a cancel aborted it. */
  cancelled(): boolean;
  /** Stops watching: call it when the run ended. */
  release(): void;
}

export interface CancelWatch {
  watch(executionId: string, parent?: AbortSignal): Watched;
  close(): Promise<void>;
}

export async function startCancelWatch(db: Db, log: Logger, pollMs = POLL_MS): Promise<CancelWatch> {
  const running = new Map<string, () => void>();
  const cancel = (id: string) => running.get(id)?.();
  const unlisten = await db.listen(EXECUTION_CANCEL_CHANNEL, cancel);
  let polling = false;
  const timer = setInterval(() => {
    if (polling || running.size === 0) return;
    polling = true;
    cancelledAmong(db, [...running.keys()])
      .then((ids) => {
        for (const id of ids) cancel(id);
      })
      .catch((err: Error) => log.warn('cancel poll failed', { error: err.message }))
      .finally(() => {
        polling = false;
      });
  }, pollMs);
  timer.unref();
  return {
    watch(executionId, parent) {
      const link = linkedAbort(parent);
      let cancelled = false;
      running.set(executionId, () => {
        if (cancelled || link.signal.aborted) return;
        cancelled = true;
        link.abort(new CancelledError());
      });
      return {
        signal: link.signal,
        cancelled: () => cancelled,
        release() {
          running.delete(executionId);
          link.unlink();
        },
      };
    },
    async close() {
      clearInterval(timer);
      await unlisten();
    },
  };
}
