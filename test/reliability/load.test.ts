// Load (issue 11): LOAD_SECONDS (default 60) of mixed traffic against a real port, at the plan's rate
// limits, with 16 requests in flight: sync and async executions, job polls, table inserts and queries,
// file uploads and lists, knowledge search and usage limits, one tenant whose quotas are set low
// enough that many requests get 429 (expected). Asserts: no 5xx at all; every status is one the
// request kind may answer; every acknowledged async execution ends completed or failed; the API
// process's heap shows no growth trend. Prints requests, statuses and p50/p99 latency per kind
// (no timing assertions). Runs on Postgres when TEST_DATABASE_URL is set, else on PGlite.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Listening, listen } from '../../http/serve.ts';
import { uploadOverHttp } from '../api/files-helpers.ts';
import { createKnowledgeBase, ingest } from '../api/knowledge-helpers.ts';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';
import { deployWorkflow } from '../helpers/workflows.ts';

const LOAD_SECONDS = Number(process.env.LOAD_SECONDS ?? 60);
const CONCURRENCY = 16;
// Heap samples before this are warm-up (pools filling, code compiling, caches), not trend.
const WARMUP_SECONDS = Math.min(20, Math.floor(LOAD_SECONDS / 3));
// Generous: a leak of ~1 KB per request at these rates would show well above it.
const MAX_HEAP_SLOPE_MB_PER_S = 1;
const DRAIN_MS = 120_000;

let svc: TestService;
let server: Listening;
let tenant: Tenant;
let workflowId: string;
let failingId: string;
let tableId: string;
let kbId: string;

/** A forced full gc when one can be had (vitest's workers do not run with --expose-gc). */
const gc: (() => void) | undefined = (() => {
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  } catch {
    return undefined;
  }
})();

beforeAll(async () => {
  svc = await startTestService({ LOG_LEVEL: 'silent' }, { runner: true });
  server = await listen(svc.app, 0, '127.0.0.1');
  tenant = await createTenant(svc.admin, { plan: 'pro' });
  // Low rates: at 16 in flight the buckets run dry within seconds, so 429s are a steady part of the mix.
  await svc.admin.quotas.set.mutate({
    orgId: tenant.org.id,
    sync: { requestsPerMinute: 120, maxBurst: 20 },
    async: { requestsPerMinute: 300, maxBurst: 40 },
    api: { requestsPerMinute: 1200, maxBurst: 100 },
    usageLimit: 10_000,
  });
  const ws = tenant.workspace.id;
  workflowId = await deployWorkflow(svc.admin, ws, {
    inputs: { n: { type: 'number', default: 1 } },
    blocks: [
      { id: 'double', type: 'function', code: 'await null; return { n: inputs.n * 2 }' },
      { id: 'done', type: 'response', data: { n: '<double.n>' } },
    ],
    edges: [{ from: 'double', to: 'done' }],
  });
  failingId = await deployWorkflow(svc.admin, ws, {
    blocks: [{ id: 'boom', type: 'function', code: 'throw new Error("planned failure")' }],
  });
  const table = await call('POST', '/api/v1/tables', {
    workspaceId: ws,
    name: 'load_events',
    schema: {
      columns: [
        { name: 'kind', type: 'string', required: true },
        { name: 'n', type: 'number' },
      ],
    },
  });
  expect(table.status, JSON.stringify(table.body)).toBe(200);
  tableId = table.body.data.table.id;
  const kb = await createKnowledgeBase(svc, ws);
  kbId = kb.id;
  const doc = await ingest(svc, tenant.key, kbId, {
    workspaceId: ws,
    content: 'Sourdough bread needs flour, water, salt and a lively starter. '.repeat(20),
  });
  expect(doc.processingStatus).toBe('completed');
}, 120_000);

afterAll(async () => {
  await server?.close();
  await svc?.close();
});

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: load answers are read loosely
  body: any;
}

async function call(method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      'X-API-Key': tenant.key,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  return { status: res.status, body: parsed };
}

/** The request kinds of the mix: weight, the statuses each may answer, and the request itself. */
interface Kind {
  name: string;
  weight: number;
  allowed: number[];
  send(): Promise<Answer>;
}

const acknowledged: string[] = [];
let counter = 0;

