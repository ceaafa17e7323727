// pg-boss on whichever backend is active: its own pool for a server, the PGlite adapter when
// embedded. Creates the queues with the retry, heartbeat and dead-letter policy runners rely on.
import { fromPglite, PgBoss } from 'pg-boss';
import type { Db, Queryable } from '../db/client.ts';
import type { Logger } from '../logger.ts';
import { QUEUES, WAKE_CHANNEL } from './queues.ts';

export interface BossOptions {
  log: Logger;
  /** A runner that sends no heartbeat for this long has its job retried elsewhere. */
  heartbeatSeconds?: number;
  superviseIntervalSeconds?: number;
  /** Senders (the API alone) leave maintenance to the runners. */
  supervise?: boolean;
}

export async function startBoss(db: Db, options: BossOptions): Promise<PgBoss> {
  const superviseSeconds = options.superviseIntervalSeconds ?? 10;
  const common = {
    supervise: options.supervise ?? true,
    superviseIntervalSeconds: superviseSeconds,
    // The heartbeat and expiry checks run in the monitor pass, which has its own (60 s) cadence.
    monitorIntervalSeconds: superviseSeconds,
    schedule: false,
  };
  // On a server, pg-boss shares the service's own pool: one set of connections, and postgres.js
  // sends each query in one write where node-postgres makes several (every write is a syscall).
  const boss = db.pglite
    ? new PgBoss({ db: fromPglite(db.pglite), backend: 'pglite', ...common })
    : new PgBoss({ db: adapt(db), ...common });
  // Background loops report here instead of crashing the process.
  boss.on('error', (err) => options.log.error('queue error', { err }));
  await boss.start();
  await boss.createQueue(QUEUES.workflowExecuteDead, { retryLimit: 0 });
  await boss.createQueue(QUEUES.workflowExecute, {
    // A retry is a fresh attempt on another runner after the first one died or hung.
    retryLimit: 2,
    retryDelay: 1,
    heartbeatSeconds: options.heartbeatSeconds ?? 30,
    deadLetter: QUEUES.workflowExecuteDead,
  });
  await boss.createQueue(QUEUES.knowledgeIngestDead, { retryLimit: 0 });
  await boss.createQueue(QUEUES.knowledgeIngest, {
    retryLimit: 2,
    retryDelay: 5,
    heartbeatSeconds: options.heartbeatSeconds ?? 30,
    deadLetter: QUEUES.knowledgeIngestDead,
  });
  // pg-boss looks a queue up on first use through its own connection, and caches it. Embedded,
  // that connection is the one a sending transaction holds, so a first send inside a transaction
  // would wait for itself: an empty insert fills the cache now, outside any transaction.
  for (const queue of Object.values(QUEUES)) await boss.insert(queue, []);
  return boss;
}

/** pg-boss's database interface over ours: parameterised statements, or scripts of several. */
function adapt(db: Queryable) {
  return {
    executeSql: async (text: string, values?: unknown[]) => ({
      rows: values?.length ? await db.query(text, values) : await db.script(text),
    }),
  };
}

/**
 * Sends jobs inside the caller's transaction, so rows and their jobs commit together (or neither
 * does), and wakes idle runners when it commits. One statement for all the jobs.
 */
export async function sendInTransaction(
  boss: PgBoss,
  tx: Queryable,
  queue: string,
  jobs: { id: string; data: object; heartbeatSeconds?: number }[],
) {
  if (!jobs.length) return;
  // Sent together: the notification is only delivered at commit, after the jobs exist.
  await Promise.all([
    boss.insert(
      queue,
      jobs.map((j) => ({
        id: j.id,
        data: j.data,
        ...(j.heartbeatSeconds ? { heartbeatSeconds: j.heartbeatSeconds } : {}),
      })),
      { db: adapt(tx) },
    ),
    tx.query('select pg_notify($1, $2)', [WAKE_CHANNEL, queue]),
  ]);
}
