// The admin console's layout in a real browser (Debian's chromium driven by playwright-core), at 800
// and at 1400 px wide, against a service set up as a first start leaves it (the bootstrap
// organization, workspace and personal key): the header keeps the workspace picker and "Sign out" on
// screen; the executions table shows a failed execution's whole error; the trace waterfall draws
// every loop and parallel iteration under the span it ran in; the overview draws a few minutes of
// runs as bars wide enough to read; and the keys page lists the bootstrap key by default. Each page
// is saved as a screenshot under test/artifacts/console-layout/ for review.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildConsole } from '../../admin/console/build.ts';
import { bootstrap } from '../../db/bootstrap.ts';
import { type Listening, listen } from '../../http/serve.ts';
import { haveChromium, launchChromium } from '../helpers/chromium.ts';
import { ADMIN_TOKEN, startTestService, type TestService } from '../helpers/service.ts';

const ARTIFACTS = fileURLToPath(new URL('../artifacts/console-layout/', import.meta.url));
const browserHere = haveChromium('console-layout.test.ts');

// What an operator sees when a dependency is down: long, and all of it matters.
const LONG_ERROR =
  'The inventory service answered 503 Service Unavailable to all 3 attempts for order 4711 (warehouse eu-west-2, sku ACME-ROCKET-SKATES); giving up';

// A sequential loop whose every iteration runs a function and then a parallel block (two iterations
// of its own), beside a function that runs at the same time as the loop. The iterations' spans start
// in the same instant as the span they run in, and after the sibling started.
const NESTED = {
  blocks: [
    {
      id: 'each',
      type: 'loop',
      count: 2,
      blocks: [
        { id: 'first', type: 'function', code: 'return 1' },
        {
          id: 'fan',
          type: 'parallel',
          count: 2,
          blocks: [{ id: 'leaf', type: 'function', code: 'return 2' }],
        },
      ],
      edges: [{ from: 'first', to: 'fan' }],
    },
    { id: 'side', type: 'function', code: 'return 3' },
    { id: 'done', type: 'response', data: { ok: true } },
  ],
  edges: [
    { from: 'each', to: 'done' },
    { from: 'side', to: 'done' },
  ],
};

let svc: TestService;
let server: Listening;
let workspaceId: string;
let failedId: string;
let nestedId: string;

async function runToEnd(workflowId: string): Promise<string> {
  const { executionId } = await svc.admin.executions.run.mutate({ workflowId, inputs: {} });
  await vi.waitFor(
    async () => {
      const { status } = await svc.admin.executions.get.query({ id: executionId });
      if (status !== 'completed' && status !== 'failed') throw new Error(`still ${status}`);
    },
    { timeout: 30_000, interval: 50 },
  );
  return executionId;
}

beforeAll(async () => {
  await buildConsole();
  svc = await startTestService({}, { runner: true });
  // As the first start of a service: organization `default`, workspace `Default`, a personal key.
  const boot = await bootstrap(svc.db, { encryptionKey: svc.encryptionKey });
  workspaceId = boot.workspaceId as string;
  const [org] = await svc.admin.orgs.list.query();
  const [owner] = await svc.admin.users.list.query();
  // A second workspace with a long name: the picker is as wide as its longest choice.
  await svc.admin.workspaces.create.mutate({
    orgId: org?.id as string,
    ownerId: owner?.id as string,
    name: 'Customer onboarding automation (staging)',
    skipDefaultWorkflow: true,
  });

  const failing = await svc.admin.workflows.create.mutate({
    workspaceId,
    name: 'Order sync',
    definition: {
      blocks: [{ id: 'reserve', type: 'function', code: `throw new Error(${JSON.stringify(LONG_ERROR)})` }],
      edges: [],
    },
  });
  await svc.admin.workflows.deploy.mutate({ id: failing.id });
  const nested = await svc.admin.workflows.create.mutate({
    workspaceId,
    name: 'Nested batches',
    definition: NESTED,
  });
  await svc.admin.workflows.deploy.mutate({ id: nested.id });
  failedId = await runToEnd(failing.id);
  nestedId = await runToEnd(nested.id);
  expect((await svc.admin.executions.get.query({ id: failedId })).status).toBe('failed');
  expect((await svc.admin.executions.get.query({ id: nestedId })).status).toBe('completed');

  server = await listen(svc.adminApp, 0, '127.0.0.1');
}, 120_000);

