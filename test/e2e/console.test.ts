// The admin console in a real browser (Debian's chromium driven by playwright-core) against the
// admin app on a real port, with a runner in this process: sign in (a wrong token first), pick a
// workspace, deploy a workflow from pasted JSON after a broken one is refused at its paths, deploy a
// YAML version and roll back, run it by hand, find it in the executions list and open its timeline,
// then the overview, keys (a new key is shown once), quotas and knowledge. Each page is saved as a
// screenshot under test/artifacts/console/ for review. Also how the admin port serves the built
// files: caching, the security policy, no way out of assets/, and the 503 page without a build.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole, CONSOLE_DIST, ensureConsoleBuilt } from '../../admin/console/build.ts';
import { consoleRoutes } from '../../admin/console/serve.ts';
import { type Listening, listen } from '../../http/serve.ts';
import { createLogger } from '../../logger.ts';
import { ingest } from '../api/knowledge-helpers.ts';
import { haveChromium, launchChromium } from '../helpers/chromium.ts';
import {
  ADMIN_TOKEN,
  createTenant,
  createWorkspace,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';

const ARTIFACTS = fileURLToPath(new URL('../artifacts/console/', import.meta.url));
const browserHere = haveChromium('console.test.ts');

let svc: TestService;
let tenant: Tenant;
let server: Listening;

beforeAll(async () => {
  // Always from the current sources (a build takes about a second); swapped in whole.
  await buildConsole();
  svc = await startTestService({}, { runner: true });
  tenant = await createTenant(svc.admin, { name: 'Console Org' });
  server = await listen(svc.adminApp, 0, '127.0.0.1');
}, 120_000);

afterAll(async () => {
  await server?.close();
  await svc?.close();
});

describe('the admin port serves the console', () => {
  const get = (path: string, init?: RequestInit) => fetch(`${server.url}${path}`, init);

  it('answers index.html at / and at every page address, never cached, with a same-origin policy', async () => {
    for (const path of [
      '/',
      '/overview',
      '/executions',
      '/executions/4b3a…',
      '/workflows/new',
      '/knowledge',
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("connect-src 'self'");
      const html = await res.text();
      expect(html).toContain('<div id="root"></div>');
      // Nothing from elsewhere: every script and stylesheet is one of ours.
      expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    }
  });

  it('serves the hashed assets with a year of caching, and 404s anything else under /assets', async () => {
    const html = await (await get('/')).text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    const style = /href="(\/assets\/[^"]+\.css)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    expect(style).toBeDefined();
    const js = await get(script as string);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await js.text()).length).toBeGreaterThan(1000);
    const css = await get(style as string);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);

    for (const path of [
      '/assets/missing-abc123.js',
      '/assets/..%2F..%2F..%2Fpackage.json',
      '/assets/%2e%2e%2Findex.html',
      '/assets/.hidden',
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('cache-control')).toBeNull();
    }
  });

  it('keeps the JSON 404 for other addresses, and /trpc behind the token', async () => {
    const res = await get('/no-such-page');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'No route for GET /no-such-page' });
    expect((await get('/trpc/orgs.list')).status).toBe(401);
    expect((await get('/health')).status).toBe(200);
  });

  it('answers 503 with how to build when there is no build, and says so while one runs', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'wfs-console-'));
    try {
      const missing = consoleRoutes({ dir: empty });
      const res = await missing.request('/workflows');
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('60');
      const text = await res.text();
      expect(text).toContain('npm run build');
      expect(text).not.toContain('http-equiv="refresh"');
      expect((await missing.request('/assets/index-abc.js')).status).toBe(404);

      const building = consoleRoutes({ dir: empty, build: { state: 'building', done: Promise.resolve() } });
      const busy = await building.request('/');
      expect(busy.status).toBe(503);
      expect(await busy.text()).toContain('being built');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('builds into admin/console/dist, and start-up leaves a build that is there alone', async () => {
    expect(existsSync(join(CONSOLE_DIST, 'index.html'))).toBe(true);
    const said: string[] = [];
    const status = ensureConsoleBuilt(createLogger('silent'), { say: (l) => said.push(l) });
    expect(status.state).toBe('ready');
    expect(said).toEqual([]);
  });

  it('builds a missing console at start-up while / answers that it is being built, then serves it', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'wfs-console-'));
    const dir = join(parent, 'dist');
    try {
      const said: string[] = [];
      const status = ensureConsoleBuilt(createLogger('silent'), { dir, say: (l) => said.push(l) });
      const routes = consoleRoutes({ dir, build: status });
      expect(status.state).toBe('building');
      expect(said[0]).toContain('building them now');
      const busy = await routes.request('/');
      expect(busy.status).toBe(503);
      expect(await busy.text()).toContain('being built');

      await status.done;
      expect(status.state).toBe('ready');
      expect(said[1]).toMatch(/^Admin console: built in [\d.]+ s$/);
      const ready = await routes.request('/');
      expect(ready.status).toBe(200);
      expect(await ready.text()).toContain('<div id="root"></div>');
      // Only the build is left: no temporary directories beside it.
      expect(readdirSync(parent)).toEqual(['dist']);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  }, 60_000);

  it('logs a failed start-up build and keeps answering how to build', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'wfs-console-'));
    const lines: string[] = [];
    const log = createLogger('info', {}, { destination: { write: (line: string) => lines.push(line) } });
    try {
      const said: string[] = [];
      const status = ensureConsoleBuilt(log, {
        dir: join(parent, 'dist'),
        build: () => Promise.reject(new Error('vite could not resolve ./src/main.tsx')),
        say: (l) => said.push(l),
      });
      await status.done;
      expect(status.state).toBe('failed');
      expect(said[1]).toContain('npm run build');
      const logged = lines.map((l) => JSON.parse(l));
      expect(logged).toEqual([
        expect.objectContaining({
          level: 'error',
          msg: expect.stringContaining('admin console build failed'),
          err: expect.objectContaining({ message: 'vite could not resolve ./src/main.tsx' }),
        }),
      ]);
      const res = await consoleRoutes({ dir: join(parent, 'dist'), build: status }).request('/');
      expect(res.status).toBe(503);
      expect(await res.text()).toContain('npm run build');
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });
});

