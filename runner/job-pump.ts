// Feeds one queue to a handler with bounded concurrency: fetches as many jobs as there are free
// slots, woken by NOTIFY when a job is sent (a poll is only the backstop), keeps heartbeats going
// for the jobs in hand, completes each as it ends, and on stop lets the running ones finish.
import type { Job, PgBoss } from 'pg-boss';
import { createBatcher } from '../db/batcher.ts';
import type { Db } from '../db/client.ts';
import type { Logger } from '../logger.ts';
import { WAKE_CHANNEL } from './queues.ts';

const HEARTBEAT_MS = 3000;

export interface PumpOptions<T> {
  boss: PgBoss;
  db: Db;
  queue: string;
  concurrency: number;
  handle(job: Job<T>): Promise<void>;
  log: Logger;
  pollMs?: number;
}

export interface Pump {
  /** Stops fetching and waits for the jobs in hand (at most timeoutMs). */
  stop(timeoutMs?: number): Promise<void>;
  readonly active: number;
}

export async function startPump<T>(o: PumpOptions<T>): Promise<Pump> {
  const inFlight = new Map<string, Promise<void>>();
  let stopping = false;
  let fetching = false;
  let wakeAgain = false;
  const refillBatch = Math.max(1, Math.floor(o.concurrency / 4));

  const fill = async () => {
    if (fetching) {
      wakeAgain = true;
      return;
    }
    fetching = true;
    try {
      do {
        wakeAgain = false;
        while (!stopping && inFlight.size < o.concurrency) {
          const jobs = await o.boss.fetch<T>(o.queue, { batchSize: o.concurrency - inFlight.size });
          if (jobs.length === 0) break;
          for (const job of jobs) inFlight.set(job.id, run(job));
        }
      } while (wakeAgain && !stopping);
    } catch (err) {
      o.log.error('fetching jobs failed', { queue: o.queue, err });
    } finally {
      fetching = false;
    }
  };

  // Jobs that end together are completed together, in one call.
  const complete = createBatcher(async (ids: string[]) => {
    await o.boss.complete(o.queue, ids);
    return ids.map(() => undefined);
  });

  const run = async (job: Job<T>) => {
    try {
      await o.handle(job);
      await complete(job.id);
    } catch (err) {
      // Unexpected (the handler records workflow failures itself): let pg-boss retry the job.
      o.log.error('job failed', { queue: o.queue, jobId: job.id, err });
      await o.boss.fail(o.queue, job.id, { message: (err as Error).message }).catch(() => {});
    } finally {
      inFlight.delete(job.id);
      // Pulling backlog one job per finished job would cost a fetch per job: refill once a batch of
      // slots is free (or the pump ran dry). New jobs still start at once: their wake-up fills.
      if (!stopping && (inFlight.size === 0 || o.concurrency - inFlight.size >= refillBatch)) void fill();
    }
  };

  const unlisten = await o.db.listen(WAKE_CHANNEL, (queue) => {
    if (queue === o.queue) void fill();
  });
  const poll = setInterval(() => void fill(), o.pollMs ?? 1000);
  // Heartbeats tell pg-boss these jobs are alive; a killed runner stops sending them. Every few
  // seconds, well inside the shortest heartbeat pg-boss allows (10 s), whatever a job was sent with.
  const heartbeat = setInterval(() => {
    if (inFlight.size) {
      void o.boss
        .touch(o.queue, [...inFlight.keys()])
        .catch((err) => o.log.warn('heartbeat failed', { err }));
    }
  }, HEARTBEAT_MS);
  void fill();

  return {
    get active() {
      return inFlight.size;
    },
    async stop(timeoutMs = 30_000) {
      stopping = true;
      clearInterval(poll);
      await unlisten().catch(() => {});
      const drained = Promise.allSettled([...inFlight.values()]);
      await Promise.race([drained, new Promise((r) => setTimeout(r, timeoutMs).unref())]);
      clearInterval(heartbeat);
    },
  };
}
