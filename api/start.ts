// Wires the API's dependencies: a sender on the queues (the runner's, when one shares this process)
// and the completion waiter; returns the app and how to close what it opened.
import type { PgBoss } from 'pg-boss';
import type { Registry } from 'prom-client';
import type { Config } from '../config.ts';
import type { Db } from '../db/client.ts';
import { startBoss } from '../jobs/boss.ts';
import type { Logger } from '../logger.ts';
import { createStorage } from '../storage/index.ts';
import { createApp } from './app.ts';
import { startCompletionWaiter } from './completion-waiter.ts';
import { startSpoolSweeper } from './routes/tables/import-spools.ts';

export async function startApi(deps: {
  db: Db;
  config: Config;
  log: Logger;
  queue?: PgBoss;
  clock?: () => Date;
  /** Where request latencies are recorded (served at /metrics); none: not measured. */
  metrics?: Registry;
}) {
  const { db, config, log } = deps;
  const ownQueue = deps.queue
    ? null
    : await startBoss(db, {
        log,
        supervise: false,
      });
  const queue = deps.queue ?? (ownQueue as PgBoss);
  const waiter = await startCompletionWaiter(db);
  // Removes the import files a process that died left in storage (at start-up, then every few minutes).
  const spoolStorage = createStorage(config);
  const spools = startSpoolSweeper({ db, storage: spoolStorage, log });
  return {
    app: createApp({
      db,
      config,
      log,
      queue,
      waiter,
      clock: deps.clock ?? (() => new Date()),
      ...(deps.metrics ? { metrics: deps.metrics } : {}),
    }),
    queue,
    async close() {
      await waiter.close();
      await spools.close();
      await spoolStorage.close();
      await ownQueue?.stop({ graceful: false, close: false });
    },
  };
}
