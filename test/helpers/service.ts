// The service as a test sees it: the public API (called in-process through app.request) and the
// admin plane (through the typed tRPC client, in-process too), on this file's disposable database.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TRPCClientError } from '@trpc/client';
import type { PgBoss } from 'pg-boss';
import { createAdminApp } from '../../admin/app.ts';
import { type AdminClient, createAdminClient } from '../../admin/client.ts';
import type { ApiApp } from '../../api/app.ts';
import { startApi } from '../../api/start.ts';
import { type Config, type Env, loadConfig } from '../../config.ts';
import type { Db } from '../../db/client.ts';
import { configureVectorMemory, vectorMemoryOptions } from '../../db/knowledge/vector-memory.ts';
import type { PlanName } from '../../db/plans.ts';
import { createLogger } from '../../logger.ts';
import type { RetryDelay } from '../../runner/executor/retry.ts';
import { startRunner } from '../../runner/runner.ts';
import { createTestDatabase } from './database.ts';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface TestService {
  db: Db;
  config: Config;
  encryptionKey: Buffer;
  admin: AdminClient;
  /** Calls the public API: JSON in and out. */
  call(method: string, path: string, options?: CallOptions): Promise<ApiResponse>;
  /** The raw Hono app, for requests call() does not shape (malformed bodies). */
  app: ApiApp;
  adminApp: ReturnType<typeof createAdminApp>;
  /** The API's sender on the queues. */
  queue: PgBoss;
  close(): Promise<void>;
}

export interface CallOptions {
  key?: string;
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
  body: any;
}

/**
 * The service on a disposable database. With `runner: true` a runner works the queues in this
 * process (function pool included), so executions run end to end. `clock` replaces the API's "now"
 * (rate-limit refill, billing periods) and the runner's (when parked executions are due), so tests
 * move time instead of sleeping; `retryDelay` replaces
 * the runner's wait between a block's retry attempts.
 */
export async function startTestService(
  env: Env = {},
  options: { runner?: boolean; clock?: () => Date; retryDelay?: RetryDelay } = {},
): Promise<TestService> {
  const tdb = await createTestDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'wfs-data-'));
  const config = loadConfig({
    ADMIN_TOKEN,
    ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DATA_DIR: dataDir,
    ...(tdb.url ? { DATABASE_URL: tdb.url } : {}),
    ...(env as Record<string, string>),
  });
  const encryptionKey = config.ENCRYPTION_KEY as Buffer;
  const log = createLogger(config.LOG_LEVEL);
  // What db/startup.ts does for a process's database handle.
  configureVectorMemory(tdb.db, vectorMemoryOptions(config));
  const runner = options.runner
    ? await startRunner({
        db: tdb.db,
        config,
        log,
        encryptionKey,
        ...(options.retryDelay ? { retryDelay: options.retryDelay } : {}),
        ...(options.clock ? { clock: options.clock } : {}),
      })
    : null;
  const api = await startApi({
    db: tdb.db,
    config,
    log,
    ...(runner ? { queue: runner.boss } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const app = api.app;
  const adminApp = createAdminApp({ db: tdb.db, config, log, encryptionKey, queue: api.queue });
  const admin = createAdminClient({
    url: 'http://admin.test/trpc',
    token: ADMIN_TOKEN,
    fetch: (input, init) => Promise.resolve(adminApp.request(new Request(input, init))),
  });
  return {
    db: tdb.db,
    config,
    encryptionKey,
    admin,
    app,
    adminApp,
    queue: api.queue,
    async call(method, path, options = {}) {
      const url = new URL(path, 'http://api.test');
      for (const [k, v] of Object.entries(options.query ?? {}))
        if (v !== undefined) url.searchParams.set(k, String(v));
      const headers: Record<string, string> = { ...options.headers };
      if (options.key !== undefined) headers['X-API-Key'] = options.key;
      let body: string | undefined;
      if (options.body !== undefined) {
        headers['Content-Type'] = 'application/json';
        body = JSON.stringify(options.body);
      }
      const res = await app.request(url.toString(), {
        method,
        headers,
        ...(body !== undefined ? { body } : {}),
      });
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
    },
    async close() {
      await api.close();
      await runner?.stop();
      await tdb.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Tenant {
  org: { id: string; slug: string };
  user: { id: string; name: string; email: string };
  workspace: { id: string };
  /** The owner's personal key. */
  key: string;
}

let counter = 0;

/** An organization with an owner, a workspace of theirs, and their personal key: built via the admin plane. */
export async function createTenant(
  admin: AdminClient,
  options: { plan?: PlanName; name?: string } = {},
): Promise<Tenant> {
  const n = `${Date.now().toString(36)}${(counter++).toString(36)}`;
  const org = await admin.orgs.create.mutate({
    name: options.name ?? `Org ${n}`,
    plan: options.plan ?? 'free',
  });
  const user = await admin.users.create.mutate({ name: `Owner ${n}`, email: `owner-${n}@example.com` });
  await admin.members.add.mutate({ orgId: org.id, userId: user.id, role: 'owner' });
  const workspace = await admin.workspaces.create.mutate({
    orgId: org.id,
    ownerId: user.id,
    name: 'Main',
    skipDefaultWorkflow: true,
  });
  const { key } = await admin.keys.create.mutate({ type: 'personal', userId: user.id, name: 'owner key' });
  return { org, user, workspace, key };
}

/** Another workspace of the tenant's owner, with no default workflow: a clean slate per test. */
export async function createWorkspace(admin: AdminClient, tenant: Tenant): Promise<string> {
  const ws = await admin.workspaces.create.mutate({
    orgId: tenant.org.id,
    ownerId: tenant.user.id,
    name: `ws ${Math.random()}`,
    skipDefaultWorkflow: true,
  });
  return ws.id as string;
}

/** A further user in a tenant's organization, with a personal key and optionally a workspace permission. */
export async function addPerson(
  admin: AdminClient,
  tenant: Tenant,
  options: { role?: 'owner' | 'admin' | 'member'; permission?: 'admin' | 'write' | 'read' } = {},
) {
  const n = `${Date.now().toString(36)}${(counter++).toString(36)}`;
  const user = await admin.users.create.mutate({ name: `Person ${n}`, email: `person-${n}@example.com` });
  await admin.members.add.mutate({ orgId: tenant.org.id, userId: user.id, role: options.role ?? 'member' });
  if (options.permission) {
    await admin.workspaces.grant.mutate({
      workspaceId: tenant.workspace.id,
      userId: user.id,
      permission: options.permission,
    });
  }
  const { key, id: keyId } = await admin.keys.create.mutate({
    type: 'personal',
    userId: user.id,
    name: 'key',
  });
  return { user, key, keyId };
}

/** What a failed admin call reports: the tRPC code, HTTP status, message and (on 400) the field issues. */
export interface AdminFailure {
  code: string;
  httpStatus: number;
  message: string;
  details?: { code: string; path: (string | number)[]; message: string }[];
}

/** Awaits an admin call that must fail and returns its tRPC error; fails the test if it succeeds. */
export async function adminError(call: Promise<unknown>): Promise<AdminFailure> {
  try {
    await call;
  } catch (err) {
    if (!(err instanceof TRPCClientError)) throw err;
    const data = (err.data ?? {}) as Partial<AdminFailure>;
    return {
      code: String(data.code),
      httpStatus: Number(data.httpStatus),
      message: err.message,
      ...(data.details ? { details: data.details } : {}),
    };
  }
  throw new Error('Expected the admin call to fail, but it succeeded');
}