afterAll(async () => {
  await server?.close();
  await svc?.close();
});

type Box = { left: number; right: number; top: number; bottom: number; width: number; height: number };

/** Where a locator's element is drawn, in viewport coordinates. */
const box = (l: Locator): Promise<Box> =>
  l.evaluate((el) => {
    const r = el.getBoundingClientRect();
    return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width, height: r.height };
  });

/** Whether a click at the middle of the element, without scrolling, would reach it. */
const reachable = (l: Locator) =>
  l.evaluate((el) => {
    const r = el.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return hit !== null && (hit === el || el.contains(hit));
  });

describe.skipIf(!browserHere)('the admin console’s layout in chromium', () => {
  let browser: Browser;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  for (const width of [800, 1400]) {
    describe(`at ${width} px wide`, () => {
      let page: Page;
      const go = (path: string) => page.goto(`${server.url}${path}`);
      const shot = async (name: string) => {
        await page.evaluate(() => window.scrollTo(0, 0));
        await page.screenshot({ path: join(ARTIFACTS, `${name}-${width}.png`), fullPage: true });
      };
      /** The page does not scroll sideways: everything fits the window's width. */
      const fitsWidth = async () => {
        const { scroll, inner } = await page.evaluate(() => ({
          scroll: document.documentElement.scrollWidth,
          inner: window.innerWidth,
        }));
        expect(scroll, 'the page is wider than the window').toBeLessThanOrEqual(inner);
      };

      beforeAll(async () => {
        page = await browser.newPage({ viewport: { width, height: 900 } });
        page.setDefaultTimeout(20_000);
        // Signed in, looking at the bootstrap workspace (the sign-in form has its own tests).
        await page.addInitScript(
          ([token, ws]) => {
            sessionStorage.setItem('wfs-admin:token', token as string);
            sessionStorage.setItem('wfs-admin:workspace', ws as string);
          },
          [ADMIN_TOKEN, workspaceId],
        );
      });

      afterAll(async () => {
        await page?.close();
      });

      it('keeps the workspace picker and "Sign out" on screen and within reach', async () => {
        for (const path of ['/overview', '/executions', '/keys', `/executions/${nestedId}`]) {
          await go(path);
          const picker = page.getByLabel('Workspace', { exact: true });
          await page
            .locator(`select[aria-label="Workspace"] option[value="${workspaceId}"]`)
            .waitFor({ state: 'attached' });
          const signOut = page.getByRole('button', { name: 'Sign out' });
          for (const [what, control] of [
            ['the workspace picker', picker],
            ['Sign out', signOut],
          ] as const) {
            const b = await box(control);
            expect(b.left, `${what} on ${path}`).toBeGreaterThanOrEqual(0);
            expect(b.right, `${what} on ${path}`).toBeLessThanOrEqual(width);
            expect(b.top, `${what} on ${path}`).toBeGreaterThanOrEqual(0);
            expect(b.bottom, `${what} on ${path}`).toBeLessThanOrEqual(900);
            expect(await reachable(control), `${what} on ${path} can be clicked`).toBe(true);
          }
          await fitsWidth();
        }
        // Still usable: another workspace can be picked.
        expect(await page.getByLabel('Workspace', { exact: true }).inputValue()).toBe(workspaceId);
      }, 60_000);

      it('shows the whole error of a failed execution in the executions table', async () => {
        await go('/executions');
        const row = page.locator(`tr[data-execution="${failedId}"]`);
        await row.waitFor();
        const cell = row.locator('td').last();
        const error = (await svc.admin.executions.get.query({ id: failedId })).error as string;
        expect(error).toContain(LONG_ERROR);
        expect(await cell.textContent()).toBe(error);
        // Nothing of it is cut off: not inside the cell, and the cell lies within the table's
        // visible part and the window.
        const fit = await cell.evaluate((el) => {
          const range = document.createRange();
          range.selectNodeContents(el);
          const text = range.getBoundingClientRect();
          const card = (el.closest('.card') as HTMLElement).getBoundingClientRect();
          const own = el.getBoundingClientRect();
          return {
            overflowX: el.scrollWidth - el.clientWidth,
            overflowY: el.scrollHeight - el.clientHeight,
            text: { left: text.left, right: text.right, top: text.top, bottom: text.bottom },
            cell: { left: own.left, right: own.right, top: own.top, bottom: own.bottom },
            card: { left: card.left, right: card.right },
          };
        });
        expect(fit.overflowX, 'the error is wider than its cell').toBeLessThanOrEqual(0);
        expect(fit.overflowY, 'the error is taller than its cell').toBeLessThanOrEqual(0);
        expect(fit.text.left).toBeGreaterThanOrEqual(fit.cell.left);
        expect(fit.text.right).toBeLessThanOrEqual(fit.cell.right + 0.5);
        expect(fit.text.bottom).toBeLessThanOrEqual(fit.cell.bottom + 0.5);
        expect(fit.cell.left).toBeGreaterThanOrEqual(fit.card.left);
        expect(fit.cell.right).toBeLessThanOrEqual(fit.card.right + 0.5);
        expect(fit.card.right).toBeLessThanOrEqual(width);
        await fitsWidth();
        await shot('executions');
      }, 60_000);

      it('draws each iteration’s spans right under the span they ran in, one level deeper', async () => {
        await go(`/executions/${nestedId}`);
        await page.locator('.waterfall .wf-row.span[data-block="done"]').waitFor();
        const rows = await page.locator('.waterfall .wf-row.span').evaluateAll((trs) =>
          trs.map((tr) => {
            const label = tr.querySelector('.wf-label') as HTMLElement;
            return {
              block: tr.getAttribute('data-block') as string,
              iteration: /#(\d+)/.exec(label.textContent ?? '')?.[1] ?? null,
              indent: Number.parseFloat(getComputedStyle(label).paddingLeft),
            };
          }),
        );
        // `side` ran beside the loop: it comes before the loop or after all of it, never inside.
        const sideAt = rows.findIndex((r) => r.block === 'side');
        expect([0, 9]).toContain(sideAt);
        const rest = rows.filter((r) => r.block !== 'side');
        expect(rest.map((r) => `${r.block}${r.iteration === null ? '' : `#${r.iteration}`}`)).toEqual([
          'each',
          'first#0',
          'fan#0',
          'leaf#0',
          'leaf#1',
          'first#1',
          'fan#1',
          'leaf#0',
          'leaf#1',
          'done',
        ]);
        // Indented by depth: the loop's body one level in, the parallel's body two.
        const indentOf = (block: string) =>
          new Set(rows.filter((r) => r.block === block).map((r) => r.indent));
        const [top] = indentOf('each');
        const [one] = indentOf('first');
        const [two] = indentOf('leaf');
        expect([...indentOf('side'), ...indentOf('done')]).toEqual([top, top]);
        expect(indentOf('first')).toEqual(new Set([one]));
        expect(indentOf('fan')).toEqual(new Set([one]));
        expect(indentOf('leaf')).toEqual(new Set([two]));
        expect(one).toBeGreaterThan(top as number);
        expect(two).toBeGreaterThan(one as number);
        await fitsWidth();
        await shot('waterfall');
      }, 60_000);

      it('draws a few minutes of runs as bars wide enough to read', async () => {
        await go('/overview');
        const bars = page.locator('figure.chart svg rect.bar');
        await bars.first().waitFor();
        const widths = await bars.evaluateAll((rects) => rects.map((r) => r.getBoundingClientRect().width));
        expect(widths.length).toBeGreaterThan(0);
        for (const w of widths) expect(w, 'a bar’s width in px').toBeGreaterThanOrEqual(20);
        await fitsWidth();
        await shot('overview');
      }, 60_000);

      it('lists the bootstrap personal key in the keys page’s default view', async () => {
        await go('/keys');
        const row = page.locator('tr', { hasText: 'bootstrap' });
        await row.waitFor();
        expect(await row.textContent()).toContain('personal');
        expect(await row.textContent()).toContain('admin@localhost');
        expect(await page.getByText('No keys.').count()).toBe(0);
        await fitsWidth();
        await shot('keys');
      }, 60_000);

      it('signs out with the header’s button, clicked where it is drawn', async () => {
        await go('/overview');
        const signOut = page.getByRole('button', { name: 'Sign out' });
        await signOut.waitFor();
        const b = await box(signOut);
        await page.mouse.click(b.left + b.width / 2, b.top + b.height / 2);
        await page.getByLabel('Admin token').waitFor();
      }, 60_000);
    });
  }
});
