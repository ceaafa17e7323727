// Structured logs: one access line per request carrying the request id and who asked (by ids),
// the same id on the error handler's 500 line, and no credential or secret in any line: not the
// API key, not the admin bearer token, not a value sent in a body, not a configured secret.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminApp } from '../../admin/app.ts';
import { createAdminClient } from '../../admin/client.ts';
import type { ApiApp } from '../../api/app.ts';
import { startApi } from '../../api/start.ts';
import { createLogger, type LogLevel } from '../../logger.ts';
import { createTestDatabase } from '../helpers/database.ts';
import {
  ADMIN_TOKEN,
  createTenant,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';

/** A logger whose lines are kept, raw and parsed. */
function capture(level: LogLevel = 'debug', secrets: string[] = []) {
  const raw: string[] = [];
  const log = createLogger(
    level,
    { process: 'test' },
    { destination: { write: (s: string) => void raw.push(s) }, secrets },
  );
  return {
    log,
    raw,
    text: () => raw.join(''),
    lines: () => raw.map((s) => JSON.parse(s) as Record<string, unknown>),
  };
}

let svc: TestService;
let tenant: Tenant;
let out: ReturnType<typeof capture>;
let api: ApiApp;
let closeApi: () => Promise<void>;
let adminApp: ReturnType<typeof createAdminApp>;

beforeAll(async () => {
  svc = await startTestService();
  tenant = await createTenant(svc.admin);
  // The service's own apps log nothing (LOG_LEVEL silent); these log into `out`.
  out = capture('debug');
  const started = await startApi({ db: svc.db, config: svc.config, log: out.log, queue: svc.queue });
  api = started.app;
  closeApi = started.close;
  adminApp = createAdminApp({
    db: svc.db,
    config: svc.config,
    log: out.log,
    encryptionKey: svc.encryptionKey,
    queue: svc.queue,
  });
});
afterAll(async () => {
  await closeApi();
  await svc.close();
});

const accessLines = (requestId: string | null) =>
  out.lines().filter((l) => l.msg === 'request' && l.requestId === requestId);

describe('the logger', () => {
  it('writes one JSON object per line with the level name, ISO time, message and bound fields', () => {
    const c = capture('info');
    c.log.child({ requestId: 'r-1' }).info('hello', { n: 1 });
    expect(c.raw).toHaveLength(1);
    expect(c.raw[0]?.endsWith('\n')).toBe(true);
    const [line] = c.lines();
    expect(line).toMatchObject({ level: 'info', msg: 'hello', process: 'test', requestId: 'r-1', n: 1 });
    expect(new Date(String(line?.time)).toISOString()).toBe(line?.time);
  });

  it('gives a child its bindings (a nested child both sets), censored, and the level of its parent', () => {
    const c = capture('warn');
    const child = c.log.child({ requestId: 'r-2', apiKey: 'plain-key-0' });
    child.info('below the level');
    child.child({ jobId: 'j-1' }).warn('nested', { n: 2 });
    child.error('direct');
    expect(c.lines()).toEqual([
      expect.objectContaining({ level: 'warn', msg: 'nested', requestId: 'r-2', jobId: 'j-1', n: 2 }),
      expect.objectContaining({ level: 'error', msg: 'direct', requestId: 'r-2', apiKey: '[REDACTED]' }),
    ]);
    expect(c.text()).not.toContain('plain-key-0');
  });

  it('drops lines below its level, and silent writes nothing', () => {
    const warn = capture('warn');
    warn.log.debug('d');
    warn.log.info('i');
    warn.log.warn('w');
    warn.log.error('e');
    expect(warn.lines().map((l) => l.level)).toEqual(['warn', 'error']);
    const silent = capture('silent');
    silent.log.error('e', { err: new Error('x') });
    expect(silent.raw).toEqual([]);
  });

  it('censors credential fields and scrubs keys, bearer tokens and configured secrets from any text', () => {
    const key = 'sk-service-AbCdEfGhIjKlMnOpQrStUvWxYz012345';
    const c = capture('debug', ['configured-"secret"-value']);
    c.log.info('fields', {
      authorization: 'Bearer top',
      headers: { authorization: 'Bearer a', 'x-api-key': 'plain-key-1', cookie: 'session=abc' },
      req: { headers: { 'x-api-key': 'plain-key-2' } },
      user: { password: 'pw-1', token: 'tok-1' },
      payload: { nested: { secret: 'nested-secret-1' } },
      storageKey: 'files/ok',
    });
    c.log.error('failed', {
      err: new Error(`upstream said ${key} and Bearer eyJhbGciOi.abc-def and configured-"secret"-value`),
    });
    const text = c.text();
    for (const hidden of [
      'Bearer top',
      'Bearer a',
      'plain-key-1',
      'plain-key-2',
      'session=abc',
      'pw-1',
      'tok-1',
      'nested-secret-1',
      key,
      'eyJhbGciOi',
      'configured-\\"secret\\"-value',
    ]) {
      expect(text, hidden).not.toContain(hidden);
    }
    const [fields, failed] = c.lines();
    expect(fields).toMatchObject({
      authorization: '[REDACTED]',
      headers: { authorization: '[REDACTED]', 'x-api-key': '[REDACTED]' },
      user: { password: '[REDACTED]', token: '[REDACTED]' },
      storageKey: 'files/ok',
    });
    // An error keeps what an operator needs: its type, message (scrubbed) and stack.
    expect(failed).toMatchObject({ level: 'error', err: { type: 'Error', stack: expect.any(String) } });
    expect((failed?.err as { message?: string } | undefined)?.message).toBe(
      'upstream said sk-service-[REDACTED] and Bearer [REDACTED] and [REDACTED]',
    );
  });
});

describe('access log of the API', () => {
  it('logs one line per request with its request id, method, path, status, duration and the caller by ids', async () => {
    const res = await api.request('/api/v1/workspaces', {
      method: 'POST',
      headers: { 'X-API-Key': tenant.key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Logged', skipDefaultWorkflow: true }),
    });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id');
    expect(requestId).toBeTruthy();
    const lines = accessLines(requestId);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'info',
      method: 'POST',
      path: '/api/v1/workspaces',
      status: 200,
      durationMs: expect.any(Number),
      keyId: expect.any(String),
      userId: tenant.user.id,
    });
    expect(out.text()).not.toContain(tenant.key);
  });

  it('uses the X-Request-Id a client sends', async () => {
    const res = await api.request(`/api/v1/tables?workspaceId=${tenant.workspace.id}`, {
      headers: { 'X-API-Key': tenant.key, 'X-Request-Id': 'client-chosen-id-42' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('client-chosen-id-42');
    expect(accessLines('client-chosen-id-42')).toHaveLength(1);
  });

  it('logs the path without its query string', async () => {
    const marker = 'query-value-not-logged';
    const res = await api.request(`/api/v1/tables?workspaceId=${tenant.workspace.id}&note=${marker}`, {
      headers: { 'X-API-Key': tenant.key },
    });
    const [line] = accessLines(res.headers.get('x-request-id'));
    expect(line?.path).toBe('/api/v1/tables');
    expect(out.text()).not.toContain(marker);
  });

  it('logs a refused key as a 401 without the presented key', async () => {
    const wrong = 'sk-service-ThisKeyDoesNotExist0123456789';
    for (const headers of [{ 'X-API-Key': wrong }, {}] as Record<string, string>[]) {
      const res = await api.request(`/api/v1/tables?workspaceId=${tenant.workspace.id}`, { headers });
      expect(res.status).toBe(401);
      const [line] = accessLines(res.headers.get('x-request-id'));
      expect(line).toMatchObject({ status: 401, path: '/api/v1/tables' });
      expect(line).not.toHaveProperty('keyId');
    }
    expect(out.text()).not.toContain(wrong);
    expect(out.text()).not.toContain('ThisKeyDoesNotExist');
  });

  it('never writes a request body: a secret sent in one stays out of the log', async () => {
    const secret = 'body-secret-value-7f3a9c';
    const res = await api.request('/api/v1/workspaces', {
      method: 'POST',
      headers: { 'X-API-Key': tenant.key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: secret, skipDefaultWorkflow: true }),
    });
    expect(res.status).toBe(200);
    // A body the API refuses is not echoed into the log either.
    const bad = await api.request('/api/v1/workspaces', {
      method: 'POST',
      headers: { 'X-API-Key': tenant.key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: secret, color: `not-a-colour-${secret}` }),
    });
    expect(bad.status).toBe(400);
    expect(accessLines(bad.headers.get('x-request-id'))[0]).toMatchObject({ status: 400 });
    expect(out.text()).not.toContain(secret);
  });

  it('logs probes at debug level, so they do not bury the traffic, unless refused', async () => {
    const res = await api.request('/health');
    expect(accessLines(res.headers.get('x-request-id'))[0]).toMatchObject({
      level: 'debug',
      path: '/health',
    });
    // A refused scrape is worth seeing.
    const refused = await adminApp.request('/metrics');
    expect(refused.status).toBe(401);
    expect(accessLines(refused.headers.get('x-request-id'))[0]).toMatchObject({
      level: 'info',
      path: '/metrics',
      status: 401,
    });
  });
});

describe('access log of the admin plane', () => {
  it('logs tRPC calls with their request id, never the bearer token nor the secret set', async () => {
    const ids: string[] = [];
    const admin = createAdminClient({
      url: 'http://admin.test/trpc',
      token: ADMIN_TOKEN,
      fetch: async (input, init) => {
        const res = await adminApp.request(new Request(input, init));
        ids.push(res.headers.get('x-request-id') ?? '');
        return res;
      },
    });
    const value = 'workspace-secret-value-4c1d';
    await admin.secrets.set.mutate({ workspaceId: tenant.workspace.id, name: 'LOGGED_SECRET', value });
    expect(ids).toHaveLength(1);
    const [line] = accessLines(ids[0] ?? '');
    expect(line).toMatchObject({ level: 'info', method: 'POST', path: '/trpc/secrets.set', status: 200 });
    const text = out.text();
    expect(text).not.toContain(value);
    expect(text).not.toContain(ADMIN_TOKEN);
  });

  it('logs a refused admin token as a 401 without the token', async () => {
    const wrong = 'wrong-admin-token-0123456789';
    const res = await adminApp.request('/trpc/orgs.list', { headers: { Authorization: `Bearer ${wrong}` } });
    expect(res.status).toBe(401);
    expect(accessLines(res.headers.get('x-request-id'))[0]).toMatchObject({ status: 401 });
    expect(out.text()).not.toContain(wrong);
  });
});

describe('an unexpected error', () => {
  it('is a 500 whose request id is on both the error line and the access line', async () => {
    // A database whose connection is closed: the key lookup fails for real.
    const tdb = await createTestDatabase();
    const broken = capture('debug');
    const started = await startApi({ db: tdb.db, config: svc.config, log: broken.log });
    try {
      await tdb.close();
      const res = await started.app.request(`/api/v1/tables?workspaceId=${tenant.workspace.id}`, {
        headers: { 'X-API-Key': tenant.key },
      });
      expect(res.status).toBe(500);
      const body = await res.json();
      expect(body).toEqual({ error: 'Internal server error', requestId: res.headers.get('x-request-id') });
      const mine = broken.lines().filter((l) => l.requestId === body.requestId);
      expect(mine.map((l) => l.msg)).toEqual(['unhandled error', 'request']);
      expect(mine[0]).toMatchObject({
        level: 'error',
        method: 'GET',
        path: '/api/v1/tables',
        err: { message: expect.any(String), stack: expect.any(String) },
      });
      expect(mine[1]).toMatchObject({ status: 500 });
      expect(broken.text()).not.toContain(tenant.key);
    } finally {
      await started.close().catch(() => {});
    }
  });
});
