// Probes: /health (liveness, never the database) and /ready (database and queue reachable), on the
// public API and the admin plane, without credentials; 503 naming the failed check when the queue's
// schema is gone or the database connection is closed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminApp } from '../../admin/app.ts';
import { startApi } from '../../api/start.ts';
import { QUEUES } from '../../jobs/queues.ts';
import { createLogger } from '../../logger.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.close());

/** Log lines written by a logger, parsed. */
function capture() {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger(
    'debug',
    {},
    { destination: { write: (s: string) => void lines.push(JSON.parse(s)) } },
  );
  return { log, lines };
}

/** The API and the admin plane on a database of their own, which a test may break. */
async function isolated() {
  const tdb = await createTestDatabase();
  const { log, lines } = capture();
  const api = await startApi({ db: tdb.db, config: svc.config, log });
  const admin = createAdminApp({
    db: tdb.db,
    config: svc.config,
    log,
    encryptionKey: svc.encryptionKey,
    queue: api.queue,
  });
  let closed = false;
  return {
    api: api.app,
    admin,
    queue: api.queue,
    lines,
    async closeDatabase() {
      closed = true;
      await tdb.close();
    },
    async close() {
      await api.close().catch(() => {});
      if (!closed) await tdb.close();
    },
  };
}

const get = async (app: { request: (path: string) => Response | Promise<Response> }, path: string) => {
  const res = await app.request(path);
  return { status: res.status, headers: res.headers, body: await res.json() };
};

describe('/health', () => {
  it('answers 200 without an API key, on the API and the admin plane', async () => {
    for (const app of [svc.app, svc.adminApp]) {
      const res = await get(app, '/health');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ok' });
    }
  });
});

describe('/ready', () => {
  it('answers 200 with every check ok, without credentials, on the API and the admin plane', async () => {
    for (const app of [svc.app, svc.adminApp]) {
      const res = await get(app, '/ready');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ready', checks: { database: 'ok', queue: 'ok' } });
    }
  });

  it('ignores a wrong API key or admin token: probes carry none', async () => {
    const api = await svc.app.request('/ready', {
      headers: { 'X-API-Key': 'sk-service-wrongwrongwrongwrong' },
    });
    expect(api.status).toBe(200);
    const admin = await svc.adminApp.request('/ready', { headers: { Authorization: 'Bearer nope' } });
    expect(admin.status).toBe(200);
  });

  it('answers 503 naming the queue when the queue is gone while the database answers', async () => {
    const env = await isolated();
    try {
      await env.queue.deleteQueue(QUEUES.workflowExecute);
      for (const app of [env.api, env.admin]) {
        const res = await get(app, '/ready');
        expect(res.status).toBe(503);
        expect(res.body).toEqual({ error: 'Not ready', checks: { database: 'ok', queue: 'error' } });
      }
      // Liveness does not depend on it.
      expect((await get(env.api, '/health')).status).toBe(200);
    } finally {
      await env.close();
    }
  });

  it('answers 503 once the database connection is closed; /health stays 200; the reason is logged with the request id', async () => {
    const env = await isolated();
    try {
      expect((await get(env.api, '/ready')).status).toBe(200);
      await env.closeDatabase();
      for (const app of [env.api, env.admin]) {
        const res = await get(app, '/ready');
        expect(res.status).toBe(503);
        expect(res.body).toEqual({ error: 'Not ready', checks: { database: 'error', queue: 'error' } });
        const requestId = res.headers.get('x-request-id');
        expect(requestId).toBeTruthy();
        const failures = env.lines.filter(
          (l) => l.msg === 'readiness check failed' && l.requestId === requestId,
        );
        expect(failures.map((l) => l.check).sort()).toEqual(['database', 'queue']);
        for (const f of failures)
          expect(f).toMatchObject({ level: 'warn', err: { message: expect.any(String) } });
        expect((await get(app, '/health')).status).toBe(200);
      }
    } finally {
      await env.close();
    }
  });
});
