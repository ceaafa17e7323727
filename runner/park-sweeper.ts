// The runner's sweep of parked executions (runner/executor/park.ts): every interval it resumes those
// that are due by its clock (jobs/resume-parked.ts). Every runner sweeps; the row locks let each due
// execution be taken once. Parked executions live in Postgres, so a restart of any process loses none:
// the next sweep of any runner finds them.
import type { PgBoss } from 'pg-boss';
import type { Db } from '../db/client.ts';
import { resumeDueExecutions } from '../jobs/resume-parked.ts';
import type { Logger } from '../logger.ts';

/** How often a runner looks for due executions: a parked execution resumes at most this late. */
export const PARK_SWEEP_MS = 1_000;

export function startParkSweeper(deps: {
  db: Db;
  boss: PgBoss;
  log: Logger;
  now: () => Date;
  heartbeatSeconds?: number;
}): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  const sweep = () => {
    running = resumeDueExecutions(deps.db, deps.boss, deps.now(), deps.heartbeatSeconds).catch((err) =>
      deps.log.warn('sweep of parked executions failed; the next one retries', { error: String(err) }),
    );
  };
  const timer = setInterval(sweep, PARK_SWEEP_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
