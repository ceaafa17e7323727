// User tables on a local Postgres, through the public API over HTTP, each beside raw SQL on the
// same rows in the same run:
// - batch insert: 200,000 rows in batches of 1,000 (POST /rows with `rows`) beside
//   `INSERT ... SELECT FROM jsonb_array_elements` of the same batches (target: at least 50 %);
// - bulk update of 10,000 matching rows (PUT /rows with a filter) beside one raw UPDATE;
// - upsert rate on a unique column at concurrency 16, beside raw single-row INSERTs. The upserts
//   come from the load generator (bench/lib/load.ts) in a process of its own, as in bench/execute.ts:
//   fetch() in this process cost more of its main thread than the service's handling of an upsert
//   (1.1 to 1.7 ms of CPU per request of ~2.3 to 3), so the client was measured more than the service.
//   BENCH_UPSERT_ROUNDS rounds (3) alternate the two; the table gives the medians, and each round's own
//   ratio is printed (the first round's API is cold: its CPU an upsert falls by a third by the third).
//   Each round also reads the table as many times through the same API and load generator (GET
//   /api/v1/tables/{id}: admission and one statement): what a request costs this stack before it
//   writes anything, the ceiling the upserts are read against; and the raw side's INSERTs again, each
//   behind a bare Hono route over HTTP from the same load generator: what HTTP alone costs them.
// BENCH_TABLE_ROWS sizes the insert (default 200,000); BENCH_PART=upsert runs the upserts alone.
import { Hono } from 'hono';
import { startApi } from '../api/start.ts';
import { setOrganizationPlan } from '../db/organizations.ts';
import { setQuotas } from '../db/quotas.ts';
import { listen } from '../http/serve.ts';
import { createLogger } from '../logger.ts';
import { load } from './lib/processes.ts';
import { startScratchService } from './lib/scratch-service.ts';
import { printTable, type Row } from './lib/table.ts';

const ROWS = Number(process.env.BENCH_TABLE_ROWS ?? 200_000);
const BATCH = 1000;
const UPDATED = Math.min(10_000, ROWS);
const UPSERTS = 2000;
const UPSERT_ROUNDS = Number(process.env.BENCH_UPSERT_ROUNDS ?? 3);
const upsertsOnly = process.env.BENCH_PART === 'upsert';
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

