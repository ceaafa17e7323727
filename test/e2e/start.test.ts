// `node main.ts` as a new user runs it: embedded database under DATA_DIR, first-start bootstrap,
// restart on the same data, keys known in advance, a bad setting refused, SIGTERM.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createAdminClient } from '../../admin/client.ts';
import { childBaseEnv } from '../helpers/child-env.ts';
import { freePort } from '../helpers/entry-processes.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const KEY_FORMAT = /^sk-service-[A-Za-z0-9_-]{32}$/;
// Each start opens an embedded Postgres (a few seconds); the first one on a directory also migrates it.
const START_TIMEOUT = 90_000;

const dirs: string[] = [];
const running = new Set<ChildProcess>();

afterAll(() => {
  for (const child of running) child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir() {
  const dir = mkdtempSync(join(tmpdir(), 'wfs-e2e-'));
  dirs.push(dir);
  return dir;
}

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

interface Service {
  apiUrl: string;
  adminUrl: string;
  /** Everything printed to stdout by the time the start-up lines were complete. */
  banner: string;
  /** SIGTERM, then everything the process printed and how it ended. */
  stop(): Promise<Exit>;
}

function spawnMain(env: Record<string, string>) {
  const child = spawn(process.execPath, ['main.ts'], {
    cwd: ROOT,
    env: { ...childBaseEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const output = { stdout: '', stderr: '' };
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (output.stdout += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (output.stderr += d));
  const exited = new Promise<Exit>((resolve) =>
    child.on('close', (code, signal) => {
      running.delete(child);
      resolve({ code, signal, ...output });
    }),
  );
  return { child, output, exited };
}

/** Starts main.ts and resolves once stdout shows a line matching `ready` (the last start-up line). */
async function start(env: Record<string, string>, ready: RegExp): Promise<Service> {
  const [port, adminPort] = [await freePort(), await freePort()];
  const { child, output, exited } = spawnMain({
    PORT: String(port),
    ADMIN_PORT: String(adminPort),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    ...env,
  });
  await new Promise<void>((resolve, reject) => {
    const check = () => {
      if (ready.test(output.stdout)) {
        child.stdout?.off('data', check);
        resolve();
      }
    };
    child.stdout?.on('data', check);
    exited.then((e) =>
      reject(new Error(`main.ts exited (${e.code ?? e.signal}) before it was ready:\n${e.stderr}`)),
    );
  });
  const banner = output.stdout;
  return {
    apiUrl: match(banner, /^API:\s+(http:\/\/\S+)/m),
    adminUrl: match(banner, /^Admin plane: (http:\/\/\S+)/m),
    banner,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

function match(text: string, re: RegExp): string {
  const m = re.exec(text);
  if (!m?.[1]) throw new Error(`no match for ${re} in:\n${text}`);
  return m[1];
}

async function createWorkspace(apiUrl: string, key: string, name: string) {
  const res = await fetch(`${apiUrl}/api/v1/workspaces`, {
    method: 'POST',
    headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  return { status: res.status, body: await res.json() };
}

const adminClient = (adminUrl: string, token: string) => createAdminClient({ url: adminUrl, token });

// The last line of a first start: the curl example that follows the bootstrap key.
const FIRST_START_DONE = /^Try: curl .*\n/m;
const STARTED = /^Admin plane: .*\n/m;

describe('main.ts on a fresh DATA_DIR, then restarted on it', () => {
  const dataDir = tempDir();
  let key: string;
  let adminToken: string;

  it(
    'bootstraps an organization, a workspace, a key and an admin token, serves, and stops on SIGTERM',
    async () => {
      const svc = await start({ DATA_DIR: dataDir }, FIRST_START_DONE);
      expect(svc.apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(svc.adminUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/trpc$/);
      expect(svc.banner).toContain(`embedded, ${dataDir}`);
      key = match(svc.banner, /^Bootstrap API key \(personal, shown once\): (\S+)$/m);
      adminToken = match(svc.banner, /^Admin token \(shown once[^)]*\): (\S+)$/m);
      const workspaceId = match(svc.banner, /^Default workspace id: (\S+)$/m);
      expect(key).toMatch(KEY_FORMAT);
      expect(adminToken.length).toBeGreaterThanOrEqual(32);

      const created = await createWorkspace(svc.apiUrl, key, 'x');
      expect(created.status).toBe(200);
      expect(created.body.data.workspace).toMatchObject({ name: 'x', slug: 'x', role: 'admin' });

      const admin = adminClient(svc.adminUrl, adminToken);
      const [org] = await admin.orgs.list.query();
      expect(org).toMatchObject({ slug: 'default' });
      const workspaces = await admin.workspaces.list.query();
      expect(workspaces.find((w) => w.id === workspaceId)).toMatchObject({
        name: 'Default',
        slug: 'default',
      });
      expect(workspaces.map((w) => w.slug).sort()).toEqual(['default', 'x']);
      const users = await admin.users.list.query();
      expect(users.map((u) => u.email)).toEqual(['admin@localhost']);
      await expect(adminClient(svc.adminUrl, 'wrong').orgs.list.query()).rejects.toThrow();

      // The generated encryption key lives under DATA_DIR, readable by its owner only.
      expect(statSync(join(dataDir, 'encryption.key')).mode & 0o777).toBe(0o600);

      const exit = await svc.stop();
      expect(exit.code, exit.stderr).toBe(0);
      expect(exit.stdout.match(/sk-service-/g)?.length).toBe(2); // the key line and the curl example
    },
    START_TIMEOUT,
  );

  it(
    'starts again on the same data: nothing new printed, the old key, token and data still there',
    async () => {
      expect(key, 'the first start must have passed').toBeDefined();
      const svc = await start({ DATA_DIR: dataDir }, STARTED);
      // Same name as before: the slug shows the earlier workspace survived.
      const created = await createWorkspace(svc.apiUrl, key, 'x');
      expect(created.status).toBe(200);
      expect(created.body.data.workspace.slug).toBe('x-2');
      const orgs = await adminClient(svc.adminUrl, adminToken).orgs.list.query();
      expect(orgs.map((o) => o.slug)).toEqual(['default']);

      const exit = await svc.stop();
      expect(exit.code, exit.stderr).toBe(0);
      expect(exit.stdout).not.toContain('Bootstrap API key');
      expect(exit.stdout).not.toContain('Admin token');
      expect(exit.stdout).not.toContain('sk-service-');
      expect(exit.stdout).not.toContain(adminToken);
    },
    START_TIMEOUT,
  );
});

describe('main.ts with BOOTSTRAP_API_KEY and ADMIN_TOKEN', () => {
  it(
    'uses the given key and token and prints no admin token',
    async () => {
      const key = `sk-service-${randomBytes(24).toString('base64url')}`;
      const token = `e2e-admin-token-${randomBytes(8).toString('hex')}`;
      const svc = await start(
        { DATA_DIR: tempDir(), BOOTSTRAP_API_KEY: key, ADMIN_TOKEN: token },
        FIRST_START_DONE,
      );

      const created = await createWorkspace(svc.apiUrl, key, 'Automation');
      expect(created.status).toBe(200);
      expect(created.body.data.workspace.slug).toBe('automation');
      const orgs = await adminClient(svc.adminUrl, token).orgs.list.query();
      expect(orgs.map((o) => o.slug)).toEqual(['default']);
      const keys = await adminClient(svc.adminUrl, token).keys.list.query();
      expect(keys.map((k) => k.maskedKey)).toEqual([`sk-service-••••${key.slice(-4)}`]);

      const exit = await svc.stop();
      expect(exit.code, exit.stderr).toBe(0);
      expect(exit.stdout).not.toContain('Admin token');
      expect(exit.stdout).not.toContain(token);
    },
    START_TIMEOUT,
  );
});

describe('main.ts with a bad setting', () => {
  it('exits non-zero with one line on stderr that names the variable', async () => {
    const { exited } = spawnMain({ DATA_DIR: tempDir(), PORT: 'abc' });
    const exit = await exited;
    expect(exit.code).not.toBe(0);
    expect(exit.code).not.toBeNull();
    expect(exit.stdout).toBe('');
    const lines = exit.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('PORT');
  });

  it('does not echo a secret it refuses', async () => {
    const secret = 'short-secret';
    const { exited } = spawnMain({ DATA_DIR: tempDir(), ADMIN_TOKEN: secret });
    const exit = await exited;
    expect(exit.code).not.toBe(0);
    const lines = exit.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('ADMIN_TOKEN');
    expect(exit.stderr).not.toContain(secret);
  });
});
