// pg-boss on whichever backend is active: its own pool for a server, the PGlite adapter when
// embedded. Creates the queues with the retry, heartbeat and dead-letter policy runners rely on.
import { CLOCK_OVERRIDE_SETTING, type Clock, fromPglite, type JobInsert, PgBoss } from 'pg-boss';
import type { Db, Queryable, Statement } from '../db/client.ts';
import { withMigrationLock } from '../db/migrate.ts';
import type { Logger } from '../logger.ts';
import { QUEUES, WAKE_CHANNEL } from './queues.ts';

export interface BossOptions {
  log: Logger;
  /** A runner that sends no heartbeat for this long has its job retried elsewhere. */
  heartbeatSeconds?: number;
  superviseIntervalSeconds?: number;
  /** Senders (the API alone) leave maintenance to the runners. */
  supervise?: boolean;
  /**
   * Runners run pg-boss's cron pass (one instance per interval claims it, so an occurrence fires
   * once however many runners there are) and forward its firings; senders only write schedules.
   */
  schedule?: boolean;
  /** How often the cron pass looks for due schedules (1–45 s): a firing lands this late at most. */
  scheduleCheckSeconds?: number;
  /** pg-boss's clock: a test drives the cron pass and job times with pg-boss's TestClock. */
  clock?: Clock;
}

export async function startBoss(db: Db, options: BossOptions): Promise<PgBoss> {
  const superviseSeconds = options.superviseIntervalSeconds ?? 10;
  const common = {
    supervise: options.supervise ?? true,
    superviseIntervalSeconds: superviseSeconds,
    // The heartbeat and expiry checks run in the monitor pass, which has its own (60 s) cadence.
    monitorIntervalSeconds: superviseSeconds,
    // Cron is read on the database's clock (pg-boss measures each instance's skew against it), so
    // runners whose clocks disagree still agree on when an occurrence is due.
    schedule: options.schedule ?? false,
    cronMonitorIntervalSeconds: options.scheduleCheckSeconds ?? 10,
    // The forwarding of a due occurrence to its queue polls on its own; a pass's sends wait for it.
    cronWorkerIntervalSeconds: Math.min(2, options.scheduleCheckSeconds ?? 10),
    ...(options.clock ? { clock: options.clock } : {}),
  };
  // On a server, pg-boss shares the service's own pool: one set of connections, and postgres.js
  // sends each query in one write where node-postgres makes several (every write is a syscall).
  const boss = db.pglite
    ? new PgBoss({ db: fromPglite(db.pglite), backend: 'pglite', ...common })
    : new PgBoss({ db: adapt(db, options.clock), ...common });
  // Background loops report here instead of crashing the process.
  boss.on('error', (err) => options.log.error('queue error', { err }));
  // Clock skew past a minute, and a schedule its pass could not read.
  if (common.schedule) boss.on('warning', (w) => options.log.warn('queue warning', { ...w }));
  // Processes starting together on an empty database would race to install pg-boss's schema and
  // create the queues: one at a time, under the migration lock.
  await withMigrationLock(db, async () => {
    await boss.start();
    await createQueues(boss, options);
  });
  // pg-boss looks a queue up on first use through its own connection, and caches it. Embedded,
  // that connection is the one a sending transaction holds, so a first send inside a transaction
  // would wait for itself: an empty insert fills the cache now, outside any transaction.
  for (const queue of Object.values(QUEUES)) await boss.insert(queue, []);
  return boss;
}

async function createQueues(boss: PgBoss, options: BossOptions) {
  await boss.createQueue(QUEUES.workflowExecuteDead, { retryLimit: 0 });
  await boss.createQueue(QUEUES.workflowExecute, {
    // A retry is a fresh attempt on another runner after the first one died or hung.
    retryLimit: 2,
    retryDelay: 1,
    heartbeatSeconds: options.heartbeatSeconds ?? 30,
    deadLetter: QUEUES.workflowExecuteDead,
  });
  // A firing: retried only when its handler failed unexpectedly (the handler records refusals).
  await boss.createQueue(QUEUES.workflowSchedule, { retryLimit: 2, retryDelay: 5 });
  await boss.createQueue(QUEUES.knowledgeIngestDead, { retryLimit: 0 });
  await boss.createQueue(QUEUES.knowledgeIngest, {
    retryLimit: 2,
    retryDelay: 5,
    heartbeatSeconds: options.heartbeatSeconds ?? 30,
    deadLetter: QUEUES.knowledgeIngestDead,
  });
  // Each delivery is sent with its retry policy from the configuration (CALLBACK_RETRY_*), since a
  // queue's own options are fixed when it is first created; these are only its defaults.
  await boss.createQueue(QUEUES.executionCallback, {
    retryLimit: 29,
    retryDelay: 30,
    retryBackoff: true,
    retryDelayMax: 3600,
    expireInSeconds: 120,
  });
}

/** pg-boss's database interface over ours: parameterised statements, or scripts of several. */
function adapt(db: Queryable, clock?: Clock) {
  return {
    executeSql: async (text: string, values?: unknown[]) => ({
      rows: values?.length ? await db.query(text, values) : await db.script(text),
    }),
    // A TestClock needs every session pg-boss uses opted in to its time. Our pool cannot run
    // statements on each connection it opens, so a test opts the whole database in before
    // connecting (ALTER DATABASE … SET pgboss.test_clock = on); this checks that it did.
    ...(clock && {
      async setSessionStatements(statements: string[]) {
        if (!statements.length) return;
        const [row] = await db.query<{ value: string | null }>('select current_setting($1, true) as value', [
          CLOCK_OVERRIDE_SETTING,
        ]);
        if (row?.value !== 'on')
          throw new Error(
            `A test clock on a server database needs ${CLOCK_OVERRIDE_SETTING} = on for the database`,
          );
      },
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
  jobs: ({ id: string; data: object } & Omit<JobInsert, 'id' | 'data'>)[],
) {
  if (!jobs.length) return;
  // Sent together: the notification is only delivered at commit, after the jobs exist.
  await Promise.all([
    boss.insert(
      queue,
      jobs.map(({ heartbeatSeconds, ...j }) => ({ ...j, ...(heartbeatSeconds ? { heartbeatSeconds } : {}) })),
      { db: adapt(tx) },
    ),
    tx.query('select pg_notify($1, $2)', [WAKE_CHANNEL, queue]),
  ]);
}

/** A fetched job's attempt: settling it by this leaves the job alone once another attempt holds it. */
export interface JobAttempt {
  id: string;
  retryCount: number;
}

/**
 * pg-boss's own statement completing these jobs (each fenced to the attempt it was fetched in), to be
 * run with statements of ours (Db.atomically) rather than in a round trip and a commit of its own.
 * pg-boss builds it as it builds every completion; the database handed to it keeps it unrun.
 */
export async function completeJobsStatement(
  boss: PgBoss,
  queue: string,
  jobs: JobAttempt[],
): Promise<Statement> {
  let statement: Statement | undefined;
  const keep = {
    async executeSql(text: string, values?: unknown[]) {
      statement = { text, params: values ?? [] };
      return { rows: [{ count: 0, ids: [] }] };
    },
  };
  await boss.complete(queue, jobs, null, { db: keep });
  if (!statement) throw new Error(`pg-boss built no statement to complete jobs of ${queue}`);
  return statement;
}