const svc = await startScratchService();
const { db, config } = svc;
const log = createLogger(config.LOG_LEVEL);
const results: Row[] = [];
try {
  await setOrganizationPlan(db, svc.organizationId, 'enterprise');
  await setQuotas(db, svc.organizationId, {
    api: { requestsPerMinute: 1_000_000, maxBurst: 2_000_000 },
    maxRowsPerTable: 10_000_000,
  });
  const api = await startApi({ db, config, log });
  const server = await listen(api.app, 0, '127.0.0.1');
  const call = async (method: string, path: string, body: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { 'X-API-Key': svc.apiKey, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as { data?: Record<string, unknown>; error?: string };
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
    return json.data as Record<string, unknown>;
  };
  const createTable = async (name: string, columns: unknown[]) =>
    (
      (await call('POST', '/api/v1/tables', { workspaceId: svc.workspaceId, name, schema: { columns } }))
        .table as {
        id: string;
      }
    ).id;
  const PEOPLE = [
    { name: 'name', type: 'string', required: true },
    { name: 'score', type: 'number' },
    { name: 'active', type: 'boolean' },
    { name: 'joined', type: 'date' },
    { name: 'meta', type: 'json' },
  ];
  const person = (i: number) => ({
    name: `person ${i}`,
    score: i,
    active: i % 2 === 0,
    joined: new Date(Date.UTC(2020, 0, 1) + i * 60_000).toISOString(),
    meta: { tags: ['a', 'b'], n: i },
  });

  const raw = await createTable('people_raw', PEOPLE);
  /** The batch insert and the bulk update, each beside raw SQL (skipped by BENCH_PART=upsert). */
  async function insertAndUpdate() {
    const batches = Array.from({ length: Math.ceil(ROWS / BATCH) }, (_, b) =>
      Array.from({ length: Math.min(BATCH, ROWS - b * BATCH) }, (_, i) => person(b * BATCH + i)),
    );
    // Batch insert: ours through the API, then raw SQL into a second table of the same schema. Both
    // sides get their payloads serialised in advance, and the API's answers are read but not parsed:
    // the client's JSON work is not the service's.
    const ours = await createTable('people', PEOPLE);
    const bodies = batches.map((rows) => JSON.stringify({ workspaceId: svc.workspaceId, rows }));
    const rawPayloads = batches.map((rows) => JSON.stringify(rows));
    // The two alternate batch by batch, so the machine's drift (it is shared) falls on both alike.
    let apiInsertSeconds = 0;
    let rawInsertSeconds = 0;
    for (const [i, body] of bodies.entries()) {
      let started = performance.now();
      const res = await fetch(`${server.url}/api/v1/tables/${ours}/rows`, {
        method: 'POST',
        headers: { 'X-API-Key': svc.apiKey, 'Content-Type': 'application/json' },
        body,
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`batch insert: ${res.status} ${text.slice(0, 300)}`);
      apiInsertSeconds += (performance.now() - started) / 1000;
      started = performance.now();
      await db.query(
        `insert into table_rows (id, table_id, position, data)
       select gen_random_uuid(), $1, $2::bigint + t.ord, t.value from jsonb_array_elements($3::jsonb) with ordinality as t(value, ord)`,
        [raw, i * BATCH, rawPayloads[i]],
      );
      rawInsertSeconds += (performance.now() - started) / 1000;
    }
    results.push({
      measure: `batch insert of ${ROWS} rows, ${BATCH} per request (rows/s)`,
      ours: ROWS / apiInsertSeconds,
      baselineName: 'raw INSERT … SELECT FROM jsonb_array_elements',
      baseline: ROWS / rawInsertSeconds,
      higherIsBetter: true,
    });

    // Bulk update of the rows whose score is in the top UPDATED.
    const threshold = ROWS - UPDATED;
    let started = performance.now();
    const updated = await call('PUT', `/api/v1/tables/${ours}/rows`, {
      workspaceId: svc.workspaceId,
      filter: { score: { gte: threshold } },
      data: { active: false },
    });
    const apiUpdateMs = performance.now() - started;
    if (updated.updatedCount !== UPDATED)
      throw new Error(`updated ${updated.updatedCount}, expected ${UPDATED}`);
    started = performance.now();
    await db.query(
      `update table_rows set data = data || '{"active": false}'::jsonb, updated_at = now()
      where table_id = $1 and (data->>'score')::numeric >= $2`,
      [raw, threshold],
    );
    const rawUpdateMs = performance.now() - started;
    results.push({
      measure: `bulk update of ${UPDATED} matching rows (ms)`,
      ours: apiUpdateMs,
      baselineName: 'one raw UPDATE … WHERE',
      baseline: rawUpdateMs,
      higherIsBetter: false,
    });
  }
  if (!upsertsOnly) await insertAndUpdate();

  // The same single-row INSERTs as the raw side, but each behind a bare Hono route over HTTP, sent by
  // the same load generator: what HTTP alone costs an INSERT, with no admission and no table logic.
  let httpPosition = 100_000_000;
  const bare = await listen(
    new Hono().post('/insert', async (c) => {
      const { data } = (await c.req.json()) as { data: unknown };
      await db.query(
        `insert into table_rows (id, table_id, position, data) values (gen_random_uuid(), $1, $2, $3::jsonb)`,
        [raw, ++httpPosition, JSON.stringify(data)],
      );
      return c.json({ ok: true });
    }),
    0,
    '127.0.0.1',
  );

  // Upserts on a unique column: half insert new rows, half update existing ones.
  const accounts = await createTable('accounts', [
    { name: 'email', type: 'string', unique: true },
    { name: 'visits', type: 'number' },
  ]);
  // Each round's first half inserts, its second updates the same emails (its warmup writes others);
  // raw single-row INSERTs follow it in the same round.
  const oursRates: number[] = [];
  const rawRates: number[] = [];
  const readRates: number[] = [];
  const bareRates: number[] = [];
  for (let round = 0; round < UPSERT_ROUNDS; round++) {
    const { rate, clientCpuUs } = await load(
      {
        url: `${server.url}/api/v1/tables/${accounts}/rows/upsert`,
        method: 'POST',
        headers: { 'X-API-Key': svc.apiKey, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          workspaceId: svc.workspaceId,
          data: { email: `r${round}-{{run}}-user{{i%${UPSERTS / 2}}}@example.com`, visits: '{{i}}' },
        }).replace('"{{i}}"', '{{i}}'),
        indexed: true,
      },
      UPSERTS,
      16,
    );
    const [counted] = await db.query<{ n: number }>('select row_count as n from user_tables where id = $1', [
      accounts,
    ]);
    const expected = (round + 1) * (UPSERTS / 2 + Math.min(200, UPSERTS));
    if (Number(counted?.n) !== expected)
      throw new Error(`upserts left ${counted?.n} rows, expected ${expected}`);
    const rawRate = await concurrently(UPSERTS, 16, (i) =>
      db.query(
        `insert into table_rows (id, table_id, position, data) values (gen_random_uuid(), $1, $2, $3::jsonb)`,
        [
          raw,
          ROWS + round * UPSERTS + i + 1,
          JSON.stringify({ email: `user${round}-${i}@example.com`, visits: i }),
        ],
      ),
    );
    const { rate: readRate } = await load(
      {
        url: `${server.url}/api/v1/tables/${accounts}?workspaceId=${svc.workspaceId}`,
        method: 'GET',
        headers: { 'X-API-Key': svc.apiKey },
      },
      UPSERTS,
      16,
    );
    const { rate: bareRate } = await load(
      {
        url: `${bare.url}/insert`,
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          data: { email: `bare${round}-{{run}}-user{{i}}@example.com`, visits: '{{i}}' },
        }).replace('"{{i}}"', '{{i}}'),
        indexed: true,
      },
      UPSERTS,
      16,
    );
    oursRates.push(rate);
    rawRates.push(rawRate);
    readRates.push(readRate);
    bareRates.push(bareRate);
    console.log(
      `upsert round ${round + 1}: ours ${rate.toFixed(0)}/s (the load generator's CPU ${clientCpuUs.toFixed(0)} µs a request), ` +
        `raw ${rawRate.toFixed(0)}/s, ratio ${(rate / rawRate).toFixed(3)}; ` +
        `table reads ${readRate.toFixed(0)}/s (upserts ÷ reads ${(rate / readRate).toFixed(3)}); ` +
        `INSERTs behind a bare route ${bareRate.toFixed(0)}/s (÷ raw ${(bareRate / rawRate).toFixed(3)}, upserts ÷ them ${(rate / bareRate).toFixed(3)})`,
    );
  }
  results.push({
    measure: `upsert on a unique column, concurrency 16 (rows/s, median of ${UPSERT_ROUNDS} rounds)`,
    ours: median(oursRates),
    baselineName: 'raw single-row INSERT',
    baseline: median(rawRates),
    higherIsBetter: true,
  });
  results.push({
    measure: `upsert, concurrency 16 (rows/s), against a read of the table through the same API (requests/s)`,
    ours: median(oursRates),
    baselineName: 'GET /api/v1/tables/{id}: admission and one statement',
    baseline: median(readRates),
    higherIsBetter: true,
  });
  results.push({
    measure: `upsert, concurrency 16 (rows/s), against the raw INSERT behind a bare HTTP route (requests/s)`,
    ours: median(oursRates),
    baselineName: 'a Hono route doing the raw single-row INSERT, same load generator',
    baseline: median(bareRates),
    higherIsBetter: true,
  });

  await api.close();
  await server.close();
  await bare.close();
  printTable('User tables (Postgres on this machine)', results);
} finally {
  await svc.dispose();
}

/** Runs op(0..count-1) at a fixed concurrency; answers operations per second. */
async function concurrently(count: number, concurrency: number, op: (i: number) => Promise<unknown>) {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await op(next++);
    }),
  );
  return count / ((performance.now() - started) / 1000);
}
