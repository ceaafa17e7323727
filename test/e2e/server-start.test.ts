// The single-role processes (api/main.ts, runner/main.ts, admin/main.ts) on one Postgres server, as
// production starts them: several at once on an empty database all come up (one installs the schema
// and the queues, the others wait) and exactly one prints the bootstrap key and token; a runner
// started alone first prints them; a taken PORT or ADMIN_PORT is answered in one line.
// Needs a server database: runs in the TEST_DATABASE_URL pass.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../db/client.ts';
import { type EntryProcess, linesOf, occupyPort, startEntry } from '../helpers/entry-processes.ts';
import { withDatabase } from '../helpers/global-setup.ts';

const serverUrl = process.env.TEST_DATABASE_URL;
const START_TIMEOUT = 120_000;

const READY: Record<string, RegExp> = {
  'api/main.ts': /^API listening on http/m,
  'runner/main.ts': /^Runner started$/m,
  'admin/main.ts': /^Admin plane listening on http/m,
};
const KEY_LINE = /^Bootstrap API key \(personal, shown once\): (sk-service-\S+)$/m;
const WORKSPACE_LINE = /^Default workspace id: (\S+)$/m;
const TOKEN_LINE = /^Admin token \(shown once[^)]*\): (\S+)$/m;

const dataDir = mkdtempSync(join(tmpdir(), 'wfs-server-start-'));
const created: string[] = [];
const admin = serverUrl ? openPostgres(serverUrl, { max: 1 }) : null;

afterAll(async () => {
  for (const name of created) await admin?.query(`drop database if exists ${name} with (force)`);
  await admin?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A new database with nothing in it: no tables, no pg-boss schema. */
async function emptyDatabase(): Promise<string> {
  const name = `wfs_empty_${randomBytes(6).toString('hex')}`;
  await admin?.query(`create database ${name}`);
  created.push(name);
  return withDatabase(serverUrl as string, name);
}

/** What every process of one deployment shares, and small pools for a machine running several. */
const sharedEnv = (databaseUrl: string, encryptionKey: string, env: Record<string, string> = {}) => ({
  DATABASE_URL: databaseUrl,
  ENCRYPTION_KEY: encryptionKey,
  DATA_DIR: dataDir,
  HOST: '127.0.0.1',
  PORT: '0',
  ADMIN_PORT: '0',
  DATABASE_POOL_SIZE: '3',
  WORKER_THREADS: '1',
  INGEST_CONCURRENCY: '1',
  ...env,
});

const start = (script: string, env: Record<string, string>) => {
  const p = startEntry(script, env);
  return { script, p, ready: p.ready(READY[script] as RegExp) };
};

const banner = (stdout: string) => [KEY_LINE, WORKSPACE_LINE, TOKEN_LINE].filter((re) => re.test(stdout));

describe.runIf(serverUrl)('processes on one Postgres server', () => {
  it(
    'five started together on an empty database all come up, one prints the bootstrap lines, all stop on SIGTERM',
    async () => {
      const scripts = ['api/main.ts', 'api/main.ts', 'runner/main.ts', 'runner/main.ts', 'admin/main.ts'];
      for (let round = 0; round < 3; round++) {
        const env = sharedEnv(await emptyDatabase(), randomBytes(32).toString('hex'));
        const all = scripts.map((script) => start(script, env));
        await Promise.all(all.map((s) => s.ready));
        const printed = all.filter((s) => banner(s.p.output.stdout).length > 0);
        expect(printed, `round ${round}`).toHaveLength(1);
        expect(banner(printed[0]?.p.output.stdout ?? '')).toHaveLength(3);
        const exits = await Promise.all(all.map((s) => s.p.stop()));
        for (const [i, exit] of exits.entries())
          expect(
            exit.code,
            `round ${round}, ${scripts[i]} (${exit.signal}): ${exit.stdout}\n${exit.stderr}`,
          ).toBe(0);
      }
    },
    3 * START_TIMEOUT,
  );

  it(
    'a runner started first prints the key, workspace id and admin token; an API started later prints none, and the key works there',
    async () => {
      const env = sharedEnv(await emptyDatabase(), randomBytes(32).toString('hex'));
      const runner = start('runner/main.ts', env);
      await runner.ready;
      const out = runner.p.output.stdout;
      const key = KEY_LINE.exec(out)?.[1];
      const workspaceId = WORKSPACE_LINE.exec(out)?.[1];
      const token = TOKEN_LINE.exec(out)?.[1];
      expect(key, out).toMatch(/^sk-service-[A-Za-z0-9_-]{32}$/);
      expect(workspaceId, out).toMatch(/^[0-9a-f-]{36}$/);
      expect(token?.length, out).toBeGreaterThanOrEqual(32);

      const api = start('api/main.ts', env);
      await api.ready;
      expect(banner(api.p.output.stdout)).toEqual([]);
      const url = /^API listening on (\S+)$/m.exec(api.p.output.stdout)?.[1];
      const res = await fetch(`${url}/api/v1/workspaces`, {
        method: 'POST',
        headers: { 'X-API-Key': key as string, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'Second' }),
      });
      expect(res.status, await res.clone().text()).toBe(200);

      for (const s of [api, runner]) expect((await s.p.stop()).code).toBe(0);
    },
    START_TIMEOUT,
  );

  it.each([
    ['api/main.ts', 'PORT'],
    ['admin/main.ts', 'ADMIN_PORT'],
    ['api/main.ts', 'METRICS_PORT'],
  ])(
    '%s with %s taken exits non-zero with one line naming the port and the variable',
    async (script, variable) => {
      const taken = await occupyPort();
      let p: EntryProcess | undefined;
      try {
        const env = sharedEnv(await emptyDatabase(), randomBytes(32).toString('hex'), {
          [variable]: String(taken.port),
        });
        p = startEntry(script, env);
        const exit = await p.exited;
        expect(exit.code, exit.stderr).toBe(1);
        // Log lines (JSON) may come first; the answer is one line, no stack.
        const lines = linesOf(exit.stderr).filter((line) => !line.startsWith('{'));
        expect(lines).toHaveLength(1);
        expect(lines[0]).toContain(`Port ${taken.port} is already in use`);
        expect(lines[0]).toContain(`set ${variable} to another port`);
        // The first process on an empty database still shows what it created before it gave up.
        expect(banner(exit.stdout)).toHaveLength(3);
      } finally {
        await taken.close();
      }
    },
    START_TIMEOUT,
  );
});
