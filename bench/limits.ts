// What rate limiting and usage accounting cost: sync execute throughput at concurrency 64 with
// billing on (token buckets taken and spend checked at admission, cost added to the period's spend
// by the runner) against the same service with BILLING_ENABLED=false, in the same run. The two
// alternate for several rounds and each side reports its median, so drift on a shared machine
// falls on both. Target: billing on keeps at least 90 % of the throughput.
import { startApi } from '../api/start.ts';
import { listen } from '../http/serve.ts';
import { startBoss } from '../jobs/boss.ts';
import { createLogger } from '../logger.ts';
import { load, spawnRunner, type Target } from './lib/processes.ts';
import { startScratchService } from './lib/scratch-service.ts';
import { printTable } from './lib/table.ts';
import { deployBenchWorkflow } from './lib/workflows.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const REQUESTS = Number(process.env.BENCH_SYNC_SAMPLES ?? 2_000) * 2;

const svc = await startScratchService();
const { db, config } = svc;
const log = createLogger(config.LOG_LEVEL);
try {
  const workflowId = await deployBenchWorkflow(svc);

  const sender = await startBoss(db, { log, supervise: false });
  const metered = await startApi({ db, config, log, queue: sender });
  const unmetered = await startApi({ db, config: { ...config, BILLING_ENABLED: false }, log, queue: sender });
  const servers = [await listen(metered.app, 0, '127.0.0.1'), await listen(unmetered.app, 0, '127.0.0.1')];
  const runner = await spawnRunner(config);
  const target = (url: string): Target => ({
    url: `${url}/api/workflows/${workflowId}/execute`,
    method: 'POST',
    headers: { 'X-API-Key': svc.apiKey, 'Content-Type': 'application/json' },
    body: JSON.stringify({ inputs: { name: 'Ada' } }),
  });
  const on: number[] = [];
  const off: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate which side goes first, so neither always meets the warmer (or more tired) machine.
    const order = round % 2 ? ([1, 0] as const) : ([0, 1] as const);
    for (const side of order) {
      const { rate } = await load(target((servers[side] as { url: string }).url), REQUESTS, 64);
      (side === 0 ? on : off).push(rate);
    }
  }
  await runner.stop();
  const [spent] = await db.query<{ executions: string }>(
    'select sum(executions) as executions from usage_periods',
  );
  // Only the metered side's executions (and their warm-ups) are billed: proof the work was done.
  if (Number(spent?.executions) < ROUNDS * REQUESTS)
    throw new Error('metered executions were not all billed');

  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  printTable(`Rate limits and usage accounting (median of ${ROUNDS} alternating rounds)`, [
    {
      measure: 'sync execute at concurrency 64 (req/s)',
      ours: median(on),
      baselineName: 'same with BILLING_ENABLED=false',
      baseline: median(off),
      higherIsBetter: true,
    },
  ]);
  await metered.close();
  await unmetered.close();
  for (const s of servers) await s.close();
  await sender.stop({ graceful: false, close: false });
} finally {
  await svc.dispose();
}