const KINDS: Kind[] = [
  {
    name: 'execute sync',
    weight: 3,
    allowed: [200, 429],
    send: () => call('POST', `/api/workflows/${workflowId}/execute`, { inputs: { n: counter++ } }),
  },
  {
    name: 'execute sync (failing)',
    weight: 1,
    allowed: [200, 429],
    send: () => call('POST', `/api/workflows/${failingId}/execute`, {}),
  },
  {
    name: 'execute async',
    weight: 3,
    allowed: [202, 429],
    send: async () => {
      const id = counter % 5 === 0 ? failingId : workflowId;
      const res = await call('POST', `/api/workflows/${id}/execute`, {
        inputs: { n: counter++ },
        async: true,
      });
      if (res.status === 202) acknowledged.push(res.body.taskId);
      return res;
    },
  },
  {
    name: 'job poll',
    weight: 3,
    allowed: [200, 429],
    send: () => {
      const taskId = acknowledged[Math.floor(Math.random() * acknowledged.length)];
      if (!taskId) return call('GET', '/api/users/me/usage-limits');
      return call('GET', `/api/jobs/${taskId}`);
    },
  },
  {
    name: 'table insert',
    weight: 3,
    allowed: [200, 429],
    send: () =>
      call('POST', `/api/v1/tables/${tableId}/rows`, {
        workspaceId: tenant.workspace.id,
        data: { kind: `k${counter % 7}`, n: counter++ },
      }),
  },
  {
    name: 'table query',
    weight: 2,
    allowed: [200, 429],
    send: () => {
      const filter = encodeURIComponent(JSON.stringify({ kind: `k${counter++ % 7}` }));
      return call(
        'GET',
        `/api/v1/tables/${tableId}/rows?workspaceId=${tenant.workspace.id}&filter=${filter}&limit=20`,
      );
    },
  },
  {
    name: 'file upload',
    weight: 1,
    allowed: [200, 429],
    send: () =>
      uploadOverHttp(server.url, tenant.key, {
        workspaceId: tenant.workspace.id,
        name: `load-${counter++}.txt`,
        content: Buffer.from(`file ${counter}\n`.repeat(64)),
      }),
  },
  {
    name: 'file list',
    weight: 1,
    allowed: [200, 429],
    send: () => call('GET', `/api/v1/files?workspaceId=${tenant.workspace.id}`),
  },
  {
    name: 'knowledge search',
    weight: 2,
    allowed: [200, 429],
    send: () =>
      call('POST', '/api/v1/knowledge/search', {
        workspaceId: tenant.workspace.id,
        knowledgeBaseIds: [kbId],
        query: 'sourdough starter',
        topK: 3,
      }),
  },
  {
    name: 'usage limits',
    weight: 1,
    allowed: [200, 429],
    send: () => call('GET', '/api/users/me/usage-limits'),
  },
];

interface Tally {
  latencies: number[];
  statuses: Map<number, number>;
  unexpected: string[];
}

function pick(): Kind {
  const total = KINDS.reduce((sum, k) => sum + k.weight, 0);
  let r = Math.random() * total;
  for (const kind of KINDS) {
    r -= kind.weight;
    if (r < 0) return kind;
  }
  return KINDS[0] as Kind;
}

const quantile = (sorted: number[], q: number) =>
  sorted.length === 0
    ? Number.NaN
    : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number);

