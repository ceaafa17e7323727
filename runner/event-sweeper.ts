// The runner's sweep of stream events (db/execution-events.ts): the events of streamed executions
// are kept EXECUTION_EVENTS_RETENTION_HOURS for clients that reconnect, then dropped. Every runner
// sweeps (a delete of rows already gone is a no-op, so runners need no coordination), off the
// request path. The timer ticks often but sweeps only when its clock says an interval has passed,
// so an injected clock drives it as it drives the park sweeper.
import type { Db } from '../db/client.ts';
import { sweepExecutionEvents } from '../db/execution-events.ts';
import type { Logger } from '../logger.ts';

/** How often the sweeper looks at its clock (a comparison, no query). */
const TICK_MS = 1_000;
/** Clock time between sweeps: events outlive their retention by at most this. */
export const EVENT_SWEEP_INTERVAL_MS = 10 * 60 * 1000;

export function startEventSweeper(deps: { db: Db; log: Logger; now: () => Date; retentionHours: number }): {
  stop(): Promise<void>;
} {
  let nextSweepAt = 0;
  let running: Promise<unknown> | null = null;
  const tick = () => {
    const now = deps.now().getTime();
    if (running || now < nextSweepAt) return;
    nextSweepAt = now + EVENT_SWEEP_INTERVAL_MS;
    const before = new Date(now - deps.retentionHours * 3_600_000);
    running = sweepExecutionEvents(deps.db, before)
      .then((n) => {
        if (n) deps.log.debug('swept stream events', { count: n });
      })
      .catch((err: unknown) => {
        // The next interval tries again; until then the events are only kept a little longer.
        deps.log.warn('sweep of stream events failed; the next one retries', { error: String(err) });
      })
      .finally(() => {
        running = null;
      });
  };
  const timer = setInterval(tick, TICK_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
