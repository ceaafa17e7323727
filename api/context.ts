// What every API route receives: its dependencies, and the typed Hono variables set by middleware.

import type { PgBoss } from 'pg-boss';
import type { Registry } from 'prom-client';
import type { Config } from '../config.ts';
import type { Principal } from '../db/api-keys.ts';
import type { Db } from '../db/client.ts';
import type { Logger } from '../logger.ts';
import type { CompletionWaiter } from './completion-waiter.ts';

export interface ApiDeps {
  db: Db;
  config: Config;
  log: Logger;
  /** Sends jobs to the runners. */
  queue: PgBoss;
  waiter: CompletionWaiter;
  /** Now, for rate limits and billing periods: tests move it instead of sleeping. */
  clock: () => Date;
  /** Where request latencies are recorded; none: not measured. */
  metrics?: Registry;
}

export type ApiEnv = {
  Variables: {
    requestId: string;
    principal: Principal;
    /** The process logger bound to this request's id. */
    log: Logger;
  };
};
