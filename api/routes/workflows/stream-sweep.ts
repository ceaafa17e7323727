// Drops the events of streamed executions past EXECUTION_EVENTS_RETENTION_HOURS. On use rather than
// on a schedule, as idempotency keys are purged: the first stream opened after an interval sweeps
// (in the background; a failed sweep is logged and tried again at the next interval).
import { sweepExecutionEvents } from '../../../db/execution-events.ts';
import type { ApiDeps } from '../../context.ts';

const SWEEP_INTERVAL_MS = 10 * 60 * 1000;

export function eventSweeper({ db, config, clock, log }: ApiDeps): () => void {
  let nextSweepAt = 0;
  return () => {
    const now = clock().getTime();
    if (now < nextSweepAt) return;
    nextSweepAt = now + SWEEP_INTERVAL_MS;
    const before = new Date(now - config.EXECUTION_EVENTS_RETENTION_HOURS * 3_600_000);
    sweepExecutionEvents(db, before).catch((err: unknown) =>
      log.error('could not sweep execution events', { err }),
    );
  };
}
