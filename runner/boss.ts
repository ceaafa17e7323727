// pg-boss on whichever backend is active: its own pool for a server, the PGlite adapter when
// embedded. LISTEN/NOTIFY wakes workers the moment a job is sent instead of at the next poll.
import { fromPglite, PgBoss } from 'pg-boss';
import type { Db } from '../db/client.ts';
import type { Logger } from '../logger.ts';
import { QUEUES } from './queues.ts';

export async function startBoss(db: Db, options: { databaseUrl?: string; log: Logger }): Promise<PgBoss> {
  const boss = db.pglite
    ? new PgBoss({ db: fromPglite(db.pglite), backend: 'pglite', useListenNotify: true })
    : new PgBoss({
        connectionString: options.databaseUrl as string,
        max: 4,
        useListenNotify: true,
        application_name: 'workflow-service-queue',
      });
  // Background loops report here instead of crashing the process.
  boss.on('error', (err) => options.log.error('queue error', { err }));
  await boss.start();
  for (const name of Object.values(QUEUES)) {
    // A runner that dies mid-job loses nothing: the job expires and is retried elsewhere.
    await boss.createQueue(name, {
      notify: true,
      retryLimit: 3,
      retryBackoff: true,
      expireInSeconds: 15 * 60,
    });
  }
  return boss;
}