const GOOD_JSON = `{
  "inputs": { "name": { "type": "string", "required": true } },
  "blocks": [
    { "id": "greet", "type": "function", "code": "return { message: \`Hello, \${inputs.name}!\` }" },
    { "id": "done", "type": "response", "data": { "message": "<greet.message>" } }
  ],
  "edges": [{ "from": "greet", "to": "done" }]
}`;

// Line 4 holds the unknown type; line 6's edge names a block that does not exist.
const BROKEN_JSON = `{
  "blocks": [
    { "id": "greet", "type": "function", "code": "return 1" },
    { "id": "done", "type": "nope" }
  ],
  "edges": [{ "from": "greet", "to": "ghost" }]
}`;

const V2_YAML = `inputs:
  name: { type: string, required: true }
blocks:
  - id: greet
    type: function
    code: "return { message: \`Hello, \${inputs.name}!\` }"
  - id: check
    type: condition
    branches:
      - { id: long, if: "<greet.message>.length > 12" }
      - { id: short }
  - id: done
    type: response
    data: { message: "<greet.message>", size: "<check.selected>" }
edges:
  - { from: greet, to: check }
  - { from: check, to: done, branch: long }
  - { from: check, to: done, branch: short }
`;

describe.skipIf(!browserHere)('the admin console in chromium', () => {
  let browser: Browser;
  let page: Page;
  let workspaceId: string;
  let workflowId: string;
  let executionId: string;

  /** The whole page, from the top (the header is sticky: scrolled, it would be drawn mid-page). */
  const shot = async (name: string) => {
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  };
  const go = (path: string) => page.goto(`${server.url}${path}`);
  /** A page's rows appear once its queries have answered. */
  const visible = (selector: string) => page.locator(selector).first().waitFor({ state: 'visible' });

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    workspaceId = await createWorkspace(svc.admin, tenant);
    await svc.admin.workspaces.update.mutate({ workspaceId, name: 'Console tests' });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
    page.setDefaultTimeout(20_000);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('refuses a wrong token with the reason and the form again, then signs in with the right one', async () => {
    await go('/');
    await page.getByLabel('Admin token').fill('not-the-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('The token was refused: Missing or invalid admin token');
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await shot('login-refused');

    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Executions' }).waitFor();
    // Kept for the tab: a reload stays signed in.
    await page.reload();
    await page.getByRole('link', { name: 'Executions' }).waitFor();
  }, 60_000);

  it('signs out by itself when the kept token stops working', async () => {
    await page.evaluate(() => sessionStorage.setItem('wfs-admin:token', 'stale-token'));
    await page.reload();
    await page.getByLabel('Admin token').waitFor();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('Missing or invalid admin token');
    expect(await page.evaluate(() => sessionStorage.getItem('wfs-admin:token'))).toBeNull();
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Executions' }).waitFor();
  }, 60_000);

  it('picks the workspace in the header and keeps it for the tab', async () => {
    const picker = page.getByLabel('Workspace');
    await page
      .locator(`select[aria-label="Workspace"] option[value="${workspaceId}"]`)
      .waitFor({ state: 'attached' });
    await picker.selectOption(workspaceId);
    await page.reload();
    await page
      .locator(`select[aria-label="Workspace"] option[value="${workspaceId}"]`)
      .waitFor({ state: 'attached' });
    expect(await picker.inputValue()).toBe(workspaceId);
  }, 60_000);

  it('shows a broken definition’s problems at their paths and lines, and deploys a good one', async () => {
    await go('/workflows');
    await page.getByRole('link', { name: 'New workflow' }).click();
    await page.locator('input[name="name"]').fill('Greeter');
    const editor = page.getByLabel('Workflow definition (JSON or YAML)');

    // Not even JSON: stopped in the browser, at its line.
    await editor.fill('{\n  "blocks": [\n    { "id": "greet", \n}');
    await page.getByRole('button', { name: 'Create and deploy' }).click();
    const problems = page.getByLabel('Problems in the definition');
    await problems.waitFor();
    expect(await problems.textContent()).toMatch(/line \d/);

    await editor.fill(BROKEN_JSON);
    await page.getByRole('button', { name: 'Create and deploy' }).click();
    await problems.filter({ hasText: 'definition.blocks[1].type' }).waitFor();
    const items = await problems.locator('li').allTextContents();
    expect(items.some((t) => t.includes('line 4') && t.includes('Unknown block type "nope"'))).toBe(true);
    expect(items.some((t) => t.includes('line 6') && t.includes('definition.edges[0].to'))).toBe(true);
    // The margin marks the lines too.
    expect(await page.locator('.gutter .bad').allTextContents()).toEqual(expect.arrayContaining(['4', '6']));
    await shot('workflow-invalid');
    // Nothing was made.
    expect(await svc.admin.workflows.list.query({ workspaceId })).toEqual([]);

    await editor.fill(GOOD_JSON);
    await page.getByRole('button', { name: 'Create and deploy' }).click();
    await page.getByRole('status').filter({ hasText: 'Deployed version 1.' }).waitFor();
    workflowId = /\/workflows\/([0-9a-f-]{36})/.exec(page.url())?.[1] as string;
    expect(workflowId).toBeDefined();
    expect((await svc.admin.workflows.get.query({ id: workflowId })).deployedVersion).toBe(1);
    await visible('svg g.node[data-block="greet"]');
    expect(await page.locator('svg g.node').count()).toBe(2);
  }, 60_000);

  it('deploys a YAML version with its graph, and rolls back to the first', async () => {
    const editor = page.getByLabel('Workflow definition (JSON or YAML)');
    await editor.fill(V2_YAML);
    await page.getByRole('button', { name: 'Save and deploy' }).click();
    await page.getByRole('status').filter({ hasText: 'Deployed version 2.' }).waitFor();
    await visible('svg g.node[data-block="check"]');
    expect(await page.locator('svg .edge-label').allTextContents()).toEqual(['long', 'short']);
    await shot('workflow');

    await page.getByRole('button', { name: 'Roll back to v1' }).click();
    await page.locator('.page-head .badge', { hasText: 'version 1 deployed' }).waitFor();
    expect((await svc.admin.workflows.get.query({ id: workflowId })).deployedVersion).toBe(1);
  }, 60_000);

  it('runs the workflow by hand and opens the execution with its timeline', async () => {
    const inputs = page.getByLabel('Run inputs');
    // Prefilled from the deployed version's inputs.
    expect(JSON.parse(await inputs.inputValue())).toEqual({ name: '' });
    await inputs.fill('{"name": 42}');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const refusal = page.getByRole('alert').filter({ hasText: 'Not started' });
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain('inputs.name');

    await inputs.fill('{"name": "Console"}');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const started = page.getByRole('status').filter({ hasText: 'Started execution' });
    await started.waitFor();
    await started.getByRole('link').click();
    await page.waitForURL(/\/executions\/[0-9a-f-]{36}$/);
    executionId = page.url().split('/').pop() as string;

    await page.locator('.page-head .badge', { hasText: 'completed' }).waitFor({ timeout: 30_000 });
    await visible('.waterfall .wf-row.span[data-block="greet"]');
    expect(
      await page
        .locator('.waterfall .wf-row.span')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-block'))),
    ).toEqual(['greet', 'done']);
    // Bars are placed by start and sized by duration.
    const bars = await page.locator('.wf-bar.success').count();
    expect(bars).toBe(2);
    expect(await page.locator('pre.json').allTextContents()).toEqual(
      expect.arrayContaining([expect.stringContaining('Hello, Console!')]),
    );
    const detail = await svc.admin.executions.get.query({ id: executionId });
    expect(detail.status).toBe('completed');
    expect(detail.trigger).toBe('manual');
    // A span opens to its input and output.
    await page.locator('.wf-row.span[data-block="greet"]').getByRole('button', { name: 'greet' }).click();
    await visible('tr.wf-detail');
    await shot('execution');
  }, 90_000);

  it('lists the execution, filtered by workflow, status and trigger', async () => {
    await page.getByRole('link', { name: 'Executions', exact: true }).click();
    await visible(`tr[data-execution="${executionId}"]`);
    const row = page.locator(`tr[data-execution="${executionId}"]`);
    expect(await row.textContent()).toContain('Greeter');
    expect(await row.textContent()).toContain('completed');
    expect(await row.textContent()).toContain('manual');
    await shot('executions');

    await page.getByLabel('Status').selectOption('failed');
    await page.getByText('No executions match these filters.').waitFor();
    await page.getByLabel('Status').selectOption('completed');
    await page.getByLabel('Trigger').selectOption('manual');
    await page.getByLabel('Workflow', { exact: true }).selectOption(workflowId);
    await visible(`tr[data-execution="${executionId}"]`);
    expect(page.url()).toContain('status=completed');
    // A time window that ends before the run leaves it out.
    await page.getByLabel('Until').fill('2001-01-01T00:00');
    await page.getByText('No executions match these filters.').waitFor();
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await visible(`tr[data-execution="${executionId}"]`);
    await row.getByRole('link').click();
    await page.waitForURL(`**/executions/${executionId}`);
  }, 60_000);

  it('cancels a running execution with its Cancel button', async () => {
    const wf = await svc.admin.workflows.create.mutate({
      workspaceId,
      name: 'Spinner',
      definition: { blocks: [{ id: 'spin', type: 'function', code: 'while (true) {}', timeoutMs: 120_000 }] },
    });
    await svc.admin.workflows.deploy.mutate({ id: wf.id });
    const run = await svc.admin.executions.run.mutate({ workflowId: wf.id });
    await go(`/executions/${run.executionId}`);
    await page.locator('.page-head .badge', { hasText: 'processing' }).waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    await page.locator('.page-head .badge', { hasText: 'cancelled' }).waitFor({ timeout: 30_000 });
    expect(await page.getByRole('button', { name: 'Cancel', exact: true }).count()).toBe(0);
    expect(await page.locator('dl.facts').textContent()).toContain('by admin');
    expect((await svc.admin.executions.get.query({ id: run.executionId })).status).toBe('cancelled');
  }, 60_000);

  it('shows a paused execution with Approve and Reject; Approve resumes it', async () => {
    const wf = await svc.admin.workflows.create.mutate({
      workspaceId,
      name: 'Approver',
      definition: {
        blocks: [
          { id: 'ask', type: 'approval', message: 'Ship it?', fields: { note: { type: 'string' } } },
          { id: 'r', type: 'response', data: '<ask.data.note>' },
        ],
        edges: [{ from: 'ask', to: 'r', branch: 'approved' }],
      },
    });
    await svc.admin.workflows.deploy.mutate({ id: wf.id });
    const run = await svc.admin.executions.run.mutate({ workflowId: wf.id });
    await go(`/executions/${run.executionId}`);
    await page.locator('.page-head .badge', { hasText: 'paused' }).waitFor({ timeout: 30_000 });
    expect(await page.locator('.card.pause .message').textContent()).toBe('Ship it?');
    expect(await page.getByRole('button', { name: 'Reject', exact: true }).count()).toBe(1);
    await page.getByLabel('Approval data').fill('{"note": "from the console"}');
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.locator('.page-head .badge', { hasText: 'completed' }).waitFor({ timeout: 30_000 });
    expect(await page.getByRole('button', { name: 'Approve', exact: true }).count()).toBe(0);
    const done = await svc.admin.executions.get.query({ id: run.executionId });
    expect(done.output).toBe('from the console');
    expect(done.traceSpans.find((sp: { blockId: string }) => sp.blockId === 'ask')?.output).toMatchObject({
      approved: true,
      by: 'admin',
    });
  }, 60_000);

  it('shows the overview: the last hour by minute, the queues and the ingestion backlog', async () => {
    await go('/overview');
    await visible('figure.chart svg rect.bar.completed');
    await visible('td code:text("workflow-execute")');
    const completed = page.locator('.tile', { hasText: 'Completed (1 h)' }).locator('.tile-value');
    expect(Number(await completed.textContent())).toBeGreaterThanOrEqual(1);
    await page.getByRole('button', { name: /^Workspace / }).click();
    await visible('figure.chart svg rect.bar.completed');
    await shot('overview');
  }, 60_000);

  it('creates a key shown once with a copy button, lists it masked, and revokes it', async () => {
    await go('/keys');
    await page.locator('input[name="keyName"]').fill('console key');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByLabel('New API key');
    await shown.waitFor();
    const key = await shown.inputValue();
    expect(key).toMatch(/^sk-service-[A-Za-z0-9_-]{32}$/);
    await page.getByRole('button', { name: 'Copy' }).waitFor();
    const listed = (await svc.admin.keys.list.query({ workspaceId })).find((k) => k.name === 'console key');
    expect(listed).toBeDefined();
    const row = page.locator(`tr[data-key="${listed?.id}"]`);
    await row.waitFor();
    expect(await row.textContent()).toContain(key.slice(-4));
    expect(await row.textContent()).not.toContain(key);
    await shot('keys');

    // Once: away and back, only the masked key remains.
    await page.getByRole('button', { name: 'Done' }).click();
    await go('/keys');
    await row.waitFor();
    expect(await page.getByLabel('New API key').count()).toBe(0);
    expect(await page.content()).not.toContain(key);

    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Confirm revoke' }).click();
    await row.locator('.badge', { hasText: 'revoked' }).waitFor();
    expect(
      (await svc.admin.keys.list.query({ workspaceId })).find((k) => k.id === listed?.id)?.revokedAt,
    ).not.toBeNull();

    // A nameless key is refused with the field's issue, and nothing is made.
    await page.getByRole('button', { name: 'Create key' }).click();
    const refusal = page.getByRole('alert').filter({ hasText: 'Not created' });
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain('name');
    expect(await svc.admin.keys.list.query({ workspaceId })).toHaveLength(1);
  }, 60_000);

  it('creates a key limited to the scopes ticked, lists them, and lists an unlimited key as all', async () => {
    await go('/keys');
    await page.locator('input[name="keyName"]').fill('scoped key');
    const scopes = page.getByRole('group', { name: 'Scopes' });
    await scopes.getByLabel('workflows:execute').check();
    await scopes.getByLabel('logs:read').check();
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByLabel('New API key').waitFor();
    const listed = (await svc.admin.keys.list.query({ workspaceId })).find((k) => k.name === 'scoped key');
    expect(listed?.scopes).toEqual(['workflows:execute', 'logs:read']);
    const row = page.locator(`tr[data-key="${listed?.id}"]`);
    await row.waitFor();
    expect(await row.locator('td.key-scopes').textContent()).toBe('workflows:execute, logs:read');
    // The ticks are cleared for the next key.
    expect(await scopes.getByLabel('logs:read').isChecked()).toBe(false);
    await page.getByRole('button', { name: 'Done' }).click();
    // The owner's key has no scopes: its full reach.
    const owner = (await svc.admin.keys.list.query({ userId: tenant.user.id }))[0];
    expect(await page.locator(`tr[data-key="${owner?.id}"] td.key-scopes`).textContent()).toBe(
      'all (unlimited)',
    );
    await shot('keys-scoped');
  }, 60_000);

  it('shows the quotas: plan, limits with overrides, spend and storage bars', async () => {
    await svc.admin.quotas.set.mutate({ orgId: tenant.org.id, maxTables: 7 });
    await go('/quotas');
    await visible('[data-meter="Spend this period"]');
    await visible('[data-meter="Storage"]');
    const maxTables = page.locator('tr[data-limit="maxTables"]');
    await maxTables.waitFor();
    expect(await maxTables.textContent()).toContain('7');
    expect(await maxTables.textContent()).toContain('override');
    expect(await page.locator('tr[data-limit="usageLimit"]').textContent()).toContain('plan');
    await shot('quotas');
  }, 60_000);

  it('shows the knowledge documents with status and failure reason; disables and re-processes one', async () => {
    const kb = await svc.admin.knowledge.create.mutate({ workspaceId, name: 'Handbook' });
    const good = await ingest(svc, tenant.key, kb.id, {
      workspaceId,
      name: 'guide.md',
      type: 'text/markdown',
      content: '# Guide\n\nThe console shows documents, their status and why one failed.\n',
    });
    const bad = await ingest(svc, tenant.key, kb.id, { workspaceId, name: 'empty.txt', content: '' });
    expect(good.processingStatus).toBe('completed');
    expect(bad.processingStatus).toBe('failed');

    await go('/knowledge');
    const badRow = page.locator('tr[data-document="empty.txt"]');
    await badRow.waitFor();
    expect(await badRow.textContent()).toContain('failed');
    expect(await badRow.locator('.error-text').textContent()).toBe(bad.processingError);
    const goodRow = page.locator('tr[data-document="guide.md"]');
    expect(await goodRow.textContent()).toContain('completed');
    await shot('knowledge');

    await goodRow.getByRole('checkbox').uncheck();
    await goodRow.getByText('disabled').waitFor();
    await expect
      .poll(async () => (await svc.admin.knowledge.getDocument.query({ documentId: good.id })).enabled)
      .toBe(false);

    // Processed again, it fails again for the same reason (an empty file has nothing to index).
    const before = await svc.admin.knowledge.getDocument.query({ documentId: bad.id });
    await badRow.getByRole('button', { name: 'Re-process' }).click();
    await expect
      .poll(async () => {
        const now = await svc.admin.knowledge.getDocument.query({ documentId: bad.id });
        return now.processingStatus === 'failed' && now.processedAt !== before.processedAt;
      })
      .toBe(true);
    await badRow.locator('.badge', { hasText: 'failed' }).waitFor();
    expect(await badRow.locator('.error-text').textContent()).toBe(bad.processingError);
  }, 90_000);

  it('draws a row per attempt of a block with retry, each labelled with its number', async () => {
    const wf = await svc.admin.workflows.create.mutate({
      workspaceId,
      name: 'Retrier',
      definition: {
        blocks: [
          {
            id: 'flaky',
            type: 'function',
            code: 'throw new Error("not today")',
            retry: { maxAttempts: 2, delayMs: 0, retryOn: ['error'] },
          },
        ],
      },
    });
    await svc.admin.workflows.deploy.mutate({ id: wf.id });
    const run = await svc.admin.executions.run.mutate({ workflowId: wf.id, inputs: {} });
    await go(`/executions/${run.executionId}`);
    await page.locator('.page-head .badge', { hasText: 'failed' }).waitFor({ timeout: 30_000 });
    await visible('.waterfall .wf-row.span[data-block="flaky"]');
    expect(await page.locator('.waterfall .wf-row.span .wf-attempt').allTextContents()).toEqual([
      ' attempt 1',
      ' attempt 2',
    ]);
  }, 60_000);
});
