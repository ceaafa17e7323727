// A workflow's runs (GET /api/v1/workflows/{id}/runs), reruns (POST …/executions/{executionId}/rerun),
// the log of an execution by its id (GET /api/v1/logs/executions/{executionId}) and one audit entry
// (GET /api/v1/audit-logs/{id}): as real executions leave them, through the public API, with who may
// call them and every refusal.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addPerson,
  createTenant,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';
import { deployWorkflow, pollJob } from '../helpers/workflows.ts';

const times = (factor: number) => ({
  inputs: { n: { type: 'number', required: true } },
  blocks: [
    {
      id: 'f',
      type: 'function',
      code: `if (inputs.n < 0) throw new Error("negative"); return { v: inputs.n * ${factor} }`,
    },
    { id: 'r', type: 'response', data: { v: '<f.v>' } },
  ],
  edges: [{ from: 'f', to: 'r' }],
});
// Long enough to be seen processing; it is cancelled, never waited for.
const LONG = { blocks: [{ id: 'w', type: 'wait', ms: 120_000 }] };

let svc: TestService;
let a: Tenant;
let b: Tenant;
let wf = '';
let otherWf = '';
let long = '';
let foreignWf = '';
const run = { one: '', two: '', bad: '', long: '', foreign: '' };

const runs = (key: string, id: string, query: Record<string, string | number> = {}) =>
  svc.call('GET', `/api/v1/workflows/${id}/runs`, { key, query });
const rerun = (
  key: string,
  id: string,
  executionId: string,
  body: unknown = {},
  headers: Record<string, string> = {},
) => svc.call('POST', `/api/v1/workflows/${id}/executions/${executionId}/rerun`, { key, body, headers });

