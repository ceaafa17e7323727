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
  /** How often the queue is looked at without a wake-up (retries due by time, missed notices). */
  pollMs?: number;
  /** How often the jobs in hand are marked alive (tests shorten it). */
  heartbeatMs?: number;
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
  // Whether jobs may be waiting that no wake-up will announce: the last fetch came back full, or a
  // wake-up came while every slot was taken. Only then does a finished job pull in more; otherwise
  // each finished job would cost a fetch that finds nothing (with a steady trickle of sync
  // executions, most of them), while a new job's own wake-up starts it at once anyway.
  let backlog = true;
  const refillBatch = Math.max(1, Math.floor(o.concurrency / 4));
  const settle = serialLane();

  const fill = async () => {
    if (fetching) {
      wakeAgain = true;
      return;
    }
    fetching = true;
    try {
      do {
        wakeAgain = false;
        while (!stopping) {
          const free = o.concurrency - inFlight.size;
          if (free <= 0) {
            backlog = true;
            break;
          }
          const jobs = await o.boss.fetch<T>(o.queue, { batchSize: free });
          for (const job of jobs) inFlight.set(job.id, run(job));
          backlog = jobs.length === free;
          if (!backlog) break;
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
    await settle(() => o.boss.complete(o.queue, ids));
    return ids.map(() => undefined);
  });

  const run = async (job: Job<T>) => {
    try {
      await o.handle(job);
      await complete(job.id);
    } catch (err) {
      // Unexpected (the handler records workflow failures itself): let pg-boss retry the job.
      o.log.error('job failed', { queue: o.queue, jobId: job.id, err });
      await settle(() => o.boss.fail(o.queue, job.id, { message: (err as Error).message })).catch(() => {});
    } finally {
      inFlight.delete(job.id);
      // Pulling backlog one job per finished job would cost a fetch per job: refill once a batch of
      // slots is free (or the pump ran dry).
      const room = inFlight.size === 0 || o.concurrency - inFlight.size >= refillBatch;
      if (!stopping && backlog && room) void fill();
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
      void settle(() => o.boss.touch(o.queue, [...inFlight.keys()])).catch((err) =>
        o.log.warn('heartbeat failed', { err }),
      );
    }
  }, o.heartbeatMs ?? HEARTBEAT_MS);
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

/**
 * Runs the calls given to it one after another. A heartbeat marks every job in hand, and a
 * completion a batch of them: run at the same time, the two statements lock the same job rows in
 * whatever order each one's plan visits them, and Postgres breaks the deadlock by failing one (a
 * completion failed so would send a finished job round again). One at a time, they never collide.
 */
function serialLane() {
  let tail: Promise<unknown> = Promise.resolve();
  return <R>(call: () => Promise<R>): Promise<R> => {
    const result = tail.then(call, call);
    tail = result.catch(() => {});
    return result;
  };
}
