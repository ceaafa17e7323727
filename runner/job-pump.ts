// Feeds one queue to a handler with bounded concurrency: fetches as many jobs as there are free
// slots, woken by NOTIFY when a job is sent (a poll is only the backstop), keeps heartbeats going
// for the jobs in hand, completes each as it ends, and on stop lets the running ones finish.
import type { Job, PgBoss } from 'pg-boss';
import { createBatcher } from '../db/batcher.ts';
import type { Db } from '../db/client.ts';
import type { JobAttempt } from '../jobs/boss.ts';
import { WAKE_CHANNEL } from '../jobs/queues.ts';
import type { Logger } from '../logger.ts';

const HEARTBEAT_MS = 3000;
/** How long a statement of the pump may take by default (a runner passes its job heartbeat). */
const DEADLINE_MS = 30_000;

export interface PumpOptions<T> {
  boss: PgBoss;
  db: Db;
  queue: string;
  concurrency: number;
  /** Handles a job; the pump completes it once this resolves (unless `handlerCompletes`). */
  handle(job: Job<T>): Promise<void>;
  /**
   * The handler completes each job itself, in statements of its own run through `settle`; the pump
   * still fails a job whose handler throws.
   */
  handlerCompletes?: boolean;
  /** The lane the jobs' settling statements take (a handler that completes its jobs shares it). */
  settle?: SettleLane;
  log: Logger;
  /** How often the queue is looked at without a wake-up (retries due by time, missed notices). */
  pollMs?: number;
  /** How often the jobs in hand are marked alive (tests shorten it). */
  heartbeatMs?: number;
  /** How long a fetch, or a statement in the pump's own lane, may take (see settleLane). */
  settleDeadlineMs?: number;
}

export interface Pump {
  /** Stops fetching and waits for the jobs in hand (at most timeoutMs). */
  stop(timeoutMs?: number): Promise<void>;
  readonly active: number;
}

export async function startPump<T>(o: PumpOptions<T>): Promise<Pump> {
  const inFlight = new Map<string, { job: JobAttempt; done: Promise<void> }>();
  let stopping = false;
  let fetching = false;
  let wakeAgain = false;
  // Whether jobs may be waiting that no wake-up will announce: the last fetch came back full, or a
  // wake-up came while every slot was taken. Only then does a finished job pull in more; otherwise
  // each finished job would cost a fetch that finds nothing (with a steady trickle of sync
  // executions, most of them), while a new job's own wake-up starts it at once anyway.
  let backlog = true;
  const refillBatch = Math.max(1, Math.floor(o.concurrency / 4));
  const deadlineMs = o.settleDeadlineMs ?? DEADLINE_MS;
  const settle = o.settle ?? settleLane(deadlineMs);

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
          // Bounded like the lane's statements: a fetch that never came back kept `fetching` set,
          // and the pump never fetched again. A fetch that does come back after its deadline has
          // started the jobs it took, and nobody runs them: they return to the queue when their
          // heartbeat lapses, one attempt down. Running them late instead was tried and not kept: by
          // then the queue may have handed them to another runner, and both would run them.
          const jobs = await withDeadline(o.boss.fetch<T>(o.queue, { batchSize: free }), deadlineMs);
          for (const job of jobs) inFlight.set(job.id, { job, done: run(job) });
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

  // Jobs that end together are completed together, in one call. Each settle names the attempt it
  // was fetched in: a job another runner has taken over since is left to that runner.
  const complete = createBatcher(async (jobs: JobAttempt[]) => {
    await settle(() => o.boss.complete(o.queue, jobs));
    return jobs.map(() => undefined);
  });

  const run = async (job: Job<T>) => {
    const attempt = { id: job.id, retryCount: job.retryCount };
    try {
      await o.handle(job);
      if (!o.handlerCompletes) await complete(attempt);
    } catch (err) {
      // Unexpected (the handler records workflow failures itself): let pg-boss retry the job.
      o.log.error('job failed', { queue: o.queue, jobId: job.id, err });
      await settle(() => o.boss.fail(o.queue, attempt, { message: (err as Error).message })).catch(() => {});
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
  // One heartbeat in the lane at a time, marking the jobs in hand when its turn comes: with the
  // database slow to answer, a heartbeat per tick piled up in the lane ahead of the completions.
  let beating = false;
  const heartbeat = setInterval(() => {
    if (!inFlight.size || beating) return;
    beating = true;
    void settle(async () => {
      const jobs = [...inFlight.values()].map((f) => f.job);
      if (jobs.length) await o.boss.touch(o.queue, jobs);
    })
      .catch((err) => o.log.warn('heartbeat failed', { err }))
      .finally(() => {
        beating = false;
      });
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
      const drained = Promise.allSettled([...inFlight.values()].map((f) => f.done));
      await Promise.race([drained, new Promise((r) => setTimeout(r, timeoutMs).unref())]);
      clearInterval(heartbeat);
    },
  };
}

/** Runs the calls given to it one after another. */
export type SettleLane = <R>(call: () => Promise<R>) => Promise<R>;

/**
 * A lane for the statements that settle or mark a pump's jobs. A heartbeat marks every job in hand,
 * and a completion a batch of them: run at the same time, the two statements lock the same job rows
 * in whatever order each one's plan visits them, and Postgres breaks the deadlock by failing one (a
 * completion failed so would send a finished job round again). One at a time, they never collide.
 *
 * A call that has not settled within `deadlineMs` fails, and the lane goes on without it. Every job
 * in hand waits behind the call in the lane, its heartbeat too: one statement that never comes back
 * (a connection lost without a word, a driver that loses track of a query in a restart) would
 * otherwise stop the runner for good, each of its jobs then retried until none were left (after a
 * Postgres restart, every execution a runner took failed that way). Failing the call is safe:
 * settles are fenced to the attempt they name, and an execution's end is recorded once.
 */
export function settleLane(deadlineMs = DEADLINE_MS): SettleLane {
  let tail: Promise<unknown> = Promise.resolve();
  return <R>(call: () => Promise<R>): Promise<R> => {
    const run = () => withDeadline(call(), deadlineMs);
    const result = tail.then(run, run);
    tail = result.catch(() => {});
    return result;
  };
}

/** The promise, or a rejection once ms have passed without it settling. */
function withDeadline<R>(promise: Promise<R>, ms: number): Promise<R> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`A queue statement did not come back within ${ms / 1000} s`)),
      ms,
    );
  });
  // Settled late, after the lane gave up on it: nothing waits for it any longer.
  promise.catch(() => {});
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