async function execute(key: string, id: string, inputs: Record<string, unknown>) {
  const res = await svc.call('POST', `/api/workflows/${id}/execute`, { key, body: { inputs } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.executionId as string;
}

beforeAll(async () => {
  svc = await startTestService({}, { runner: true });
  a = await createTenant(svc.admin, { plan: 'enterprise' });
  b = await createTenant(svc.admin);
  wf = await deployWorkflow(svc.admin, a.workspace.id, times(2), 'double');
  otherWf = await deployWorkflow(svc.admin, a.workspace.id, times(2), 'another');
  long = await deployWorkflow(svc.admin, a.workspace.id, LONG, 'long');
  foreignWf = await deployWorkflow(svc.admin, b.workspace.id, times(2), 'foreign');
  run.one = await execute(a.key, wf, { n: 1 });
  run.two = await execute(a.key, wf, { n: 2 });
  run.bad = await execute(a.key, wf, { n: -1 });
  run.foreign = await execute(b.key, foreignWf, { n: 5 });
  await execute(a.key, otherWf, { n: 9 });
}, 60_000);
afterAll(() => svc?.close());

describe('GET /api/v1/workflows/{id}/runs', () => {
  it('lists the runs of the workflow in every state, newest first, and pages them', async () => {
    const started = await svc.call('POST', `/api/workflows/${long}/execute`, {
      key: a.key,
      body: { async: true },
    });
    run.long = started.body.taskId;
    // Running, then listed as such: the log would not show it.
    for (let i = 0; i < 400; i++) {
      if ((await svc.call('GET', `/api/jobs/${run.long}`, { key: a.key })).body.status === 'processing')
        break;
      await new Promise((r) => setTimeout(r, 25));
    }
    const running = await runs(a.key, long);
    expect(running.status, JSON.stringify(running.body)).toBe(200);
    expect(running.body).toMatchObject({ success: true, nextCursor: null });
    expect(running.body.data).toEqual([
      expect.objectContaining({ id: run.long, status: 'processing', mode: 'async', endedAt: null }),
    ]);
    const cancel = await svc.call('POST', `/api/workflows/${long}/executions/${run.long}/cancel`, {
      key: a.key,
    });
    expect(cancel.status).toBe(200);
    const cancelled = await runs(a.key, long, { status: 'cancelled' });
    expect(cancelled.body.data.map((r: { id: string }) => r.id)).toEqual([run.long]);
    expect((await runs(a.key, long, { status: 'processing' })).body.data).toEqual([]);

    const all = await runs(a.key, wf);
    expect(all.body.data.map((r: { id: string }) => r.id)).toEqual([run.bad, run.two, run.one]);
    expect(all.body.data[0]).toMatchObject({
      workflowId: wf,
      version: 1,
      status: 'failed',
      mode: 'sync',
      trigger: 'api',
      error: expect.stringContaining('negative'),
    });
    expect(all.body.data[1]).toMatchObject({ status: 'completed', error: null });
    expect(all.body.data[1].endedAt).toEqual(expect.any(String));
    expect(Object.keys(all.body.data[1]).sort()).toEqual([
      'createdAt',
      'endedAt',
      'error',
      'id',
      'mode',
      'startedAt',
      'status',
      'trigger',
      'version',
      'workflowId',
    ]);
    const failed = await runs(a.key, wf, { status: 'failed' });
    expect(failed.body.data.map((r: { id: string }) => r.id)).toEqual([run.bad]);

    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 5; page++) {
      const res = await runs(a.key, wf, { limit: 1, ...(cursor ? { cursor } : {}) });
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((r: { id: string }) => r.id));
      cursor = res.body.nextCursor;
      if (!cursor) break;
    }
    expect(seen).toEqual([run.bad, run.two, run.one]);
  });

  it('refuses a bad cursor, status or limit with a 400', async () => {
    const cases: [Record<string, string | number>, string][] = [
      [{ cursor: 'nope' }, 'cursor'],
      // A run of another workflow is no cursor of this listing.
      [{ cursor: run.foreign }, 'cursor'],
      [{ status: 'running' }, 'status'],
      [{ limit: 0 }, 'limit'],
      [{ limit: 101 }, 'limit'],
      [{ limit: 'ten' }, 'limit'],
    ];
    const [another] = (await runs(a.key, otherWf)).body.data;
    cases.push([{ cursor: another.id }, 'cursor']);
    for (const [query, field] of cases) {
      const res = await runs(a.key, wf, query);
      expect(res.status, JSON.stringify(query)).toBe(400);
      expect(res.body.details[0].path).toEqual([field]);
    }
    const bad = await runs(a.key, 'not-a-uuid');
    expect(bad.status).toBe(400);
    expect(bad.body.details[0].path).toEqual(['workflowId']);
  });

  it("answers another organization's, an unknown or a refused workflow as not found, and lets a reader list", async () => {
    expect((await runs(b.key, wf)).status).toBe(404);
    expect((await runs(a.key, foreignWf)).status).toBe(404);
    expect((await runs(a.key, crypto.randomUUID())).status).toBe(404);
    expect((await svc.call('GET', `/api/v1/workflows/${wf}/runs`)).status).toBe(401);
    const reader = await addPerson(svc.admin, a, { permission: 'read' });
    const read = await runs(reader.key, wf);
    expect(read.status).toBe(200);
    expect(read.body.data).toHaveLength(3);
    // A member without any permission in the workspace learns nothing.
    const stranger = await addPerson(svc.admin, a);
    expect((await runs(stranger.key, wf)).status).toBe(404);
  });
});

