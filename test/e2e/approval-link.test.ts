// Approval links (jobs/approval-links.ts) for a person without an API key: the Job record's signed
// `approvalUrl` shows a page with the message and a form; its form-encoded POST resumes the execution
// once; a forged, expired, used or unknown link answers a 4xx page and changes nothing. Then the same
// in a real browser (Debian's chromium): open the link, fill the field, press Approve.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Listening, listen } from '../../http/serve.ts';
import { haveChromium, launchChromium } from '../helpers/chromium.ts';
import { ENDS, type ExecutionNotices, watchExecutions } from '../helpers/execution-notices.ts';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';
import { deployWorkflow } from '../helpers/workflows.ts';

const HOUR = 3_600_000;
let now = Date.parse('2026-02-01T00:00:00.000Z');
const clock = () => new Date(now);
const browserHere = haveChromium('approval-link.test.ts');

let svc: TestService;
let tenant: Tenant;
let notices: ExecutionNotices;
let wf: string;

beforeAll(async () => {
  svc = await startTestService({ APPROVAL_LINK_SECRET: 'x'.repeat(40) }, { runner: true, clock });
  notices = await watchExecutions(svc.db);
  tenant = await createTenant(svc.admin);
  wf = await deployWorkflow(svc.admin, tenant.workspace.id, {
    blocks: [
      {
        id: 'ask',
        type: 'approval',
        message: 'Ship <b>release</b> "<start.version>"?',
        fields: {
          note: { type: 'string', required: true, description: 'Why' },
          count: { type: 'number' },
          urgent: { type: 'boolean' },
        },
        timeoutMs: 2 * HOUR,
      },
      { id: 'r', type: 'response', data: { answer: '<ask>' } },
    ],
    edges: [{ from: 'ask', to: 'r' }],
    inputs: { version: { type: 'string', required: true } },
  });
});
afterAll(async () => {
  await notices?.close();
  await svc?.close();
});

async function pausedLink(version: string): Promise<{ id: string; link: string; contextId: string }> {
  const res = await svc.call('POST', `/api/workflows/${wf}/execute`, {
    key: tenant.key,
    body: { inputs: { version }, async: true },
  });
  const id = res.body.taskId as string;
  // The runner's notice that it parked the execution for a person.
  await notices.next(id, ['parked']);
  const job = await svc.call('GET', `/api/jobs/${id}`, { key: tenant.key });
  const pause = job.body.metadata?.pause;
  expect(pause, JSON.stringify(job.body)).toMatchObject({ approvalUrl: expect.any(String) });
  return { id, link: pause.approvalUrl, contextId: pause.contextId };
}
/** Waits for the runner's notice that the execution ended; answers the GET of its Job record. */
const finished = async (id: string) => {
  await notices.next(id, ENDS);
  return svc.call('GET', `/api/jobs/${id}`, { key: tenant.key });
};

const get = (path: string) => svc.app.request(path);
const post = (path: string, form: Record<string, string>, type = 'application/x-www-form-urlencoded') =>
  svc.app.request(path, {
    method: 'POST',
    headers: { 'Content-Type': type },
    body: new URLSearchParams(form).toString(),
  });
const statusOf = async (id: string) =>
  (await svc.call('GET', `/api/jobs/${id}`, { key: tenant.key })).body.status as string;

