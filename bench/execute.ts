// Workflow execution against a local Postgres, over real HTTP: sync latency (concurrency 1) and
// throughput (concurrency 64) of a three-block workflow beside a Hono route doing one SELECT 1, and
// the drain rate of 10,000 queued async executions beside raw pg-boss send → fetch → complete.
// BENCH_DATABASE_URL names the server (default: the local one); a scratch database is made and dropped.
import { Hono } from 'hono';
import { startApi } from '../api/start.ts';
import { listen } from '../http/serve.ts';
import { startBoss } from '../jobs/boss.ts';
import { createLogger } from '../logger.ts';
import { load, spawnRunner, type Target } from './lib/processes.ts';
import { startScratchService } from './lib/scratch-service.ts';
import { printTable, type Row } from './lib/table.ts';
import { deployBenchWorkflow } from './lib/workflows.ts';

const ASYNC_COUNT = Number(process.env.BENCH_ASYNC_COUNT ?? 10_000);
const SYNC_SAMPLES = Number(process.env.BENCH_SYNC_SAMPLES ?? 2_000);

const svc = await startScratchService();
const { db, config } = svc;
const log = createLogger(config.LOG_LEVEL);
const rows: Row[] = [];

try {
  const workflowId = await deployBenchWorkflow(svc);
  const headers = { 'X-API-Key': svc.apiKey, 'Content-Type': 'application/json' };

  // Baseline server: the same HTTP stack and pool, one SELECT 1 per request.
  const baselineApp = new Hono().get('/select1', async (c) => c.json(await db.query('select 1 as one')));
  const baselineServer = await listen(baselineApp, 0, '127.0.0.1');

  const sender = await startBoss(db, { log, supervise: false });
  const api = await startApi({ db, config, log, queue: sender });
  const apiServer = await listen(api.app, 0, '127.0.0.1');
  // The production topology: the API in this process, a runner in its own (each has a main thread).
  let runner = await spawnRunner(config);

  const select1: Target = { url: `${baselineServer.url}/select1`, method: 'GET', headers: {} };
  const executeSync: Target = {
    url: `${apiServer.url}/api/workflows/${workflowId}/execute`,
    method: 'POST',
    headers,
    body: JSON.stringify({ inputs: { name: 'Ada' } }),
  };
  // A running service's tables have statistics: autovacuum analyzes a table within a minute of its
  // first writes. A scratch database has none, and the generic plans its first statements settle on
  // (completing a job by walking every job of its queue) would have the bench measure a state no
  // running service stays in. So: some traffic, then the statistics autovacuum would gather.
  await load(executeSync, 1000, 64);
  await db.query('analyze');
  for (const [name, concurrency] of [
    ['p50/p99 at concurrency 1', 1],
    ['at concurrency 64', 64],
  ] as const) {
    const count = concurrency === 1 ? SYNC_SAMPLES : SYNC_SAMPLES * 2;
    const ours = await load(executeSync, count, concurrency);
    const base = await load(select1, count, concurrency);
    if (concurrency === 1) {
      rows.push({
        measure: 'sync execute p50 (ms)',
        ours: ours.p50,
        baselineName: 'SELECT 1 route',
        baseline: base.p50,
        higherIsBetter: false,
      });
      rows.push({
        measure: 'sync execute p99 (ms)',
        ours: ours.p99,
        baselineName: 'SELECT 1 route',
        baseline: base.p99,
        higherIsBetter: false,
      });
    } else {
      rows.push({
        measure: `sync execute ${name} (req/s)`,
        ours: ours.rate,
        baselineName: 'SELECT 1 route',
        baseline: base.rate,
        higherIsBetter: true,
      });
    }
  }
  await runner.stop();

  // Async drain: queue everything with no runner up, then time one runner emptying the queue.
  const executeAsync = () =>
    fetch(`${apiServer.url}/api/workflows/${workflowId}/execute`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ inputs: { name: 'Ada' }, async: true }),
    }).then((r) => r.json());
  await runConcurrently(ASYNC_COUNT, 64, executeAsync);
  await db.query('analyze');
  const drainStart = performance.now();
  runner = await spawnRunner(config);
  await waitUntil(async () => {
    const [row] = await db.query<{ n: number }>(
      "select count(*)::int as n from executions where status in ('queued','processing')",
    );
    return row?.n === 0;
  });
  const drainSeconds = (performance.now() - drainStart) / 1000;
  await runner.stop();
  const [failed] = await db.query<{ n: number }>(
    "select count(*)::int as n from executions where status = 'failed'",
  );
  if (failed?.n) throw new Error(`${failed.n} executions failed during the drain`);

  // Baseline drain: the same number of bare jobs through pg-boss, fetched in batches and completed.
  const queue = 'bench-baseline';
  await sender.createQueue(queue);
  await sender.insert(
    queue,
    Array.from({ length: ASYNC_COUNT }, () => ({ data: { n: 1 } })),
  );
  await db.query('analyze');
  const rawStart = performance.now();
  let left = ASYNC_COUNT;
  while (left > 0) {
    const jobs = await sender.fetch(queue, { batchSize: 64 });
    if (jobs.length)
      await sender.complete(
        queue,
        jobs.map((j) => j.id),
      );
    left -= jobs.length;
  }
  const rawSeconds = (performance.now() - rawStart) / 1000;
  rows.push({
    measure: `async drain of ${ASYNC_COUNT} (executions/s)`,
    ours: ASYNC_COUNT / drainSeconds,
    baselineName: 'pg-boss fetch+complete',
    baseline: ASYNC_COUNT / rawSeconds,
    higherIsBetter: true,
  });

  await api.close();
  await apiServer.close();
  await baselineServer.close();
  await sender.stop({ graceful: false, close: false });
  printTable('Workflow execution (Postgres on this machine)', rows);
} finally {
  await svc.dispose();
}

async function runConcurrently(count: number, concurrency: number, op: () => Promise<unknown>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < count) await op();
    }),
  );
}

async function waitUntil(check: () => Promise<boolean>) {
  while (!(await check())) await new Promise((r) => setTimeout(r, 100));
}
