// The job pump over a real pg-boss queue: every job is handled once and completed; the calls that
// mark the jobs in hand (heartbeat, completion, failure) never overlap, since together they
// deadlock on the job rows; a finished job pulls in more only when jobs may be waiting, so a quiet
// queue costs one fetch per wake-up, not one more per finished job.
import type { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sendInTransaction, startBoss } from '../../jobs/boss.ts';
import { QUEUES } from '../../jobs/queues.ts';
import { createLogger } from '../../logger.ts';
import { startPump } from '../../runner/job-pump.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

// Any queue the runners consume will do; no runner consumes it here.
const QUEUE = QUEUES.workflowExecute;
const log = createLogger('silent');

let tdb: TestDatabase;
let boss: PgBoss;

beforeAll(async () => {
  tdb = await createTestDatabase();
  boss = await startBoss(tdb.db, { log, supervise: false });
});
afterAll(async () => {
  await boss.stop({ graceful: false, close: false });
  await tdb.close();
});

/** Counts a pg-boss method's calls, and how many of the watched ones were in flight at once. */
function watch(names: ('complete' | 'fail' | 'touch' | 'fetch')[]) {
  const calls: Record<string, number> = Object.fromEntries(names.map((name) => [name, 0]));
  let running = 0;
  let mostAtOnce = 0;
  const originals = names.map((name) => [name, boss[name]] as const);
  for (const [name, original] of originals) {
    (boss as unknown as Record<string, unknown>)[name] = async (...args: unknown[]) => {
      calls[name] = (calls[name] ?? 0) + 1;
      mostAtOnce = Math.max(mostAtOnce, ++running);
      try {
        return await (original as (...a: unknown[]) => Promise<unknown>).apply(boss, args);
      } finally {
        running--;
      }
    };
  }
  return {
    calls,
    get mostAtOnce() {
      return mostAtOnce;
    },
    restore() {
      for (const [name, original] of originals) (boss as unknown as Record<string, unknown>)[name] = original;
    },
  };
}

async function send(count: number) {
  const ids = Array.from({ length: count }, () => crypto.randomUUID());
  await tdb.db.transaction((tx) =>
    sendInTransaction(
      boss,
      tx,
      QUEUE,
      ids.map((id) => ({ id, data: { n: 1 } })),
    ),
  );
  return ids;
}

async function until(check: () => boolean) {
  while (!check()) await new Promise((r) => setTimeout(r, 5));
}

it('handles every job once, and never marks jobs alive while it completes or fails others', async () => {
  const seen = new Map<string, number>();
  const watched = watch(['complete', 'fail', 'touch']);
  const pump = await startPump<{ n: number }>({
    boss,
    db: tdb.db,
    queue: QUEUE,
    concurrency: 16,
    heartbeatMs: 2,
    log,
    async handle(job) {
      seen.set(job.id, (seen.get(job.id) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, Math.random() * 4));
      // A job whose id ends in 7 (about one in sixteen) fails once, unexpectedly: pg-boss is told,
      // and retries it.
      if (seen.get(job.id) === 1 && job.id.endsWith('7')) throw new Error('unexpected');
    },
  });
  try {
    const ids = await send(300);
    const failing = new Set(ids.filter((id) => id.endsWith('7')));
    expect(failing.size).toBeGreaterThan(0);
    // A failed job comes round once more (the queue retries after a second), and then succeeds.
    const handledAsExpected = () => ids.every((id) => seen.get(id) === (failing.has(id) ? 2 : 1));
    await until(() => handledAsExpected() && pump.active === 0);
    expect(watched.calls.touch).toBeGreaterThan(5);
    expect(watched.calls.complete).toBeGreaterThan(5);
    expect(watched.calls.fail).toBe(failing.size);
    expect(watched.mostAtOnce).toBe(1);
    const completed = await tdb.db.query<{ n: number }>(
      "select count(*)::int as n from pgboss.job where name = $1 and state = 'completed'",
      [QUEUE],
    );
    expect(completed[0]?.n).toBe(ids.length);
  } finally {
    await pump.stop();
    watched.restore();
  }
});

it('fetches once per wake-up while the queue keeps up, and drains a backlog in full batches', async () => {
  const watched = watch(['fetch']);
  let handled = 0;
  const pump = await startPump<{ n: number }>({
    boss,
    db: tdb.db,
    queue: QUEUE,
    concurrency: 8,
    pollMs: 60_000,
    log,
    async handle() {
      handled++;
    },
  });
  try {
    await until(() => watched.calls.fetch === 1);
    // One job at a time, each sent once the last is done: its wake-up fetches it, and its end
    // fetches nothing more (the queue came back short of a full batch).
    for (let i = 1; i <= 20; i++) {
      await send(1);
      await until(() => handled === i && pump.active === 0);
    }
    expect(watched.calls.fetch).toBe(21);
    // A backlog larger than the pump takes at once: full batches keep it fetching as jobs end.
    await send(100);
    await until(() => handled === 120 && pump.active === 0);
    expect(watched.calls.fetch).toBeGreaterThan(21 + 100 / 8);
    expect(watched.calls.fetch).toBeLessThan(21 + 100 / 2);
  } finally {
    await pump.stop();
    watched.restore();
  }
});

it('gives up on a mark that never comes back at its deadline, and completes the jobs behind it', async () => {
  // A statement lost with its connection can leave its promise unsettled for good. Every later
  // heartbeat and completion waits behind it in the lane: without a deadline the pump's jobs were
  // never completed, their heartbeats stopped, and each was retried until it ran out of attempts.
  const originalTouch = boss.touch;
  let touches = 0;
  (boss as unknown as { touch: () => Promise<never> }).touch = () => {
    touches++;
    return new Promise<never>(() => {});
  };
  let handled = 0;
  const pump = await startPump<{ n: number }>({
    boss,
    db: tdb.db,
    queue: QUEUE,
    concurrency: 4,
    heartbeatMs: 5,
    settleDeadlineMs: 200,
    log,
    async handle() {
      // Held until a heartbeat is in the lane, so the completion queues behind one that never ends.
      await until(() => touches > 0);
      handled++;
    },
  });
  try {
    const ids = await send(4);
    await until(() => handled === 4 && pump.active === 0);
    for (let i = 0; ; i++) {
      const [row] = await tdb.db.query<{ n: number }>(
        "select count(*)::int as n from pgboss.job where id = any($1::uuid[]) and state = 'completed'",
        [ids],
      );
      if (row?.n === 4) break;
      if (i > 400) throw new Error(`only ${row?.n} of 4 jobs completed: the lane stalled`);
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    await pump.stop();
    (boss as unknown as { touch: typeof originalTouch }).touch = originalTouch;
  }
});
