// The admin CLI as an operator runs it: a child process calling the admin plane over real HTTP.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Listening, listen } from '../../serve.ts';
import { ADMIN_TOKEN, createTenant, startTestService, type TestService } from '../helpers/service.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let svc: TestService;
let server: Listening;

beforeAll(async () => {
  svc = await startTestService();
  server = await listen(svc.adminApp, 0, '127.0.0.1');
});
afterAll(async () => {
  await server?.close();
  await svc?.close();
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command in the repository with only the given environment (plus PATH and HOME). */
function run(command: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const cli = (args: string[], env: Record<string, string> = {}) =>
  run(process.execPath, ['admin/main.ts', ...args], {
    ADMIN_TOKEN,
    ADMIN_URL: `${server.url}/trpc`,
    ...env,
  });

describe('admin CLI', () => {
  it('serves on the port the OS picked when asked for port 0', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.url).not.toMatch(/:0$/);
  });

  it('runs a query and prints its answer as JSON, exit code 0', async () => {
    const org = await svc.admin.orgs.create.mutate({ name: 'Listed Org' });
    const res = await cli(['orgs.list']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const orgs = JSON.parse(res.stdout);
    expect(orgs).toEqual(expect.arrayContaining([org]));
  });

  it('runs a mutation with a JSON input', async () => {
    const res = await cli(['users.create', '{"name":"A","email":"a@b.co"}']);
    expect(res.code).toBe(0);
    const user = JSON.parse(res.stdout);
    expect(user).toMatchObject({ name: 'A', email: 'a@b.co', id: expect.any(String) });
    const users = await svc.admin.users.list.query();
    expect(users).toContainEqual(user);
  });

  it('runs a query with an input', async () => {
    const org = await svc.admin.orgs.create.mutate({ name: 'Quota Org', plan: 'pro' });
    const res = await cli(['quotas.get', JSON.stringify({ orgId: org.id })]);
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ organizationId: org.id, plan: 'pro' });
  });

  it('refuses input that is not JSON with exit code 2, before calling anything', async () => {
    const res = await cli(['users.create', '{name: A}']);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/not valid JSON/);
    expect(res.stderr).toContain('{name: A}');
    // Where the JSON goes wrong.
    expect(res.stderr).toContain(
      'Unexpected token name at line 1, column 2: expected a property name in double quotes',
    );
  });

  it('refuses an unknown procedure with exit code 2, pointing at help', async () => {
    for (const name of ['orgs.explode', 'nothing', 'orgs']) {
      const res = await cli([name]);
      expect(res.code, name).toBe(2);
      expect(res.stderr, name).toContain(`Unknown procedure "${name}"`);
      expect(res.stderr, name).toContain('help');
    }
  });

  it('reports a wrong token as UNAUTHORIZED JSON on stderr, exit code 1', async () => {
    const res = await cli(['orgs.list'], { ADMIN_TOKEN: 'wrong-token-0123456789' });
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(JSON.parse(res.stderr)).toMatchObject({
      code: 'UNAUTHORIZED',
      status: 401,
      error: expect.any(String),
    });
  });

  it('reports a refused input as BAD_REQUEST JSON with the field issues, exit code 1', async () => {
    const res = await cli(['users.create', '{"name":"B","email":"not-an-email"}']);
    expect(res.code).toBe(1);
    const err = JSON.parse(res.stderr);
    expect(err).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
    expect(err.details).toEqual([expect.objectContaining({ path: ['email'] })]);
  });

  it('names a missing field as required', async () => {
    const res = await cli(['users.create', '{"name":"B"}']);
    expect(res.code).toBe(1);
    expect(JSON.parse(res.stderr).details).toEqual([
      { code: 'invalid_type', path: ['email'], message: 'email is required' },
    ]);
  });

  it('says what is missing when ADMIN_TOKEN is unset, exit code 2', async () => {
    const res = await run(process.execPath, ['admin/main.ts', 'orgs.list'], {
      ADMIN_URL: `${server.url}/trpc`,
    });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      'Invalid configuration: ADMIN_TOKEN is required: the token printed at first start, or the one you configured',
    );
  });

  it('says where it could not connect, exit code 1', async () => {
    const closed = await listen(svc.adminApp, 0, '127.0.0.1');
    await closed.close();
    const res = await cli(['orgs.list'], { ADMIN_URL: `${closed.url}/trpc` });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`Could not reach the admin plane at ${closed.url}/trpc`);
  });

  it('lists every procedure with its kind on help', async () => {
    const res = await cli(['help']);
    expect(res.code).toBe(0);
    for (const line of [
      'orgs.create (mutation)',
      'orgs.list (query)',
      'orgs.setPlan (mutation)',
      'users.create (mutation)',
      'users.list (query)',
      'members.add (mutation)',
      'members.remove (mutation)',
      'members.setRole (mutation)',
      'workspaces.create (mutation)',
      'workspaces.list (query)',
      'workspaces.grant (mutation)',
      'workspaces.archive (mutation)',
      'workspaces.restore (mutation)',
      'keys.create (mutation)',
      'keys.list (query)',
      'keys.revoke (mutation)',
      'quotas.get (query)',
      'quotas.set (mutation)',
    ]) {
      expect(res.stdout).toContain(line);
    }
  });

  it('is what `npm run admin --` runs', async () => {
    const res = await run('npm', ['run', '--silent', 'admin', '--', 'help']);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('orgs.list (query)');
  });
});

