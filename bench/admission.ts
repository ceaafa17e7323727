// Statements per request on the admission path (API key, `api` bucket, workspace access) of table
// upserts at concurrency 16, counted rather than timed: on a shared machine the count is the figure
// that holds from run to run. Requests that arrive together share their admission statements
// (batched), so the count per request falls below one per kind; the table write itself is
// committed in groups too. Also reports the upsert rate of the same run.
import { startApi } from '../api/start.ts';
import { setOrganizationPlan } from '../db/organizations.ts';
import { setQuotas } from '../db/quotas.ts';
import { listen } from '../http/serve.ts';
import { createLogger } from '../logger.ts';
import { countingDb } from './lib/counting-db.ts';
import { startScratchService } from './lib/scratch-service.ts';

const REQUESTS = Number(process.env.BENCH_ADMISSION_REQUESTS ?? 800);
const CONCURRENCY = 16;
// The admission path's statements, by their opening text.
const ADMISSION = {
  'API key lookup': 'select encode(k.key_hash',
  '`api` bucket': 'select bucket_key, granted',
  'workspace access': ['select w.*, p.permission', 'select a.ask_ord, w.*'],
} as const;

const svc = await startScratchService();
try {
  await setOrganizationPlan(svc.db, svc.organizationId, 'enterprise');
  await setQuotas(svc.db, svc.organizationId, {
    api: { requestsPerMinute: 1_000_000, maxBurst: 2_000_000 },
    maxRowsPerTable: 10_000_000,
  });
  const { db, counter } = countingDb(svc.db);
  const api = await startApi({ db, config: svc.config, log: createLogger('error') });
  const server = await listen(api.app, 0, '127.0.0.1');
  const call = async (path: string, body: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'X-API-Key': svc.apiKey, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as { data: Record<string, unknown> };
    if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
    return json.data;
  };
  const { table } = (await call('/api/v1/tables', {
    workspaceId: svc.workspaceId,
    name: 'accounts',
    schema: {
      columns: [
        { name: 'email', type: 'string', unique: true },
        { name: 'visits', type: 'number' },
      ],
    },
  })) as { table: { id: string } };

  counter.reset();
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) {
        const i = next++;
        await call(`/api/v1/tables/${table.id}/rows/upsert`, {
          workspaceId: svc.workspaceId,
          data: { email: `user${i % (REQUESTS / 2)}@example.com`, visits: i },
        });
      }
    }),
  );
  const rate = REQUESTS / ((performance.now() - started) / 1000);
  const per = (prefixes: string | readonly string[]) => {
    let n = 0;
    for (const [key, count] of counter.counts)
      if ([prefixes].flat().some((p) => key.startsWith(p))) n += count;
    return n / REQUESTS;
  };
  let total = 0;
  for (const count of counter.counts.values()) total += count;

  console.log(
    `\n### Admission statements per table upsert (concurrency ${CONCURRENCY}, ${REQUESTS} requests)\n`,
  );
  console.log('| statement | per request |');
  console.log('|---|---:|');
  let admission = 0;
  for (const [name, prefixes] of Object.entries(ADMISSION)) {
    admission += per(prefixes);
    console.log(`| ${name} | ${per(prefixes).toFixed(2)} |`);
  }
  console.log(`| admission in all | ${admission.toFixed(2)} |`);
  console.log(`| every statement (table write included) | ${(total / REQUESTS).toFixed(2)} |`);
  console.log(`| upserts/s in this run | ${rate.toFixed(0)} |`);
  await api.close();
  await server.close();
} finally {
  await svc.dispose();
}