/** Least-squares slope of y over x. */
function slope(points: [number, number][]): number {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

describe('load', () => {
  it(
    `survives ${LOAD_SECONDS} s of mixed traffic at the rate limits`,
    async () => {
      const tallies = new Map<string, Tally>(
        KINDS.map((k) => [k.name, { latencies: [], statuses: new Map(), unexpected: [] }]),
      );
      const samples: { t: number; rss: number; heapUsed: number }[] = [];
      const start = performance.now();
      const endAt = start + LOAD_SECONDS * 1000;
      const sampler = setInterval(() => {
        gc?.();
        const { rss, heapUsed } = process.memoryUsage();
        samples.push({ t: (performance.now() - start) / 1000, rss, heapUsed });
      }, 1000);

      async function client(): Promise<void> {
        while (performance.now() < endAt) {
          const kind = pick();
          const tally = tallies.get(kind.name) as Tally;
          const began = performance.now();
          let status: number;
          let body: unknown;
          try {
            ({ status, body } = await kind.send());
          } catch (error) {
            status = -1;
            body = String(error);
          }
          tally.latencies.push(performance.now() - began);
          tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1);
          if (!kind.allowed.includes(status) && tally.unexpected.length < 5) {
            tally.unexpected.push(`${status} ${JSON.stringify(body).slice(0, 300)}`);
          }
          // A 429 tells the client to back off: a short pause keeps the loop from spinning on it.
          if (status === 429) await new Promise((r) => setTimeout(r, 20));
        }
      }
      await Promise.all(Array.from({ length: CONCURRENCY }, client));
      clearInterval(sampler);

      // Report.
      let total = 0;
      let fiveXx = 0;
      const rows: string[] = [];
      for (const [name, tally] of tallies) {
        const sorted = [...tally.latencies].sort((a, b) => a - b);
        total += sorted.length;
        for (const [status, count] of tally.statuses) if (status >= 500 || status < 0) fiveXx += count;
        const statuses = [...tally.statuses].map(([s, c]) => `${s}×${c}`).join(' ');
        rows.push(
          `${name.padEnd(24)} n=${String(sorted.length).padStart(5)}  p50=${quantile(sorted, 0.5).toFixed(1).padStart(7)} ms  p99=${quantile(sorted, 0.99).toFixed(1).padStart(7)} ms  ${statuses}`,
        );
      }
      const afterWarmup = samples.filter((s) => s.t >= WARMUP_SECONDS);
      const heapSlope = slope(afterWarmup.map((s) => [s.t, s.heapUsed / 2 ** 20]));
      const rssSlope = slope(afterWarmup.map((s) => [s.t, s.rss / 2 ** 20]));
      const third = Math.max(1, Math.floor(afterWarmup.length / 3));
      const firstHeap = median(afterWarmup.slice(0, third).map((s) => s.heapUsed / 2 ** 20));
      const lastHeap = median(afterWarmup.slice(-third).map((s) => s.heapUsed / 2 ** 20));
      console.log(
        [
          `load: ${LOAD_SECONDS} s, ${CONCURRENCY} in flight, ${total} requests (${(total / LOAD_SECONDS).toFixed(1)}/s), 5xx or network errors: ${fiveXx}`,
          ...rows,
          `memory (${gc ? 'after forced gc' : 'no forced gc'}), ${afterWarmup.length} samples after ${WARMUP_SECONDS} s warm-up: heapUsed slope ${heapSlope.toFixed(3)} MB/s, rss slope ${rssSlope.toFixed(3)} MB/s, heapUsed median first third ${firstHeap.toFixed(1)} MB, last third ${lastHeap.toFixed(1)} MB`,
        ].join('\n'),
      );

      // No 5xx (nor a connection refused or reset) for any request.
      expect(fiveXx).toBe(0);
      const unexpected = [...tallies].flatMap(([name, t]) => t.unexpected.map((u) => `${name}: ${u}`));
      expect(unexpected).toEqual([]);
      // The limits really were reached, and real work was done.
      const statusCount = (status: number) =>
        [...tallies.values()].reduce((sum, t) => sum + (t.statuses.get(status) ?? 0), 0);
      expect(statusCount(429)).toBeGreaterThan(0);
      expect(acknowledged.length).toBeGreaterThan(0);

      // Every acknowledged async execution ends completed or failed (the runner drains the backlog).
      const pending = new Set(acknowledged);
      const drainStart = performance.now();
      let outcomes = { completed: 0, failed: 0 };
      while (pending.size > 0 && performance.now() - drainStart < DRAIN_MS) {
        const rows = await svc.db.query<{ id: string; status: string }>(
          'select id, status from executions where id = any($1::uuid[])',
          [[...pending]],
        );
        for (const row of rows) {
          if (row.status === 'completed' || row.status === 'failed') {
            pending.delete(row.id);
            outcomes = { ...outcomes, [row.status]: outcomes[row.status] + 1 };
          }
        }
        if (pending.size > 0) await new Promise((r) => setTimeout(r, 250));
      }
      console.log(
        `async drain: ${acknowledged.length} acknowledged, ${outcomes.completed} completed, ${outcomes.failed} failed, ${pending.size} unfinished after ${((performance.now() - drainStart) / 1000).toFixed(1)} s`,
      );
      expect([...pending]).toEqual([]);
      // And the public job record agrees, for a sample of them.
      for (const taskId of acknowledged.slice(0, 5)) {
        let job = await call('GET', `/api/jobs/${taskId}`);
        while (job.status === 429) {
          await new Promise((r) => setTimeout(r, 200));
          job = await call('GET', `/api/jobs/${taskId}`);
        }
        expect(job.status).toBe(200);
        expect(['completed', 'failed']).toContain(job.body.status);
      }

      // No growth trend in the heap after warm-up.
      expect(afterWarmup.length).toBeGreaterThanOrEqual(5);
      expect(heapSlope).toBeLessThan(MAX_HEAP_SLOPE_MB_PER_S);
    },
    LOAD_SECONDS * 1000 + DRAIN_MS + 60_000,
  );
});
