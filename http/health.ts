// Probes for orchestrators, without an API key: `/health` says the process answers (liveness,
// never touches the database, so a slow database does not get the process restarted); `/ready`
// says it can do its work: the database answers and the queue's schema is reachable.
import { Hono } from 'hono';
import type { PgBoss } from 'pg-boss';
import type { Db } from '../db/client.ts';
import { QUEUES } from '../jobs/queues.ts';
import type { Logger } from '../logger.ts';

// A probe that waits longer than this is as bad as a failed one: the load balancer moves on.
const CHECK_TIMEOUT_MS = 2000;

type CheckResult = 'ok' | 'error';

export function healthRoutes(deps: { db: Db; queue: PgBoss; log: Logger }) {
  const app = new Hono();
  app.get('/health', (c) => c.json({ status: 'ok' }));
  app.get('/ready', async (c) => {
    const log = (c.var as { log?: Logger }).log ?? deps.log;
    const [database, queue] = await Promise.all([
      check('database', log, () => deps.db.query('select 1')),
      check('queue', log, async () => {
        if (!(await deps.queue.getQueue(QUEUES.workflowExecute)))
          throw new Error(`queue ${QUEUES.workflowExecute} does not exist`);
      }),
    ]);
    const checks = { database, queue };
    return database === 'ok' && queue === 'ok'
      ? c.json({ status: 'ready', checks })
      : c.json({ error: 'Not ready', checks }, 503);
  });
  return app;
}

/** Runs one probe with a deadline; why it failed goes to the log, not to the (unauthenticated) caller. */
async function check(name: string, log: Logger, probe: () => Promise<unknown>): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([probe(), deadline]);
    return 'ok';
  } catch (err) {
    log.warn('readiness check failed', { check: name, err });
    return 'error';
  } finally {
    clearTimeout(timer);
  }
}