describe('POST /api/v1/workflows/{id}/executions/{executionId}/rerun', () => {
  it('runs the same version with the same inputs, sync or async, or the deployed one with latest', async () => {
    const sync = await rerun(a.key, wf, run.two);
    expect(sync.status, JSON.stringify(sync.body)).toBe(200);
    expect(sync.body).toMatchObject({ success: true, output: { v: 4 } });
    expect(sync.body.executionId).not.toBe(run.two);
    expect(sync.body.limits).toBeDefined();

    // Version 2 triples: a rerun still runs version 1, unless it asks for the latest.
    await svc.admin.workflows.update.mutate({ id: wf, definition: times(3) });
    await svc.admin.workflows.deploy.mutate({ id: wf });
    const again = await rerun(a.key, wf, run.two, { async: true });
    expect(again.status, JSON.stringify(again.body)).toBe(202);
    expect(again.body).toMatchObject({ success: true, status: 'queued' });
    const job = await pollJob(svc.call, a.key, again.body.taskId);
    expect(job.body.output).toEqual({ v: 4 });
    const latest = await rerun(a.key, wf, run.two, { latest: true }, { 'X-Execution-Mode': 'async' });
    expect(latest.status).toBe(202);
    expect((await pollJob(svc.call, a.key, latest.body.taskId)).body.output).toEqual({ v: 6 });
    const listed = (await runs(a.key, wf, { limit: 3 })).body.data;
    expect(listed.map((r: { id: string; version: number }) => [r.id, r.version])).toEqual([
      [latest.body.taskId, 2],
      [again.body.taskId, 1],
      [sync.body.executionId, 1],
    ]);

    // A failed run reruns to the same failure; a cancelled one runs again.
    const failing = await rerun(a.key, wf, run.bad);
    expect(failing.status).toBe(200);
    expect(failing.body).toMatchObject({ success: false, error: expect.stringContaining('negative') });
  });

  it('refuses inputs that no longer fit the latest version, and an undeployed workflow', async () => {
    const strict = await deployWorkflow(svc.admin, a.workspace.id, times(2), 'strict');
    const first = await execute(a.key, strict, { n: 3 });
    await svc.admin.workflows.update.mutate({
      id: strict,
      definition: {
        ...times(2),
        inputs: { n: { type: 'number', required: true }, m: { type: 'string', required: true } },
      },
    });
    await svc.admin.workflows.deploy.mutate({ id: strict });
    const before = (await runs(a.key, strict)).body.data.length;
    const refused = await rerun(a.key, strict, first, { latest: true });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('Invalid workflow inputs');
    // The version it ran still takes them.
    expect((await rerun(a.key, strict, first)).status).toBe(200);
    await svc.admin.workflows.undeploy.mutate({ id: strict });
    const undeployed = await rerun(a.key, strict, first);
    expect(undeployed.status).toBe(400);
    expect(undeployed.body.error).toMatch(/not deployed/);
    expect((await runs(a.key, strict)).body.data.length).toBe(before + 1);
  });

  it('refuses bad bodies and ids, and answers foreign or mismatched executions as not found', async () => {
    const before = (await runs(a.key, wf)).body.data.length;
    for (const body of [{ latest: 'yes' }, { async: 1 }, { inputs: { n: 5 } }, [1]]) {
      const res = await rerun(a.key, wf, run.one, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(typeof res.body.error).toBe('string');
    }
    expect((await rerun(a.key, wf, 'x')).body.details[0].path).toEqual(['executionId']);
    expect((await rerun(a.key, 'x', run.one)).body.details[0].path).toEqual(['workflowId']);
    // Another workflow's execution, an unknown one, another organization's.
    expect((await rerun(a.key, otherWf, run.one)).status).toBe(404);
    expect((await rerun(a.key, wf, crypto.randomUUID())).status).toBe(404);
    expect((await rerun(a.key, foreignWf, run.foreign)).status).toBe(404);
    expect((await rerun(b.key, wf, run.one)).status).toBe(404);
    // A reader reaches the workflow but may not run it.
    const reader = await addPerson(svc.admin, a, { permission: 'read' });
    const denied = await rerun(reader.key, wf, run.one);
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatch(/write permission/);
    expect((await runs(a.key, wf)).body.data.length).toBe(before);
    expect((await runs(b.key, foreignWf)).body.data).toHaveLength(1);
  });

  it('replays an Idempotency-Key instead of running again, and a workspace key may rerun', async () => {
    const headers = { 'Idempotency-Key': `rerun-${Math.random()}` };
    const first = await rerun(a.key, wf, run.one, { async: true }, headers);
    expect(first.status).toBe(202);
    const second = await rerun(a.key, wf, run.one, { async: true }, headers);
    expect(second.status).toBe(202);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body.taskId).toBe(first.body.taskId);
    // The same key for another request: 422, nothing run.
    expect((await rerun(a.key, wf, run.two, { async: true }, headers)).status).toBe(422);
    await pollJob(svc.call, a.key, first.body.taskId);
    const { key } = await svc.admin.keys.create.mutate({
      type: 'workspace',
      workspaceId: a.workspace.id,
      name: 'ci',
    });
    const byKey = await rerun(key, wf, run.one);
    expect(byKey.status, JSON.stringify(byKey.body)).toBe(200);
  });

  it('draws from the sync bucket as execute does, and past it answers 429 without running', async () => {
    const c = await createTenant(svc.admin);
    await svc.admin.quotas.set.mutate({ orgId: c.org.id, sync: { requestsPerMinute: 1, maxBurst: 1 } });
    const own = await deployWorkflow(svc.admin, c.workspace.id, times(2), 'limited');
    const first = await execute(c.key, own, { n: 1 });
    const refused = await rerun(c.key, own, first);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await runs(c.key, own)).body.data).toHaveLength(1);
  });
});

