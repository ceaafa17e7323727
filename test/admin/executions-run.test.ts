// Manual runs and the execution views of the admin plane: `executions.run` starts the deployed
// version with trigger `manual`, taking no rate-limit token and passing the spend limit (its cost
// is still recorded); `executions.get` shows one execution whole; `executions.list` pages a
// workspace's executions with filters. Every refusal changes nothing; the admin token is required.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_TOKEN,
  adminError,
  createTenant,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';
import { deployWorkflow, pollJob } from '../helpers/workflows.ts';

let svc: TestService;
let tenant: Tenant;
// The API's clock stands still, so the buckets it reads never refill during the test.
const now = new Date();

beforeAll(async () => {
  svc = await startTestService({}, { runner: true, clock: () => now });
  tenant = await createTenant(svc.admin);
});
afterAll(() => svc.close());

const GREET = {
  inputs: { who: { type: 'string', required: true } },
  blocks: [{ id: 'r', type: 'response', data: { hello: '<start.who>' } }],
};
const FAILING = { blocks: [{ id: 'f', type: 'function', code: 'throw new Error("on purpose")' }] };

const executeAsync = (t: Tenant, workflowId: string, inputs: Record<string, unknown>) =>
  svc.call('POST', `/api/workflows/${workflowId}/execute`, { key: t.key, body: { inputs, async: true } });

/** Polls the admin view of an execution until it has finished. */
async function finishedRun(id: string) {
  for (let i = 0; i < 800; i++) {
    const e = await svc.admin.executions.get.query({ id });
    if (e.status === 'completed' || e.status === 'failed') return e;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`execution ${id} did not finish`);
}

const executionCount = async (workflowId: string) =>
  (await svc.db.query('select id from executions where workflow_id = $1', [workflowId])).length;

describe('executions.run', () => {
  it('runs with trigger manual when the rate limit is exhausted, taking no token', async () => {
    const t = await createTenant(svc.admin);
    const wf = await deployWorkflow(svc.admin, t.workspace.id, GREET);
    await svc.admin.quotas.set.mutate({ orgId: t.org.id, async: { requestsPerMinute: 1, maxBurst: 1 } });
    expect((await executeAsync(t, wf, { who: 'api' })).status).toBe(202);
    expect((await executeAsync(t, wf, { who: 'api' })).status).toBe(429);
    const bucket = () =>
      svc.db.query('select tokens, updated_at from rate_limit_buckets where key = $1', [
        `user:${t.user.id}:async`,
      ]);
    const before = await bucket();
    expect(before).toHaveLength(1);

    const run = await svc.admin.executions.run.mutate({ workflowId: wf, inputs: { who: 'operator' } });
    expect(run).toEqual({ executionId: expect.any(String), status: 'queued', createdAt: expect.any(String) });
    const done = await finishedRun(run.executionId);
    expect(done).toMatchObject({
      id: run.executionId,
      workspaceId: t.workspace.id,
      workflowId: wf,
      version: 1,
      status: 'completed',
      mode: 'async',
      trigger: 'manual',
      inputs: { who: 'operator' },
      output: { hello: 'operator' },
      error: null,
      createdAt: run.createdAt,
    });
    expect(done.traceSpans).toHaveLength(1);
    expect(done.durationMs).toEqual(expect.any(Number));
    // The bucket was not touched, and the API is still refused.
    expect(await bucket()).toEqual(before);
    expect((await executeAsync(t, wf, { who: 'api' })).status).toBe(429);
    const audit = await svc.db.query<{ actor_name: string; metadata: Record<string, unknown> }>(
      `select actor_name, metadata from audit_logs where action = 'workflow.execute' and metadata ->> 'executionId' = $1`,
      [run.executionId],
    );
    expect(audit).toEqual([
      {
        actor_name: 'admin plane',
        metadata: { executionId: run.executionId, mode: 'async', trigger: 'manual' },
      },
    ]);
  });

  it('runs past the spend limit, and its cost is still recorded', async () => {
    const t = await createTenant(svc.admin);
    const wf = await deployWorkflow(svc.admin, t.workspace.id, GREET);
    await svc.admin.quotas.set.mutate({ orgId: t.org.id, usageLimit: 0 });
    expect((await executeAsync(t, wf, { who: 'api' })).status).toBe(402);
    const run = await svc.admin.executions.run.mutate({
      workflowId: wf,
      workspaceId: t.workspace.id,
      inputs: { who: 'op' },
    });
    expect(await finishedRun(run.executionId)).toMatchObject({ status: 'completed', trigger: 'manual' });
    const usage = await svc.call('GET', '/api/users/me/usage-limits', { key: t.key });
    expect(usage.body.usage.currentPeriodCost).toBe(0.005);
    // The console's quota page shows the same spend against the (overridden) limit.
    const quota = await svc.admin.quotas.usage.query({ organizationId: t.org.id });
    expect(quota).toMatchObject({
      plan: 'free',
      pooled: false,
      limits: { usageLimit: 0 },
      spend: { used: 0.005, limit: 0, isExceeded: true },
    });
    expect(quota.subjects).toMatchObject([
      { subject: `user:${t.user.id}`, spend: { used: 0.005, limit: 0, isExceeded: true } },
    ]);
  });

  it('refuses an unknown, undeployed or foreign workflow, and bad inputs, starting nothing', async () => {
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, GREET);
    const draft = (
      await svc.admin.workflows.create.mutate({
        workspaceId: tenant.workspace.id,
        name: 'd',
        definition: GREET,
      })
    ).id;
    const other = await createTenant(svc.admin);
    const run = (input: Record<string, unknown>) =>
      adminError(
        svc.admin.executions.run.mutate(input as Parameters<typeof svc.admin.executions.run.mutate>[0]),
      );
    expect(await run({ workflowId: crypto.randomUUID(), inputs: {} })).toMatchObject({
      code: 'NOT_FOUND',
      message: 'Workflow not found',
    });
    expect(await run({ workflowId: 'nope', inputs: {} })).toMatchObject({ code: 'BAD_REQUEST' });
    expect(await run({ workflowId: draft, inputs: { who: 'x' } })).toMatchObject({
      code: 'BAD_REQUEST',
      message: 'Workflow is not deployed: deploy it before executing it',
    });
    expect(
      await run({ workflowId: wf, workspaceId: other.workspace.id, inputs: { who: 'x' } }),
    ).toMatchObject({
      code: 'NOT_FOUND',
    });
    const bad = await run({ workflowId: wf, inputs: {} });
    expect(bad).toMatchObject({ code: 'BAD_REQUEST', message: 'Invalid workflow inputs' });
    expect(bad.details).toEqual([
      { code: 'invalid_type', path: ['inputs', 'who'], message: 'Required input "who" is missing' },
    ]);
    expect(await run({ workflowId: wf, inputs: ['who'] })).toMatchObject({ code: 'BAD_REQUEST' });
    expect(await executionCount(wf)).toBe(0);
    expect(await executionCount(draft)).toBe(0);
  });
});

