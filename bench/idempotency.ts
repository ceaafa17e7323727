// What Idempotency-Key costs: async execute (the 202 path: admit, insert, audit, enqueue) at
// concurrency 16 with a fresh key on every request against the same requests without a key, and
// the rate of replays (the same key and body again) against a job poll (GET /api/jobs/{id}), the
// cheapest authenticated read that touches the database. The sides alternate for several rounds
// and each reports its median, so drift on a shared machine falls on both.
import { startApi } from '../api/start.ts';
import { listen } from '../http/serve.ts';
import { startBoss } from '../jobs/boss.ts';
import { createLogger } from '../logger.ts';
import { load, type Target } from './lib/processes.ts';
import { startScratchService } from './lib/scratch-service.ts';
import { printTable } from './lib/table.ts';
import { deployBenchWorkflow } from './lib/workflows.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 3_000);
const CONCURRENCY = 16;

const svc = await startScratchService();
const { db, config } = svc;
const log = createLogger(config.LOG_LEVEL);
try {
  const workflowId = await deployBenchWorkflow(svc);
  const sender = await startBoss(db, { log, supervise: false });
  // No runner: the executions stay queued, which is all the 202 path does.
  const api = await startApi({ db, config: { ...config, BILLING_ENABLED: false }, log, queue: sender });
  const server = await listen(api.app, 0, '127.0.0.1');
  const headers = { 'X-API-Key': svc.apiKey, 'Content-Type': 'application/json' };
  const execute: Target = {
    url: `${server.url}/api/workflows/${workflowId}/execute`,
    method: 'POST',
    headers,
    body: JSON.stringify({ inputs: { name: 'Ada' }, async: true }),
  };
  const keyed: Target = { ...execute, uniqueHeader: 'Idempotency-Key' };
  const replayKey = 'bench-replay';
  const first = await fetch(execute.url, {
    method: 'POST',
    headers: { ...headers, 'Idempotency-Key': replayKey },
    body: execute.body as string,
  });
  const { taskId } = (await first.json()) as { taskId: string };
  const replay: Target = { ...execute, headers: { ...headers, 'Idempotency-Key': replayKey } };
  const poll: Target = { url: `${server.url}/api/jobs/${taskId}`, method: 'GET', headers };

  const sides = {
    keyed: [] as number[],
    plain: [] as number[],
    replay: [] as number[],
    poll: [] as number[],
  };
  for (let round = 0; round < ROUNDS; round++) {
    const pairs: [keyof typeof sides, Target][][] = [
      [
        ['keyed', keyed],
        ['plain', execute],
      ],
      [
        ['replay', replay],
        ['poll', poll],
      ],
    ];
    for (const pair of pairs) {
      // Alternate which side goes first, so neither always meets the warmer (or more tired) machine.
      for (const [name, target] of round % 2 ? [...pair].reverse() : pair) {
        sides[name].push((await load(target, REQUESTS, CONCURRENCY)).rate);
      }
    }
  }
  const [records] = await db.query<{ n: number }>('select count(*)::int as n from idempotency_keys');
  // Every keyed request (and its warm-up) claimed its own key; the replays added none.
  if ((records?.n ?? 0) < ROUNDS * REQUESTS) throw new Error('keyed requests did not all record their key');

  await api.close();
  await server.close();
  await sender.stop({ graceful: false, close: false });
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  printTable(`Idempotency-Key (median of ${ROUNDS} alternating rounds, concurrency ${CONCURRENCY})`, [
    {
      measure: 'async execute with a fresh key (req/s)',
      ours: median(sides.keyed),
      baselineName: 'same without a key',
      baseline: median(sides.plain),
      higherIsBetter: true,
    },
    {
      measure: 'replay of a keyed execute (req/s)',
      ours: median(sides.replay),
      baselineName: 'GET /api/jobs/{id}',
      baseline: median(sides.poll),
      higherIsBetter: true,
    },
  ]);
} finally {
  await svc.dispose();
}
