// The admin plane's bearer token: a configured ADMIN_TOKEN, or else the one generated at first start.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminApp } from '../../admin/app.ts';
import { createAdminClient } from '../../admin/client.ts';
import { loadConfig } from '../../config.ts';
import { bootstrap } from '../../db/bootstrap.ts';
import { createLogger } from '../../logger.ts';
import { ADMIN_TOKEN, adminError, startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.close());

/** A typed client that calls the given admin app in-process with the given token. */
function clientFor(app: TestService['adminApp'], token: string) {
  return createAdminClient({
    url: 'http://admin.test/trpc',
    token,
    fetch: (input, init) => Promise.resolve(app.request(new Request(input, init))),
  });
}

describe('admin plane with ADMIN_TOKEN configured', () => {
  it('accepts the configured token', async () => {
    await expect(svc.admin.orgs.list.query()).resolves.toEqual(expect.any(Array));
  });

  it('refuses a wrong token with UNAUTHORIZED, on queries and mutations alike', async () => {
    const wrong = clientFor(svc.adminApp, 'wrong');
    const onQuery = await adminError(wrong.orgs.list.query());
    expect(onQuery).toMatchObject({ code: 'UNAUTHORIZED', httpStatus: 401 });
    expect(onQuery.message).toMatch(/admin token/i);
    const onMutation = await adminError(wrong.users.create.mutate({ name: 'Eve', email: 'eve@example.com' }));
    expect(onMutation).toMatchObject({ code: 'UNAUTHORIZED', httpStatus: 401 });
    // The refused mutation did nothing.
    const users = await svc.admin.users.list.query();
    expect(users.map((u) => u.email)).not.toContain('eve@example.com');
  });

  it('refuses an empty token and a token that only starts like the right one', async () => {
    for (const token of ['', ' ', `${ADMIN_TOKEN}x`, ADMIN_TOKEN.slice(0, -1)]) {
      const err = await adminError(clientFor(svc.adminApp, token).orgs.list.query());
      expect(err.code, `token ${JSON.stringify(token)}`).toBe('UNAUTHORIZED');
    }
  });

  it('answers 401 over raw HTTP without an Authorization header, or with another scheme', async () => {
    const bare = await svc.adminApp.request('http://admin.test/trpc/orgs.list');
    expect(bare.status).toBe(401);
    const body = await bare.json();
    expect(body.error.data).toMatchObject({ code: 'UNAUTHORIZED', httpStatus: 401 });
    expect(JSON.stringify(body)).not.toContain(ADMIN_TOKEN);

    const basic = await svc.adminApp.request('http://admin.test/trpc/orgs.list', {
      headers: { authorization: `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}` },
    });
    expect(basic.status).toBe(401);
    // The bare token without the Bearer scheme is not accepted either.
    const schemeless = await svc.adminApp.request('http://admin.test/trpc/orgs.list', {
      headers: { authorization: ADMIN_TOKEN },
    });
    expect(schemeless.status).toBe(401);

    const mutation = await svc.adminApp.request('http://admin.test/trpc/users.create', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Eve', email: 'eve@example.com' }),
    });
    expect(mutation.status).toBe(401);
  });

  it('answers the same request with the token', async () => {
    const res = await svc.adminApp.request('http://admin.test/trpc/orgs.list', {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(res.status).toBe(200);
    expect((await res.json()).result.data).toEqual(expect.any(Array));
  });

  it('serves /health without a token', async () => {
    const res = await svc.adminApp.request('http://admin.test/health');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });
});

describe('admin plane without ADMIN_TOKEN: the token generated at first start', () => {
  it('refuses every token until one is generated, then accepts only that one', async () => {
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      DATA_DIR: svc.config.DATA_DIR,
      ENCRYPTION_KEY: svc.encryptionKey.toString('hex'),
      ...(svc.config.DATABASE_URL ? { DATABASE_URL: svc.config.DATABASE_URL } : {}),
    });
    expect(config.ADMIN_TOKEN).toBeUndefined();
    const app = createAdminApp({
      db: svc.db,
      config,
      log: createLogger('silent'),
      encryptionKey: svc.encryptionKey,
      queue: svc.queue,
    });

    // No token configured and none generated yet: nothing opens the plane, not even an empty one.
    for (const token of ['', 'anything', ADMIN_TOKEN]) {
      const err = await adminError(clientFor(app, token).orgs.list.query());
      expect(err.code).toBe('UNAUTHORIZED');
    }

    const first = await bootstrap(svc.db, { encryptionKey: svc.encryptionKey });
    expect(first.adminToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const generated = first.adminToken as string;

    const orgs = await clientFor(app, generated).orgs.list.query();
    expect(orgs.map((o) => o.slug)).toContain('default');
    expect(await adminError(clientFor(app, 'wrong').orgs.list.query())).toMatchObject({
      code: 'UNAUTHORIZED',
      httpStatus: 401,
    });
    // The configured token of another deployment means nothing here.
    expect((await adminError(clientFor(app, ADMIN_TOKEN).orgs.list.query())).code).toBe('UNAUTHORIZED');
    // Nor does the generated one open a plane whose ADMIN_TOKEN is configured: that setting wins.
    expect((await adminError(clientFor(svc.adminApp, generated).orgs.list.query())).code).toBe(
      'UNAUTHORIZED',
    );

    // It is shown once: a later start neither shows it again nor replaces it.
    const second = await bootstrap(svc.db, { encryptionKey: svc.encryptionKey });
    expect(second.adminToken).toBeUndefined();
    expect(second.apiKey).toBeUndefined();
    await expect(clientFor(app, generated).orgs.list.query()).resolves.toEqual(orgs);

    // Only its hash is stored.
    const stored = await svc.db.query<{ value: string }>('select value from service_settings');
    expect(JSON.stringify(stored)).not.toContain(generated);
  });
});
