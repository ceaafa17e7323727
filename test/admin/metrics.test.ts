// GET /metrics on the admin port: refused without the admin token; Prometheus text with the process
// metrics, the API's request latencies by route pattern, and backlog gauges read from the database:
// queue depth while no runner works, executions by final status once one has, documents to ingest.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminApp } from '../../admin/app.ts';
import type { ApiApp } from '../../api/app.ts';
import { startApi } from '../../api/start.ts';
import { createMetricsApp, createMetricsRegistry } from '../../http/metrics.ts';
import { createLogger } from '../../logger.ts';
import { type Runner, startRunner } from '../../runner/runner.ts';
import { createKnowledgeBase, settled, uploadDocument } from '../api/knowledge-helpers.ts';
import { createTestDatabase } from '../helpers/database.ts';
import {
  ADMIN_TOKEN,
  createTenant,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';
import { deployWorkflow, pollJob } from '../helpers/workflows.ts';

let svc: TestService;
let tenant: Tenant;
let api: ApiApp;
let closeApi: () => Promise<void>;
let adminApp: ReturnType<typeof createAdminApp>;
let registry: ReturnType<typeof createMetricsRegistry>;
let runner: Runner | null = null;
const logged: string[] = [];
const log = createLogger('debug', {}, { destination: { write: (s: string) => void logged.push(s) } });

beforeAll(async () => {
  svc = await startTestService();
  tenant = await createTenant(svc.admin);
  // One registry for the API and the admin plane, as main.ts shares it.
  registry = createMetricsRegistry();
  const started = await startApi({
    db: svc.db,
    config: svc.config,
    log,
    queue: svc.queue,
    metrics: registry,
  });
  api = started.app;
  closeApi = started.close;
  adminApp = createAdminApp({
    db: svc.db,
    config: svc.config,
    log,
    encryptionKey: svc.encryptionKey,
    queue: svc.queue,
    metrics: registry,
  });
});
afterAll(async () => {
  await runner?.stop();
  await closeApi();
  await svc.close();
});

type App = { request: (path: string, init?: RequestInit) => Response | Promise<Response> };

async function scrape(app: App = adminApp, token = ADMIN_TOKEN) {
  const res = await app.request('/metrics', { headers: { Authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  return res.text();
}

/** The value of one sample of the exposition text; undefined when there is no such sample. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const got = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(match[3]);
  }
  return undefined;
}

/** Scrapes until the condition holds (the runner finishes a job a moment after its execution). */
async function scrapeUntil(ok: (text: string) => boolean, tries = 400): Promise<string> {
  let text = '';
  for (let i = 0; i < tries; i++) {
    text = await scrape();
    if (ok(text)) return text;
    await new Promise((r) => setTimeout(r, 25));
  }
  return text;
}

const execute = (workflowId: string, inputs: Record<string, unknown> = {}) =>
  api.request(`/api/workflows/${workflowId}/execute`, {
    method: 'POST',
    headers: { 'X-API-Key': tenant.key, 'Content-Type': 'application/json' },
    body: JSON.stringify({ inputs, async: true }),
  });

describe('access to /metrics', () => {
  it('refuses a scrape without the admin token, or with a wrong one, with 401 {error}', async () => {
    // No header, a wrong token, and the right token without its scheme.
    const attempts: Record<string, string>[] = [
      {},
      { Authorization: 'Bearer wrong-token-0123456789' },
      { Authorization: ADMIN_TOKEN },
    ];
    for (const headers of attempts) {
      const res = await adminApp.request('/metrics', { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect(await res.json()).toEqual({
        error: 'Missing or invalid admin token: send Authorization: Bearer <ADMIN_TOKEN>',
      });
    }
  });

  it('serves the Prometheus text format, with the process metrics, to the admin token', async () => {
    const res = await adminApp.request('/metrics', { headers: { authorization: `bearer ${ADMIN_TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(sample(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(sample(text, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(sample(text, 'wfs_backlog_up')).toBe(1);
  });

  it('is not part of the public API', async () => {
    const res = await api.request('/metrics', { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(res.status).toBe(404);
  });
});

describe('request latency', () => {
  it('is recorded by method, route pattern and status; never by raw URL', async () => {
    const unknownTable = '0b6c3c1e-1111-4a5b-9c2d-7e8f90a1b2c3';
    // Letters, not digits: a digit string can occur in any sample value by chance.
    const unmatchedSegment = 'no-such-route-segment';
    const before = await scrape();
    const statuses = [
      await api.request(`/api/v1/tables?workspaceId=${tenant.workspace.id}`, {
        headers: { 'X-API-Key': tenant.key },
      }),
      await api.request(`/api/v1/tables/${unknownTable}?workspaceId=${tenant.workspace.id}`, {
        headers: { 'X-API-Key': tenant.key },
      }),
      await api.request(`/api/v1/tables/${unknownTable}`),
      await api.request(`/no/such/route/${unmatchedSegment}`),
      await api.request('/health'),
    ].map((r) => r.status);
    expect(statuses).toEqual([200, 404, 401, 404, 200]);
    const text = await scrape();
    // The requests of this test: what the counts grew by (earlier tests made requests too).
    const count = (route: string, status: string, method = 'GET') => {
      const labels = { method, route, status };
      const name = 'http_request_duration_seconds_count';
      return (sample(text, name, labels) ?? 0) - (sample(before, name, labels) ?? 0);
    };
    expect(count('/api/v1/tables', '200')).toBe(1);
    expect(count('/api/v1/tables/:tableId', '404')).toBe(1);
    // Refused by the auth middleware, still counted against the route it asked for.
    expect(count('/api/v1/tables/:tableId', '401')).toBe(1);
    expect(count('unmatched', '404')).toBe(1);
    expect(count('/health', '200')).toBe(1);
    expect(
      sample(text, 'http_request_duration_seconds_bucket', {
        route: '/api/v1/tables',
        status: '200',
        le: '+Inf',
      }),
    ).toBe(sample(text, 'http_request_duration_seconds_count', { route: '/api/v1/tables', status: '200' }));
    expect(text).not.toContain(unknownTable);
    expect(text).not.toContain(unmatchedSegment);
  });
});

describe('backlog gauges', () => {
  let greeting: string;
  let failing: string;
  let documentId: string;
  const secretValue = 'metrics-secret-value-9e2b';

  it('report queued jobs, queued executions and documents to ingest while no runner works', async () => {
    await svc.admin.secrets.set.mutate({
      workspaceId: tenant.workspace.id,
      name: 'TOKEN',
      value: secretValue,
    });
    greeting = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [{ id: 'r', type: 'response', data: { hello: 'world' } }],
    });
    failing = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [{ id: 'f', type: 'function', code: 'throw new Error("leaked " + {{TOKEN}})' }],
    });
    for (const id of [greeting, greeting, failing]) expect((await execute(id)).status).toBe(202);
    const kb = await createKnowledgeBase(svc, tenant.workspace.id);
    const uploaded = await uploadDocument({ ...svc, app: api }, tenant.key, kb.id, {
      workspaceId: tenant.workspace.id,
      content: 'Some words to ingest later.',
    });
    expect(uploaded.status).toBe(200);
    documentId = uploaded.body.data.document.id;
    expect(documentId).toEqual(expect.any(String));

    const text = await scrape();
    expect(sample(text, 'wfs_backlog_up')).toBe(1);
    expect(sample(text, 'wfs_queue_jobs', { queue: 'workflow-execute', state: 'created' })).toBe(3);
    expect(sample(text, 'wfs_queue_jobs', { queue: 'workflow-execute', state: 'active' })).toBe(0);
    expect(sample(text, 'wfs_queue_jobs', { queue: 'knowledge-ingest', state: 'created' })).toBe(1);
    // Every queue and state has a series, at 0 too.
    expect(sample(text, 'wfs_queue_jobs', { queue: 'workflow-execute-dead', state: 'retry' })).toBe(0);
    expect(
      sample(text, 'wfs_queue_oldest_waiting_seconds', { queue: 'workflow-execute' }),
    ).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'wfs_queue_oldest_waiting_seconds', { queue: 'knowledge-ingest-dead' })).toBe(0);
    expect(sample(text, 'wfs_executions', { status: 'queued' })).toBe(3);
    expect(sample(text, 'wfs_executions', { status: 'processing' })).toBe(0);
    expect(sample(text, 'wfs_executions_finished_last_hour', { status: 'completed' })).toBe(0);
    expect(sample(text, 'wfs_knowledge_documents_backlog', { status: 'pending' })).toBe(1);
    // The execute and upload calls are in the latency histogram under their patterns.
    expect(
      sample(text, 'http_request_duration_seconds_count', {
        method: 'POST',
        route: '/api/workflows/:id/execute',
        status: '202',
      }),
    ).toBe(3);
  });

  it('count executions by final status once a runner has worked them, and the backlog drains', async () => {
    runner = await startRunner({ db: svc.db, config: svc.config, log, encryptionKey: svc.encryptionKey });
    const done = (await svc.db.query<{ id: string }>('select id from executions')).map((r) => r.id);
    for (const id of done) await pollJob(svc.call, tenant.key, id);
    expect((await settled(svc, documentId)).processingStatus).toBe('completed');

    const text = await scrapeUntil(
      (t) =>
        sample(t, 'wfs_queue_jobs', { queue: 'workflow-execute', state: 'active' }) === 0 &&
        sample(t, 'wfs_queue_jobs', { queue: 'knowledge-ingest', state: 'active' }) === 0,
    );
    expect(sample(text, 'wfs_executions_finished_last_hour', { status: 'completed' })).toBe(2);
    expect(sample(text, 'wfs_executions_finished_last_hour', { status: 'failed' })).toBe(1);
    expect(sample(text, 'wfs_executions', { status: 'queued' })).toBe(0);
    expect(sample(text, 'wfs_executions', { status: 'processing' })).toBe(0);
    for (const queue of ['workflow-execute', 'knowledge-ingest'])
      for (const state of ['created', 'retry', 'active'])
        expect(sample(text, 'wfs_queue_jobs', { queue, state }), `${queue} ${state}`).toBe(0);
    expect(sample(text, 'wfs_queue_oldest_waiting_seconds', { queue: 'workflow-execute' })).toBe(0);
    expect(sample(text, 'wfs_knowledge_documents_backlog', { status: 'pending' })).toBe(0);
    expect(sample(text, 'wfs_knowledge_documents_backlog', { status: 'processing' })).toBe(0);

    // The failed execution's error holds the secret; no log line of the whole run does.
    const failed = await svc.db.query<{ error: string }>(
      `select error from executions where status = 'failed'`,
    );
    expect(failed[0]?.error).toContain(secretValue);
    const all = logged.join('');
    expect(all).not.toContain(secretValue);
    expect(all).not.toContain(tenant.key);
    expect(all).not.toContain(ADMIN_TOKEN);
  });
});

describe('when the database is unavailable', () => {
  it('still answers the scrape, with wfs_backlog_up 0 and no backlog samples, and logs why', async () => {
    const tdb = await createTestDatabase();
    const lines: string[] = [];
    const own = createLogger('warn', {}, { destination: { write: (s: string) => void lines.push(s) } });
    // No registry given: the admin app makes its own, apart from this file's shared one.
    const app = createAdminApp({
      db: tdb.db,
      config: svc.config,
      log: own,
      encryptionKey: svc.encryptionKey,
      queue: svc.queue,
    });
    expect(sample(await scrape(app), 'wfs_backlog_up')).toBe(1);
    await tdb.close();
    const text = await scrape(app);
    expect(sample(text, 'wfs_backlog_up')).toBe(0);
    expect(sample(text, 'wfs_queue_jobs', { queue: 'workflow-execute', state: 'created' })).toBeUndefined();
    expect(sample(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(lines.map((l) => JSON.parse(l).msg)).toContain('metrics: reading the backlog failed');
  });
});

describe('a metrics listener of its own (METRICS_PORT)', () => {
  it('serves the same registry behind the same token, and nothing else', async () => {
    const app = createMetricsApp({ db: svc.db, config: svc.config, registry });
    expect((await app.request('/metrics')).status).toBe(401);
    const text = await scrape(app);
    expect(
      sample(text, 'http_request_duration_seconds_count', {
        method: 'GET',
        route: '/api/v1/tables',
        status: '200',
      }),
    ).toBe(1);
    const other = await app.request('/trpc/orgs.list', {
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(other.status).toBe(404);
  });
});
