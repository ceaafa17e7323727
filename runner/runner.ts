// A runner: the queue consumer of this process. The Workflows and Knowledge issues register their
// workers here; this foundation starts the queue and stops it gracefully (stop fetching, drain).
import type { PgBoss } from 'pg-boss';
import type { Config } from '../config.ts';
import type { Db } from '../db/client.ts';
import type { Logger } from '../logger.ts';
import { startBoss } from './boss.ts';

export interface Runner {
  boss: PgBoss;
  stop(): Promise<void>;
}

export async function startRunner(deps: { db: Db; config: Config; log: Logger }): Promise<Runner> {
  const boss = await startBoss(deps.db, {
    ...(deps.config.DATABASE_URL ? { databaseUrl: deps.config.DATABASE_URL } : {}),
    log: deps.log,
  });
  return {
    boss,
    // graceful: let jobs in hand finish; close: false keeps the shared embedded database open.
    stop: () => boss.stop({ graceful: true, close: !deps.db.pglite, timeout: 30_000 }),
  };
}