describe('GET /api/v1/logs/executions/{executionId}', () => {
  it('answers as the log entry by its id does', async () => {
    const list = await svc.call('GET', '/api/v1/logs', {
      key: a.key,
      query: { workspaceId: a.workspace.id, executionId: run.two },
    });
    const logId = list.body.data[0].id as string;
    const byLog = await svc.call('GET', `/api/v1/logs/${logId}`, { key: a.key });
    const byExecution = await svc.call('GET', `/api/v1/logs/executions/${run.two}`, { key: a.key });
    expect(byExecution.status).toBe(200);
    expect(byExecution.body).toEqual(byLog.body);
    expect(byExecution.body.data).toMatchObject({ executionId: run.two, workflowId: wf, level: 'info' });
    const failed = await svc.call('GET', `/api/v1/logs/executions/${run.bad}`, { key: a.key });
    expect(failed.body.data).toMatchObject({ level: 'error' });
  });

  it('answers unfinished, unknown and foreign executions as not found, and a bad id with a 400', async () => {
    const started = await svc.call('POST', `/api/workflows/${long}/execute`, {
      key: a.key,
      body: { async: true },
    });
    const unfinished = await svc.call('GET', `/api/v1/logs/executions/${started.body.taskId}`, {
      key: a.key,
    });
    expect(unfinished.status).toBe(404);
    await svc.call('POST', `/api/workflows/${long}/executions/${started.body.taskId}/cancel`, { key: a.key });
    for (const [key, id] of [
      [a.key, crypto.randomUUID()],
      [a.key, run.foreign],
      [b.key, run.two],
    ] as const) {
      const res = await svc.call('GET', `/api/v1/logs/executions/${id}`, { key });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Log entry not found' });
    }
    const bad = await svc.call('GET', '/api/v1/logs/executions/nope', { key: a.key });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0].path).toEqual(['executionId']);
  });
});

describe('GET /api/v1/audit-logs/{id}', () => {
  const get = (key: string, id: string) => svc.call('GET', `/api/v1/audit-logs/${id}`, { key });

  it('answers one entry of the organization as the list shows it', async () => {
    const list = await svc.call('GET', '/api/v1/audit-logs', {
      key: a.key,
      query: { workspaceId: a.workspace.id, limit: 3 },
    });
    expect(list.status).toBe(200);
    for (const entry of list.body.data) {
      const one = await get(a.key, entry.id);
      expect(one.status).toBe(200);
      expect(one.body).toEqual({ data: entry });
    }
  });

  it('refuses other organizations, members, workspace keys and other plans, and bad ids', async () => {
    const [entry] = (
      await svc.call('GET', '/api/v1/audit-logs', { key: a.key, query: { workspaceId: a.workspace.id } })
    ).body.data;
    // Another organization's owner: not found, as an unknown id.
    expect((await get(b.key, entry.id)).status).toBe(404);
    expect((await get(a.key, crypto.randomUUID())).status).toBe(404);
    const member = await addPerson(svc.admin, a, { permission: 'admin' });
    const notAdmin = await get(member.key, entry.id);
    expect(notAdmin.status).toBe(403);
    expect(notAdmin.body.error).toMatch(/admin or owner/);
    const { key } = await svc.admin.keys.create.mutate({
      type: 'workspace',
      workspaceId: a.workspace.id,
      name: 'auditor',
    });
    expect((await get(key, entry.id)).body.error).toMatch(/personal API key/);
    // B's own entry, but B is not on Enterprise.
    const [own] = await svc.db.query<{ id: string }>(
      'select id from audit_logs where organization_id = $1 limit 1',
      [b.org.id],
    );
    const plan = await get(b.key, own?.id as string);
    expect(plan.status).toBe(403);
    expect(plan.body.error).toMatch(/Enterprise/);
    const bad = await get(a.key, 'nope');
    expect(bad.status).toBe(400);
    expect(bad.body.details[0].path).toEqual(['id']);
  });

  it("refuses an entry of a workspace that turned personal keys off, to its owner's personal key", async () => {
    const [entry] = await svc.db.query<{ id: string }>(
      'select id from audit_logs where workspace_id = $1 limit 1',
      [a.workspace.id],
    );
    await svc.admin.workspaces.update.mutate({ workspaceId: a.workspace.id, allowPersonalApiKeys: false });
    try {
      const res = await get(a.key, entry?.id as string);
      expect(res.status).toBe(403);
      expect(res.body.error).toMatch(/Personal API keys are disabled/);
    } finally {
      await svc.admin.workspaces.update.mutate({ workspaceId: a.workspace.id, allowPersonalApiKeys: true });
    }
  });
});