describe('admin CLI deploy shortcut', () => {
  it('creates and deploys a workflow from a YAML file, then deploys the next version from JSON', async () => {
    const tenant = await createTenant(svc.admin);
    const dir = mkdtempSync(join(tmpdir(), 'wfs-cli-'));
    const yamlFile = join(dir, 'greeter.yaml');
    writeFileSync(
      yamlFile,
      [
        'description: Says hello',
        'definition:',
        '  blocks:',
        '    - id: hi',
        '      type: response',
        '      data: hello',
        '',
      ].join('\n'),
    );
    const first = await cli(['deploy', yamlFile, tenant.workspace.id]);
    expect(first.stderr).toBe('');
    expect(JSON.parse(first.stdout)).toMatchObject({ name: 'greeter', created: true, version: 1 });

    const jsonFile = join(dir, 'greeter.json');
    writeFileSync(
      jsonFile,
      JSON.stringify({ blocks: [{ id: 'hi', type: 'response', data: 'hello again' }] }),
    );
    const second = await cli(['deploy', jsonFile, tenant.workspace.id]);
    expect(JSON.parse(second.stdout)).toMatchObject({ name: 'greeter', created: false, version: 2 });
    const [wf] = await svc.admin.workflows.list.query({ workspaceId: tenant.workspace.id });
    expect(wf).toMatchObject({ name: 'greeter', description: 'Says hello', deployedVersion: 2 });
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a missing file, a bad file and an invalid definition with clear messages', async () => {
    const tenant = await createTenant(svc.admin);
    const dir = mkdtempSync(join(tmpdir(), 'wfs-cli-'));
    const missing = await cli(['deploy', join(dir, 'nope.yaml'), tenant.workspace.id]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/Cannot read/);
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'blocks: [unclosed');
    const unparsable = await cli(['deploy', bad, tenant.workspace.id]);
    expect(unparsable.code).toBe(2);
    expect(unparsable.stderr).toMatch(/not valid JSON or YAML/);
    const invalid = join(dir, 'invalid.json');
    writeFileSync(invalid, JSON.stringify({ blocks: [{ id: 'x', type: 'teleport' }] }));
    const refused = await cli(['deploy', invalid, tenant.workspace.id]);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr)).toMatchObject({
      code: 'BAD_REQUEST',
      details: [{ path: ['definition', 'blocks', 0, 'type'] }],
    });
    expect(await svc.admin.workflows.list.query({ workspaceId: tenant.workspace.id })).toEqual([]);
    expect((await cli(['deploy'])).code).toBe(2);
    rmSync(dir, { recursive: true, force: true });
  });
});