describe('executions.get and executions.list', () => {
  it('shows a failed execution with its error and trace', async () => {
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, FAILING);
    const run = await svc.admin.executions.run.mutate({ workflowId: wf });
    const failed = await finishedRun(run.executionId);
    expect(failed).toMatchObject({ status: 'failed', output: null, trigger: 'manual' });
    expect(failed.error).toMatch(/on purpose/);
    expect(failed.traceSpans).toEqual([
      expect.objectContaining({ error: expect.stringMatching(/on purpose/) }),
    ]);
  });

  it('answers NOT_FOUND for an unknown execution and BAD_REQUEST for a malformed id', async () => {
    expect(await adminError(svc.admin.executions.get.query({ id: crypto.randomUUID() }))).toMatchObject({
      code: 'NOT_FOUND',
      message: 'Execution not found',
    });
    expect(await adminError(svc.admin.executions.get.query({ id: 'x' }))).toMatchObject({
      code: 'BAD_REQUEST',
    });
  });

  it('lists a workspace’s executions newest first, filtered and paged', async () => {
    const t = await createTenant(svc.admin);
    const [a, b] = [
      await deployWorkflow(svc.admin, t.workspace.id, GREET),
      await deployWorkflow(svc.admin, t.workspace.id, FAILING),
    ];
    const ids: string[] = [];
    for (const who of ['1', '2', '3'])
      ids.push((await svc.admin.executions.run.mutate({ workflowId: a, inputs: { who } })).executionId);
    const viaApi = (await executeAsync(t, a, { who: 'api' })).body.taskId as string;
    await pollJob(svc.call, t.key, viaApi);
    const failedId = (await svc.admin.executions.run.mutate({ workflowId: b })).executionId;
    for (const id of [...ids, failedId]) await finishedRun(id);

    const all = await svc.admin.executions.list.query({ workspaceId: t.workspace.id });
    expect(all.data.map((e) => e.id)).toEqual([failedId, viaApi, ...ids.toReversed()]);
    expect(all.nextCursor).toBeNull();
    expect(all.data[0]).toEqual({
      id: failedId,
      workflowId: b,
      version: 1,
      status: 'failed',
      mode: 'async',
      trigger: 'manual',
      error: expect.stringMatching(/on purpose/),
      createdAt: expect.any(String),
      startedAt: expect.any(String),
      endedAt: expect.any(String),
    });

    const list = (filter: Record<string, unknown>) =>
      svc.admin.executions.list.query({ workspaceId: t.workspace.id, ...filter });
    expect((await list({ workflowId: b })).data.map((e) => e.id)).toEqual([failedId]);
    expect((await list({ status: 'failed' })).data.map((e) => e.id)).toEqual([failedId]);
    expect((await list({ trigger: 'api' })).data.map((e) => e.id)).toEqual([viaApi]);
    expect((await list({ trigger: 'manual', workflowId: a })).data.map((e) => e.id)).toEqual(
      ids.toReversed(),
    );
    expect((await list({ status: 'queued' })).data).toEqual([]);

    // A creation-time range: since inclusive, until exclusive (the database keeps microseconds; an
    // ISO instant of milliseconds compares with them as these string comparisons do).
    const pivot = all.data[2]?.createdAt as string;
    const ranged = async (range: { since?: string; until?: string }) =>
      (await list({ ...range, limit: 100 })).data.map((e) => e.id);
    expect(await ranged({ since: pivot })).toEqual(
      all.data.filter((e) => e.createdAt >= pivot).map((e) => e.id),
    );
    expect(await ranged({ until: pivot })).toEqual(
      all.data.filter((e) => e.createdAt < pivot).map((e) => e.id),
    );
    expect((await ranged({ since: pivot })).length + (await ranged({ until: pivot })).length).toBe(5);
    const first = all.data.at(-1)?.createdAt as string;
    const later = new Date(Date.parse(pivot) + 1).toISOString();
    expect(await ranged({ since: first, until: later })).toEqual(
      all.data.filter((e) => e.createdAt >= first && e.createdAt < later).map((e) => e.id),
    );
    // Offsets other than Z name the same instant.
    const shifted = new Date(Date.parse(pivot) + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    expect(await ranged({ since: shifted })).toEqual(await ranged({ since: pivot }));
    expect(await ranged({ since: new Date(Date.now() + 3600_000).toISOString() })).toEqual([]);
    expect(await ranged({ status: 'failed', since: first } as { since: string })).toEqual([failedId]);
    for (const range of [
      { since: 'yesterday' },
      { until: '2026-01-01' },
      { since: '2026-01-01T00:00:00' },
      { since: pivot, until: pivot },
      { since: later, until: pivot },
    ]) {
      const err = await adminError(list(range));
      expect(err, JSON.stringify(range)).toMatchObject({ code: 'BAD_REQUEST' });
      expect(err.details?.[0]?.path, JSON.stringify(range)).toEqual([Object.keys(range).at(-1)]);
    }

    const pages: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await list({ limit: 2, ...(cursor ? { cursor } : {}) });
      expect(page.data.length).toBeLessThanOrEqual(2);
      pages.push(...page.data.map((e) => e.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(pages).toEqual(all.data.map((e) => e.id));

    // A cursor names an execution of this workspace, as served.
    for (const bad of [
      crypto.randomUUID(),
      (
        await svc.admin.executions.run.mutate({
          workflowId: await deployWorkflow(svc.admin, tenant.workspace.id, GREET),
          inputs: { who: 'x' },
        })
      ).executionId,
    ]) {
      const err = await adminError(list({ cursor: bad }));
      expect(err).toMatchObject({ code: 'BAD_REQUEST' });
      expect(err.details?.[0]).toMatchObject({
        path: ['cursor'],
        message: 'Not a cursor returned by this listing',
      });
    }
    for (const input of [{ limit: 0 }, { limit: 101 }, { status: 'done' }, { cursor: 'x' }])
      expect(await adminError(list(input)), JSON.stringify(input)).toMatchObject({ code: 'BAD_REQUEST' });
    expect(
      await adminError(
        svc.admin.executions.list.query({} as Parameters<typeof svc.admin.executions.list.query>[0]),
      ),
    ).toMatchObject({ code: 'BAD_REQUEST' });
  });
});

describe('auth', () => {
  it('requires the admin token for runs and views', async () => {
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, GREET);
    const res = await svc.adminApp.request('http://admin.test/trpc/executions.run', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer wrong-token' },
      body: JSON.stringify({ workflowId: wf, inputs: { who: 'x' } }),
    });
    expect(res.status).toBe(401);
    const bare = await svc.adminApp.request(
      `http://admin.test/trpc/executions.list?input=${encodeURIComponent(JSON.stringify({ workspaceId: tenant.workspace.id }))}`,
    );
    expect(bare.status).toBe(401);
    const ok = await svc.adminApp.request(
      `http://admin.test/trpc/executions.list?input=${encodeURIComponent(JSON.stringify({ workspaceId: tenant.workspace.id }))}`,
      { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } },
    );
    expect(ok.status).toBe(200);
    expect(await executionCount(wf)).toBe(0);
  });
});