describe('approval links', () => {
  it('shows the page, refuses bad answers, resumes once, then answers 409', async () => {
    const { id, link } = await pausedLink('1.2<script>');
    expect(link).toMatch(/^\/approve\/[0-9a-f-]{36}\/[0-9a-f-]{36}\?expires=\d+&signature=[\w-]{43}$/);
    const page = await get(link);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await page.text();
    // Every value is escaped: the message and the input render as text.
    expect(html).toContain('Ship &lt;b&gt;release&lt;/b&gt; &quot;1.2&lt;script&gt;&quot;?');
    expect(html).not.toContain('<script>');
    expect(html).toContain('name="note"');
    expect(html).toContain('value="true">Approve</button>');
    // Bad answers: a page saying why, nothing changed.
    expect((await post(link, { note: 'x' })).status).toBe(400);
    expect((await post(link, { approved: 'true', note: 'x', count: 'many' })).status).toBe(400);
    const missing = await post(link, { approved: 'true' });
    expect(missing.status).toBe(400);
    expect(await missing.text()).toContain('note: Required input');
    const json = await svc.app.request(link, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"approved":"true"}',
    });
    expect(json.status).toBe(415);
    expect(await statusOf(id)).toBe('paused');
    const ok = await post(link, { approved: 'true', note: 'go', count: '3', urgent: 'true' });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('Approved');
    const done = await finished(id);
    expect(done.body.output.answer).toMatchObject({
      approved: true,
      data: { note: 'go', count: 3, urgent: true },
      by: 'link',
      timedOut: false,
    });
    // Used: both the page and another answer say so.
    expect((await get(link)).status).toBe(409);
    expect((await post(link, { approved: 'false' })).status).toBe(409);
    const audit = await svc.db.query<{ action: string; actor_name: string }>(
      `select action, actor_name from audit_logs where metadata->>'executionId' = $1 and action = 'workflow.approve'`,
      [id],
    );
    expect(audit).toEqual([{ action: 'workflow.approve', actor_name: 'approval link' }]);
  });

  it('refuses forged, stretched, unknown and expired links, changing nothing', async () => {
    const { id, link, contextId } = await pausedLink('2');
    const url = new URL(link, 'http://x');
    const sig = url.searchParams.get('signature') as string;
    const expires = url.searchParams.get('expires') as string;
    const flipped = `${sig.slice(0, -1)}${sig.endsWith('A') ? 'B' : 'A'}`;
    const forged = [
      link.replace(sig, flipped),
      link.replace(`expires=${expires}`, `expires=${Number(expires) + HOUR}`),
      link.replace(/&signature=.*/, ''),
      link.replace(contextId, crypto.randomUUID()),
      `${url.pathname}?expires=${expires}&signature=${'A'.repeat(43)}`,
    ];
    for (const bad of forged) {
      expect((await get(bad)).status, bad).toBe(403);
      expect((await post(bad, { approved: 'true', note: 'x' })).status, bad).toBe(403);
    }
    expect((await get('/approve/not-a-uuid/also-not')).status).toBe(404);
    // The execution's own link with another execution's id is forged too.
    expect((await get(link.replace(id, crypto.randomUUID()))).status).toBe(403);
    expect(await statusOf(id)).toBe('paused');
    // Expired: the approval's timeout passes (the link lasts as long as the pause).
    now += 2 * HOUR;
    const expired = await get(link);
    expect(expired.status).toBe(410);
    expect(await expired.text()).toContain('expired');
    expect((await post(link, { approved: 'true', note: 'late' })).status).toBe(410);
    const done = await finished(id);
    expect(done.body.output.answer).toMatchObject({ approved: false, timedOut: true, by: null });
  });
});

describe.runIf(browserHere)('approval links in a browser', () => {
  let browser: Browser;
  let server: Listening;
  beforeAll(async () => {
    browser = await launchChromium();
    server = await listen(svc.app, 0, '127.0.0.1');
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('opens the link, fills the form, approves; reloading says it was answered', async () => {
    const { id, link } = await pausedLink('3.0');
    const page = await browser.newPage();
    const response = await page.goto(`${server.url}${link}`);
    expect(response?.status()).toBe(200);
    expect(await page.textContent('.message')).toBe('Ship <b>release</b> "3.0"?');
    await page.fill('input[name="note"]', 'looks good');
    await page.fill('input[name="count"]', '7');
    await page.check('input[name="urgent"]');
    await Promise.all([page.waitForLoadState('load'), page.click('button[value="true"]')]);
    expect(await page.textContent('h1')).toBe('Approved');
    const done = await finished(id);
    expect(done.body.output.answer).toMatchObject({
      approved: true,
      data: { note: 'looks good', count: 7, urgent: true },
      by: 'link',
    });
    const again = await page.goto(`${server.url}${link}`);
    expect(again?.status()).toBe(409);
    expect(await page.textContent('h1')).toBe('Already answered');
    await page.close();
  });

  it('rejects from the page without filling the required field', async () => {
    const { id, link } = await pausedLink('3.1');
    const page = await browser.newPage();
    await page.goto(`${server.url}${link}`);
    await Promise.all([page.waitForLoadState('load'), page.click('button[value="false"]')]);
    expect(await page.textContent('h1')).toBe('Rejected');
    const done = await finished(id);
    expect(done.body.output.answer).toMatchObject({ approved: false, data: {}, by: 'link' });
    await page.close();
  });
});
