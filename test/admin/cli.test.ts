// The admin CLI as an operator runs it: a child process calling the admin plane over real HTTP.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { procedureHelp, procedures } from '../../admin/cli-help.ts';
import { adminRouter } from '../../admin/router.ts';
import { type Listening, listen } from '../../http/serve.ts';
import { childBaseEnv } from '../helpers/child-env.ts';
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
function run(command: string, args: string[], env: Record<string, string> = {}, cwd = ROOT): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      env: { ...childBaseEnv(), ...env },
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

  it('makes a workflow folder, puts a workflow in it, lists by it and shows it', async () => {
    const tenant = await createTenant(svc.admin);
    const ws = tenant.workspace.id;
    const made = await cli([
      'folders.create',
      JSON.stringify({ workspaceId: ws, name: 'Billing', kind: 'workflow' }),
    ]);
    expect(made.code, made.stderr).toBe(0);
    const folder = JSON.parse(made.stdout);
    expect(folder).toMatchObject({ name: 'Billing', kind: 'workflow' });
    const definition = { inputs: {}, blocks: [{ id: 'r', type: 'response', data: {} }], edges: [] };
    const wf = await cli([
      'workflows.create',
      JSON.stringify({ workspaceId: ws, name: 'Invoice', folderId: folder.id, definition }),
    ]);
    expect(wf.code, wf.stderr).toBe(0);
    expect(JSON.parse(wf.stdout).folderId).toBe(folder.id);
    const listed = await cli(['workflows.list', JSON.stringify({ workspaceId: ws, folderId: folder.id })]);
    expect(
      JSON.parse(listed.stdout).map((w: { name: string; folderId: string }) => [w.name, w.folderId]),
    ).toEqual([['Invoice', folder.id]]);
    const deleted = await cli(['folders.delete', JSON.stringify({ id: folder.id })]);
    expect(JSON.parse(deleted.stdout)).toMatchObject({ movedWorkflows: 1 });
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

  it('creates a key limited to --scopes a,b, and refuses an unknown scope or a misplaced flag', async () => {
    const tenant = await createTenant(svc.admin);
    const input = JSON.stringify({ type: 'workspace', workspaceId: tenant.workspace.id, name: 'ci' });
    const res = await cli(['keys.create', input, '--scopes', 'workflows:execute,logs:read']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const created = JSON.parse(res.stdout);
    expect(created.scopes).toEqual(['workflows:execute', 'logs:read']);
    const listed = await svc.admin.keys.list.query({ workspaceId: tenant.workspace.id });
    expect(listed.find((k) => k.id === created.id)?.scopes).toEqual(['workflows:execute', 'logs:read']);
    // The = form too. The calls are independent: started together, each process's start-up (most of
    // a call) overlaps the others'.
    const [eq, unknown, empty, elsewhere] = await Promise.all([
      cli(['keys.create', input, '--scopes=tables:read']),
      cli(['keys.create', input, '--scopes', 'tables:admin']),
      cli(['keys.create', input, '--scopes']),
      cli(['orgs.list', '--scopes', 'tables:read']),
    ]);
    expect(JSON.parse(eq.stdout).scopes).toEqual(['tables:read']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('BAD_REQUEST');
    expect(unknown.stderr).toContain('tables:admin');
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('--scopes needs a list');
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr).toContain('keys.create only');
    expect(await svc.admin.keys.list.query({ workspaceId: tenant.workspace.id })).toHaveLength(2);
  });

  it('refuses an unknown procedure with exit code 2, pointing at help', async () => {
    const names = ['orgs.explode', 'nothing', 'orgs'];
    const answers = await Promise.all(names.map((name) => cli([name])));
    for (const [i, name] of names.entries()) {
      const res = answers[i] as Run;
      expect(res.code, name).toBe(2);
      expect(res.stderr, name).toContain(`Unknown procedure "${name}"`);
      expect(res.stderr, name).toContain('help');
    }
  });

  it('says in one line to set ADMIN_TOKEN when the admin plane refuses the token, exit code 1', async () => {
    const res = await cli(['orgs.list'], { ADMIN_TOKEN: 'wrong-token-0123456789' });
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr.trimEnd().split('\n')).toEqual([
      expect.stringContaining(`The admin plane at ${server.url}/trpc refused ADMIN_TOKEN: set it to`),
    ]);
    expect(res.stderr).toContain('docs/admin.md');
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

  it('says in one line to set ADMIN_TOKEN when it is unset, exit code 2, calling nothing', async () => {
    const res = await run(process.execPath, ['admin/main.ts', 'orgs.list'], {
      ADMIN_URL: `${server.url}/trpc`,
    });
    expect(res.code).toBe(2);
    expect(res.stderr.trimEnd().split('\n')).toEqual([
      expect.stringMatching(/^ADMIN_TOKEN is not set: set it to the admin token/),
    ]);
  });

  it('says where it could not connect and to set ADMIN_PORT or ADMIN_URL, in one line, exit code 1', async () => {
    const closed = await listen(svc.adminApp, 0, '127.0.0.1');
    await closed.close();
    const port = new URL(closed.url).port;
    // ADMIN_PORT alone makes the address.
    const res = await run(process.execPath, ['admin/main.ts', 'orgs.list'], {
      ADMIN_TOKEN,
      ADMIN_PORT: port,
    });
    expect(res.code).toBe(1);
    const lines = res.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(
      `Could not reach the admin plane at http://127.0.0.1:${port}/trpc (ECONNREFUSED)`,
    );
    expect(lines[0]).toContain('ADMIN_PORT (or ADMIN_URL)');
  });

  it('says when what answers on the admin port is not the admin plane (the API, say), in one line', async () => {
    const api = await listen(svc.app, 0, '127.0.0.1');
    try {
      for (const url of [`${api.url}/trpc`, `${server.url}/`]) {
        const res = await cli(['orgs.list'], { ADMIN_URL: url });
        expect(res.code, url).toBe(1);
        const lines = res.stderr.trimEnd().split('\n');
        expect(lines, url).toEqual([
          expect.stringContaining(`Something answered at ${url} (HTTP 404), but not the admin plane`),
        ]);
        expect(lines[0], url).toContain('ADMIN_PORT (or ADMIN_URL)');
      }
    } finally {
      await api.close();
    }
  });

  it('lists every procedure of the router with its one-line description on help', async () => {
    const res = await cli(['help']);
    expect(res.code).toBe(0);
    const paths = Object.keys(adminRouter._def.procedures);
    expect(paths.length).toBeGreaterThan(50);
    const lines = res.stdout.split('\n');
    for (const path of paths) {
      const line = lines.find((l) => l.trim().split(/\s+/)[0] === path);
      expect(line, path).toBeDefined();
      // The description: words after the name, at least a few of them.
      expect(line?.trim().slice(path.length).trim().split(' ').length, path).toBeGreaterThan(2);
    }
    expect(res.stdout).toMatch(/^\s+orgs\.create\s+Create an organization/m);
    expect(res.stdout).toMatch(/^\s+keys\.revoke\s+Revoke an API key/m);
  });

  it('shows the input of one procedure from its schema: fields, types, required or optional, enums, defaults', async () => {
    // Independent calls, started together so their start-ups overlap.
    const [keys, docs, quotas, none, unknown] = await Promise.all([
      cli(['help', 'keys.create']),
      cli(['help', 'knowledge.documents']),
      cli(['help', 'quotas.set']),
      cli(['help', 'orgs.list']),
      cli(['help', 'orgs.explode']),
    ]);
    expect(keys.code).toBe(0);
    expect(keys.stdout).toContain('keys.create (mutation): Create an API key');
    expect(keys.stdout).toContain('one of 2 shapes');
    expect(keys.stdout).toContain('type: "personal"  (required)');
    expect(keys.stdout).toContain('userId: uuid  (required)');
    expect(keys.stdout).toContain('type: "workspace"  (required)');
    expect(keys.stdout).toContain('name: string 1 to 100 characters  (required)');

    expect(docs.stdout).toContain('knowledgeBaseId: uuid  (required)');
    expect(docs.stdout).toContain('limit: integer 1 to 100  (optional, default 50)');
    expect(docs.stdout).toContain('sortOrder: "asc" | "desc"  (optional, default "desc")');
    expect(docs.stdout).toContain(`Example: npm run admin -- knowledge.documents '{"knowledgeBaseId":"…"}'`);

    expect(quotas.stdout).toContain('sync: object or null  (optional)');
    expect(quotas.stdout).toMatch(/^ {4}requestsPerMinute: integer 1 to \d+ {2}\(required\)$/m);

    expect(none.stdout).toContain('Input: none.');

    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Unknown procedure "orgs.explode"');
  });

  it('prints the input help of every procedure without failing', async () => {
    const all = procedures();
    for (const [path, p] of all) {
      const text = procedureHelp(path, p);
      expect(text.split('\n')[0], path).toBe(`${path} (${p.type}): ${p.description}`);
      expect(text, path).toMatch(/\nExample: npm run admin -- /);
    }
  });

  it('is what `npm run admin --` runs', async () => {
    const res = await run('npm', ['run', '--silent', 'admin', '--', 'help']);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^\s+orgs\.list\s+List every organization$/m);
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

  it('takes name and description written beside inputs, blocks and edges, and answers the id', async () => {
    const tenant = await createTenant(svc.admin);
    const dir = mkdtempSync(join(tmpdir(), 'wfs-cli-'));
    const file = join(dir, 'anything.json');
    const definition = {
      inputs: { who: { type: 'string', required: true } },
      blocks: [{ id: 'hi', type: 'response', data: { hello: '<start.who>' } }],
      edges: [],
    };
    writeFileSync(file, JSON.stringify({ name: 'Greeter', description: 'Says hello', ...definition }));
    const res = await cli(['deploy', file, tenant.workspace.id]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const answer = JSON.parse(res.stdout);
    expect(answer).toMatchObject({ id: expect.any(String), name: 'Greeter', created: true, version: 1 });
    const wf = await svc.admin.workflows.get.query({ id: answer.id });
    expect(wf).toMatchObject({ name: 'Greeter', description: 'Says hello', deployedVersion: 1 });
    // Stored without them: the definition is inputs, blocks and edges only.
    expect(wf.definition).not.toHaveProperty('name');
    expect(wf.definition).not.toHaveProperty('description');
    expect(wf.definition).toMatchObject(definition);

    // A name given on the command line wins over the file's.
    const renamed = await cli(['deploy', file, tenant.workspace.id, 'Other']);
    expect(JSON.parse(renamed.stdout)).toMatchObject({ name: 'Other', created: true });

    writeFileSync(file, JSON.stringify({ name: 42, ...definition }));
    const refused = await cli(['deploy', file, tenant.workspace.id]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('"name" must be a string');
    writeFileSync(file, '[1, 2]');
    const notObject = await cli(['deploy', file, tenant.workspace.id]);
    expect(notObject.code).toBe(2);
    expect(notObject.stderr).toContain('must hold an object');
    expect(await svc.admin.workflows.list.query({ workspaceId: tenant.workspace.id })).toHaveLength(2);
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads a relative path from where `npm run admin` was run, not from the package directory', async () => {
    const tenant = await createTenant(svc.admin);
    // Below the package, so npm finds it; ignored by git.
    mkdirSync(join(ROOT, 'test/artifacts'), { recursive: true });
    const dir = mkdtempSync(join(ROOT, 'test/artifacts/cli-'));
    writeFileSync(join(dir, 'here.yaml'), 'blocks:\n  - {id: hi, type: response, data: here}\n');
    const res = await run(
      'npm',
      ['run', '--silent', 'admin', '--', 'deploy', 'here.yaml', tenant.workspace.id],
      { ADMIN_TOKEN, ADMIN_URL: `${server.url}/trpc` },
      dir,
    );
    expect(res.stderr).toBe('');
    expect(JSON.parse(res.stdout)).toMatchObject({ name: 'here', created: true, version: 1 });
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a missing file, a bad file and an invalid definition with clear messages', async () => {
    const tenant = await createTenant(svc.admin);
    const dir = mkdtempSync(join(tmpdir(), 'wfs-cli-'));
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'blocks: [unclosed');
    const invalid = join(dir, 'invalid.json');
    writeFileSync(invalid, JSON.stringify({ blocks: [{ id: 'x', type: 'teleport' }] }));
    // Independent calls, started together so their start-ups overlap.
    const [missing, unparsable, refused, noArgs] = await Promise.all([
      cli(['deploy', join(dir, 'nope.yaml'), tenant.workspace.id]),
      cli(['deploy', bad, tenant.workspace.id]),
      cli(['deploy', invalid, tenant.workspace.id]),
      cli(['deploy']),
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/Cannot read/);
    expect(unparsable.code).toBe(2);
    expect(unparsable.stderr).toMatch(/not valid JSON or YAML/);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr)).toMatchObject({
      code: 'BAD_REQUEST',
      details: [{ path: ['definition', 'blocks', 0, 'type'] }],
    });
    expect(await svc.admin.workflows.list.query({ workspaceId: tenant.workspace.id })).toEqual([]);
    expect(noArgs.code).toBe(2);
    rmSync(dir, { recursive: true, force: true });
  });
});
