// GET /api/v1/logs and GET /api/v1/logs/{id}: the execution log as real executions leave it; who
// may read it; every filter, exactly; paging across pages; basic and full entries; bad queries.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogEntry, LogEntryDetail } from '../../db/execution-logs.ts';
import { COST_PER_EXECUTION } from '../../db/usage.ts';
import {
  addPerson,
  createTenant,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';
import { deployWorkflow, pollJob } from '../helpers/workflows.ts';

type Query = Record<string, string | number | boolean | undefined>;

const ECHO = {
  inputs: { n: { type: 'number', required: true } },
  blocks: [
    { id: 'f', type: 'function', code: 'return { doubled: inputs.n * 2 }' },
    { id: 'r', type: 'response', data: { doubled: '<f.doubled>' } },
  ],
  edges: [{ from: 'f', to: 'r' }],
};
const BOOM = { blocks: [{ id: 'boom', type: 'function', code: 'throw new Error("kaput")' }] };
const SLOW_MS = 300;
const SLOW = {
  blocks: [
    { id: 'w', type: 'wait', ms: SLOW_MS },
    { id: 'r', type: 'response', data: 'slept' },
  ],
  edges: [{ from: 'w', to: 'r' }],
};

let svc: TestService;
// Tenant `a` holds the log under test (enterprise: the /api/v1 rate bucket stays out of the way);
// tenant `b` is another organization, with one entry of its own.
let a: Tenant;
let b: Tenant;
const wf = { echo: '', boom: '', slow: '', other: '' };
/** Executions of `a`, by name, in the order they were made (the burst made together last). */
const run = { echo1: '', boom1: '', slow: '', echo2: '', boom2: '', echo3: '' };
let burst: string[] = [];
let otherRun = '';

const logs = (key: string | undefined, query: Query) =>
  svc.call('GET', '/api/v1/logs', { ...(key !== undefined ? { key } : {}), query });
const logDetail = (key: string | undefined, id: string) =>
  svc.call('GET', `/api/v1/logs/${id}`, key !== undefined ? { key } : {});

async function execute(key: string, workflowId: string, inputs: Record<string, unknown> = {}) {
  const res = await svc.call('POST', `/api/workflows/${workflowId}/execute`, { key, body: { inputs } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.executionId as string;
}

beforeAll(async () => {
  svc = await startTestService({}, { runner: true });
  a = await createTenant(svc.admin, { plan: 'enterprise' });
  b = await createTenant(svc.admin);
  wf.echo = await deployWorkflow(svc.admin, a.workspace.id, ECHO, 'echo');
  wf.boom = await deployWorkflow(svc.admin, a.workspace.id, BOOM, 'boom');
  wf.slow = await deployWorkflow(svc.admin, a.workspace.id, SLOW, 'slow');
  await svc.admin.workflows.update.mutate({ id: wf.echo, description: 'doubles n' });
  wf.other = await deployWorkflow(svc.admin, b.workspace.id, ECHO, 'other echo');
  // One after another, so each is created after the one before.
  run.echo1 = await execute(a.key, wf.echo, { n: 1 });
  run.boom1 = await execute(a.key, wf.boom);
  run.slow = await execute(a.key, wf.slow);
  run.echo2 = await execute(a.key, wf.echo, { n: 2 });
  run.boom2 = await execute(a.key, wf.boom);
  run.echo3 = await execute(a.key, wf.echo, { n: 3 });
  // Sent together, these are inserted in one batch and may share created_at to the microsecond:
  // paging must neither skip nor repeat any of them.
  const acks = await Promise.all(
    [10, 11, 12, 13].map((n) =>
      svc.call('POST', `/api/workflows/${wf.echo}/execute`, {
        key: a.key,
        body: { inputs: { n }, async: true },
      }),
    ),
  );
  burst = acks.map((r) => r.body.taskId as string);
  for (const id of burst) expect((await pollJob(svc.call, a.key, id)).body.status).toBe('completed');
  otherRun = await execute(b.key, wf.other, { n: 5 });
}, 60_000);
afterAll(() => svc.close());

/** One page that must succeed. */
async function page<E = LogEntry>(key: string, query: Query): Promise<{ data: E[]; nextCursor?: string }> {
  const res = await logs(key, query);
  expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
  return res.body;
}

/** Every entry of a listing, following nextCursor to the end; also checks the pages' sizes. */
async function everything(key: string, query: Query, limit: number): Promise<LogEntry[]> {
  const all: LogEntry[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 100; i++) {
    const p = await page(key, { ...query, limit, ...(cursor ? { cursor } : {}) });
    all.push(...p.data);
    if (!p.nextCursor) {
      expect(p).not.toHaveProperty('nextCursor');
      return all;
    }
    // A page followed by another is full.
    expect(p.data).toHaveLength(limit);
    cursor = p.nextCursor;
  }
  throw new Error('paging did not end');
}

/** The whole log of `a`, newest first, in one page. */
const whole = async () => (await page(a.key, { workspaceId: a.workspace.id })).data;

const executionIds = (entries: { executionId: string }[]) => entries.map((e) => e.executionId);
const sorted = (ids: string[]) => [...ids].sort();

/** A 400 {error, details} whose details name the given parameter. */
function expectInvalid(res: { status: number; body: { error?: unknown; details?: unknown } }, param: string) {
  expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(400);
  expect(typeof res.body.error).toBe('string');
  expect(res.body.details).toEqual(
    expect.arrayContaining([expect.objectContaining({ path: expect.arrayContaining([param]) })]),
  );
  for (const d of res.body.details as { path: unknown[] }[]) expect(d.path[0]).toBe(param);
}

function expectError(res: { status: number; body: unknown }, status: number) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toEqual({ error: expect.any(String) });
}

const dayOf = (iso: string, deltaDays = 0) =>
  new Date(Date.parse(`${iso.slice(0, 10)}T00:00:00.000Z`) + deltaDays * 86_400_000)
    .toISOString()
    .slice(0, 10);

describe('list: entries and order', () => {
  it('answers {data} with one basic entry per finished execution, newest first, and no nextCursor', async () => {
    const res = await logs(a.key, { workspaceId: a.workspace.id });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['data']);
    const data = res.body.data as LogEntry[];
    // The sequential runs oldest last; the burst, made after them, above them in some order.
    expect(executionIds(data.slice(4))).toEqual(
      [run.echo1, run.boom1, run.slow, run.echo2, run.boom2, run.echo3].reverse(),
    );
    expect(sorted(executionIds(data.slice(0, 4)))).toEqual(sorted(burst));
    for (const [i, e] of data.entries()) {
      if (i > 0) expect(e.createdAt <= (data[i - 1] as LogEntry).createdAt).toBe(true);
    }
    expect(new Set(data.map((e) => e.id)).size).toBe(10);
  });

  it('shapes a basic entry as the Log entry fields plus cost {total}', async () => {
    const data = await whole();
    const echo1 = data.find((e) => e.executionId === run.echo1) as LogEntry;
    expect(Object.keys(echo1).sort()).toEqual(
      [
        'id',
        'workflowId',
        'executionId',
        'level',
        'trigger',
        'totalDurationMs',
        'startedAt',
        'endedAt',
        'createdAt',
        'cost',
      ].sort(),
    );
    expect(echo1).toMatchObject({
      workflowId: wf.echo,
      executionId: run.echo1,
      level: 'info',
      trigger: 'api',
    });
    expect(echo1.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(echo1.id).not.toBe(echo1.executionId);
    for (const e of data) {
      // No agent block ran: each run cost the flat charge per execution, failed ones too.
      expect(e.cost).toEqual({ total: COST_PER_EXECUTION });
      expect(Number.isInteger(e.totalDurationMs)).toBe(true);
      expect(e.totalDurationMs).toBeGreaterThanOrEqual(0);
      // Timestamps are ISO strings in UTC; a run starts after it is created and ends after it starts.
      for (const t of [e.createdAt, e.startedAt, e.endedAt]) expect(new Date(t).toISOString()).toBe(t);
      expect(e.createdAt <= e.startedAt && e.startedAt <= e.endedAt).toBe(true);
      expect(
        Math.abs(Date.parse(e.endedAt) - Date.parse(e.startedAt) - e.totalDurationMs),
      ).toBeLessThanOrEqual(1);
    }
    const slow = data.find((e) => e.executionId === run.slow) as LogEntry;
    expect(slow.totalDurationMs).toBeGreaterThanOrEqual(SLOW_MS);
    expect(data.find((e) => e.executionId === run.boom1)?.level).toBe('error');
  });

  it('holds only its own workspace: the other tenant’s entry is not in it', async () => {
    expect(executionIds(await whole())).not.toContain(otherRun);
    expect(executionIds((await page(b.key, { workspaceId: b.workspace.id })).data)).toEqual([otherRun]);
  });
});

describe('list: paging', () => {
  it('pages a filtered list two at a time: each entry once, newest first, no cursor on the last page', async () => {
    const info = (await whole()).filter((e) => e.level === 'info');
    expect(info).toHaveLength(8);
    const paged = await everything(a.key, { workspaceId: a.workspace.id, level: 'info' }, 2);
    // 8 entries in pages of 2: the fourth page is full and still the last.
    expect(executionIds(paged)).toEqual(executionIds(info));
  });

  it('pages one at a time through entries created in the same batch, and three at a time, alike', async () => {
    const all = executionIds(await whole());
    expect(executionIds(await everything(a.key, { workspaceId: a.workspace.id }, 1))).toEqual(all);
    expect(executionIds(await everything(a.key, { workspaceId: a.workspace.id }, 3))).toEqual(all);
  });

  it('gives a nextCursor exactly when another page exists', async () => {
    const q = { workspaceId: a.workspace.id };
    expect(await page(a.key, { ...q, limit: 9 })).toHaveProperty('nextCursor', expect.any(String));
    expect(await page(a.key, { ...q, limit: 10 })).not.toHaveProperty('nextCursor');
    expect(await page(a.key, { ...q, limit: 1000 })).not.toHaveProperty('nextCursor');
  });

  it('keeps the filter across pages when it is sent again with the cursor', async () => {
    const q = { workspaceId: a.workspace.id, workflowIds: wf.boom };
    const first = await page(a.key, { ...q, limit: 1 });
    expect(executionIds(first.data)).toEqual([run.boom2]);
    const second = await page(a.key, { ...q, limit: 1, cursor: first.nextCursor });
    expect(executionIds(second.data)).toEqual([run.boom1]);
    expect(second).not.toHaveProperty('nextCursor');
  });
});

describe('list: filters', () => {
  const q = () => ({ workspaceId: a.workspace.id });

  it('workflowIds: one or several workflows, or none that ran', async () => {
    const all = await whole();
    const of = (...ids: string[]) => executionIds(all.filter((e) => ids.includes(e.workflowId)));
    expect(executionIds((await page(a.key, { ...q(), workflowIds: wf.echo })).data)).toEqual(of(wf.echo));
    expect(of(wf.echo)).toHaveLength(7);
    const two = await page(a.key, { ...q(), workflowIds: `${wf.boom},${wf.slow}` });
    expect(executionIds(two.data)).toEqual([run.boom2, run.slow, run.boom1]);
    expect((await page(a.key, { ...q(), workflowIds: randomUUID() })).data).toEqual([]);
    // Another tenant's workflow selects nothing here.
    expect((await page(a.key, { ...q(), workflowIds: wf.other })).data).toEqual([]);
  });

  it('level: error is the failed runs, info the rest', async () => {
    const errors = await page(a.key, { ...q(), level: 'error' });
    expect(executionIds(errors.data)).toEqual([run.boom2, run.boom1]);
    expect(errors.data.every((e) => e.level === 'error')).toBe(true);
    const info = await page(a.key, { ...q(), level: 'info' });
    expect(sorted(executionIds(info.data))).toEqual(
      sorted([run.echo1, run.slow, run.echo2, run.echo3, ...burst]),
    );
  });

  it('triggers: a list of trigger names', async () => {
    const all = executionIds(await whole());
    expect(executionIds((await page(a.key, { ...q(), triggers: 'api' })).data)).toEqual(all);
    expect(executionIds((await page(a.key, { ...q(), triggers: 'chat,api' })).data)).toEqual(all);
    expect((await page(a.key, { ...q(), triggers: 'schedule,webhook' })).data).toEqual([]);
  });

  it('startDate and endDate: on startedAt, both inclusive', async () => {
    const all = await whole();
    const byStart = [...all].sort((x, y) => (x.startedAt < y.startedAt ? -1 : 1));
    const from = (byStart[2] as LogEntry).startedAt;
    const to = (byStart[6] as LogEntry).startedAt;
    const within = (lo: string, hi: string) =>
      executionIds(all.filter((e) => e.startedAt >= lo && e.startedAt <= hi));
    const res = await page(a.key, { ...q(), startDate: from, endDate: to });
    expect(executionIds(res.data)).toEqual(within(from, to));
    expect(res.data.length).toBeGreaterThanOrEqual(5);
    // One instant as both ends: the entries that started in that millisecond.
    const one = await page(a.key, { ...q(), startDate: from, endDate: from });
    expect(executionIds(one.data)).toEqual(within(from, from));
    expect(executionIds(one.data)).toContain((byStart[2] as LogEntry).executionId);
    expect(executionIds((await page(a.key, { ...q(), startDate: from })).data)).toEqual(within(from, '9999'));
    expect(executionIds((await page(a.key, { ...q(), endDate: to })).data)).toEqual(within('0000', to));
  });

  it('startDate and endDate as bare dates: the end date means its whole day', async () => {
    const all = await whole();
    const first = (all.at(-1) as LogEntry).startedAt;
    const last = (all[0] as LogEntry).startedAt;
    const allIds = executionIds(all);
    expect(
      executionIds((await page(a.key, { ...q(), startDate: dayOf(first), endDate: dayOf(last) })).data),
    ).toEqual(allIds);
    expect((await page(a.key, { ...q(), endDate: dayOf(first, -1) })).data).toEqual([]);
    expect((await page(a.key, { ...q(), startDate: dayOf(last, 1) })).data).toEqual([]);
  });

  it('executionId: that execution’s entry only', async () => {
    const res = await page(a.key, { ...q(), executionId: run.boom1 });
    expect(res.data).toHaveLength(1);
    expect(res.data[0]).toMatchObject({ executionId: run.boom1, workflowId: wf.boom, level: 'error' });
    expect((await page(a.key, { ...q(), executionId: otherRun })).data).toEqual([]);
    expect((await page(a.key, { ...q(), executionId: randomUUID() })).data).toEqual([]);
  });

  it('minDurationMs and maxDurationMs: inclusive bounds on totalDurationMs', async () => {
    const all = await whole();
    const slow = all.find((e) => e.executionId === run.slow) as LogEntry;
    const d = slow.totalDurationMs;
    const where = (f: (ms: number) => boolean) => executionIds(all.filter((e) => f(e.totalDurationMs)));
    const atLeast = await page(a.key, { ...q(), minDurationMs: d });
    expect(executionIds(atLeast.data)).toEqual(where((ms) => ms >= d));
    expect(executionIds(atLeast.data)).toContain(run.slow);
    expect(atLeast.data.length).toBeLessThan(all.length);
    const below = await page(a.key, { ...q(), maxDurationMs: d - 1 });
    expect(executionIds(below.data)).toEqual(where((ms) => ms < d));
    expect(executionIds(below.data)).not.toContain(run.slow);
    const exactly = await page(a.key, { ...q(), minDurationMs: d, maxDurationMs: d });
    expect(executionIds(exactly.data)).toEqual(where((ms) => ms === d));
    expect((await page(a.key, { ...q(), minDurationMs: 0 })).data).toHaveLength(all.length);
  });

  it('combines filters: all must hold', async () => {
    const res = await page(a.key, {
      ...q(),
      workflowIds: `${wf.echo},${wf.boom}`,
      level: 'error',
      triggers: 'api',
      executionId: run.boom2,
    });
    expect(executionIds(res.data)).toEqual([run.boom2]);
    const none = await page(a.key, { ...q(), workflowIds: wf.echo, level: 'error' });
    expect(none.data).toEqual([]);
  });
});

describe('details=full and the detail endpoint', () => {
  it('list with details=full adds workflow, executionData and the full cost', async () => {
    const full = await page<LogEntryDetail>(a.key, { workspaceId: a.workspace.id, details: 'full' });
    const basic = await whole();
    expect(executionIds(full.data)).toEqual(executionIds(basic));
    const echo1 = full.data.find((e) => e.executionId === run.echo1) as LogEntryDetail;
    const basicEcho1 = basic.find((e) => e.executionId === run.echo1) as LogEntry;
    const { workflow, executionData, cost, ...rest } = echo1;
    const { cost: basicCost, ...basicRest } = basicEcho1;
    expect(rest).toEqual(basicRest);
    expect(workflow).toEqual({ id: wf.echo, name: 'echo', description: 'doubles n' });
    expect(executionData).toMatchObject({ finalOutput: { doubled: 2 }, inputs: { n: 1 } });
    expect(executionData).not.toHaveProperty('error');
    expect(executionData.traceSpans.map((s) => (s as { blockId: string }).blockId)).toEqual(['f', 'r']);
    expect(basicCost).toEqual({ total: COST_PER_EXECUTION });
    expect(cost).toEqual({
      total: COST_PER_EXECUTION,
      base: COST_PER_EXECUTION,
      tokens: { prompt: 0, completion: 0, total: 0 },
      models: {},
    });
    expect(await page(a.key, { workspaceId: a.workspace.id, details: 'basic' })).toEqual({ data: basic });
  });

  it('GET /logs/{id} answers {data} with the full entry of a completed run', async () => {
    const full = await page<LogEntryDetail>(a.key, { workspaceId: a.workspace.id, details: 'full' });
    const listed = full.data.find((e) => e.executionId === run.echo2) as LogEntryDetail;
    const res = await logDetail(a.key, listed.id);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['data']);
    expect(res.body.data).toEqual(listed);
    expect(res.body.data.executionData.finalOutput).toEqual({ doubled: 4 });
    expect(res.body.data.executionData.inputs).toEqual({ n: 2 });
  });

  it('GET /logs/{id} of a failed run carries its error, no finalOutput, level error', async () => {
    const basic = await whole();
    const boom = basic.find((e) => e.executionId === run.boom1) as LogEntry;
    const res = await logDetail(a.key, boom.id);
    expect(res.status).toBe(200);
    const d = res.body.data as LogEntryDetail;
    expect(d).toMatchObject({ id: boom.id, executionId: run.boom1, workflowId: wf.boom, level: 'error' });
    expect(d.workflow).toEqual({ id: wf.boom, name: 'boom', description: '' });
    expect(d.executionData.error).toMatch(/Block "boom" failed: .*kaput/);
    expect(d.executionData).not.toHaveProperty('finalOutput');
    expect(d.executionData.inputs).toEqual({});
    expect(d.cost).toMatchObject({ total: COST_PER_EXECUTION, base: COST_PER_EXECUTION, models: {} });
    expect(d.executionData.traceSpans).toEqual([
      expect.objectContaining({ blockId: 'boom', status: 'error', error: expect.stringMatching(/kaput/) }),
    ]);
  });

  it('GET /logs/{id}: 404 for another tenant’s entry and an unknown id, 400 for a non-uuid', async () => {
    const theirs = (await page(b.key, { workspaceId: b.workspace.id })).data[0] as LogEntry;
    expect((await logDetail(b.key, theirs.id)).status).toBe(200);
    expectError(await logDetail(a.key, theirs.id), 404);
    expectError(await logDetail(a.key, randomUUID()), 404);
    // An execution id is not a log id.
    expectError(await logDetail(a.key, run.echo1), 404);
    const bad = await logDetail(a.key, 'not-a-uuid');
    expectInvalid(bad, 'id');
  });

  it('GET /logs/{id}: 401 without a key or with a wrong one', async () => {
    const entry = (await whole())[0] as LogEntry;
    expectError(await logDetail(undefined, entry.id), 401);
    expectError(await logDetail(`sk-service-${'A'.repeat(32)}`, entry.id), 401);
  });
});

describe('access', () => {
  it('401 without a key or with a wrong one, before the query is read', async () => {
    expectError(await logs(undefined, { workspaceId: a.workspace.id }), 401);
    expectError(await logs('not-a-key', { workspaceId: a.workspace.id }), 401);
    expectError(await logs(`sk-service-${'A'.repeat(32)}`, { workspaceId: 'nope', limit: 0 }), 401);
  });

  it('another tenant’s workspace: 403; a workspace that does not exist: 404', async () => {
    expectError(await logs(a.key, { workspaceId: b.workspace.id }), 403);
    expectError(await logs(b.key, { workspaceId: a.workspace.id }), 403);
    expectError(await logs(a.key, { workspaceId: randomUUID() }), 404);
  });

  it('a member with read permission reads the log and its entries; one without gets 403 and 404', async () => {
    const reader = await addPerson(svc.admin, a, { permission: 'read' });
    const stranger = await addPerson(svc.admin, a);
    const all = await whole();
    expect(executionIds((await page(reader.key, { workspaceId: a.workspace.id })).data)).toEqual(
      executionIds(all),
    );
    const entry = all[0] as LogEntry;
    expect((await logDetail(reader.key, entry.id)).status).toBe(200);
    expectError(await logs(stranger.key, { workspaceId: a.workspace.id }), 403);
    expectError(await logDetail(stranger.key, entry.id), 404);
  });

  it('a workspace key reads its own workspace only', async () => {
    const { key } = await svc.admin.keys.create.mutate({
      type: 'workspace',
      workspaceId: a.workspace.id,
      name: 'logs',
    });
    const all = await whole();
    expect(executionIds((await page(key, { workspaceId: a.workspace.id })).data)).toEqual(executionIds(all));
    expect((await logDetail(key, (all[0] as LogEntry).id)).status).toBe(200);
    expectError(await logs(key, { workspaceId: b.workspace.id }), 403);
    const theirs = (await page(b.key, { workspaceId: b.workspace.id })).data[0] as LogEntry;
    expectError(await logDetail(key, theirs.id), 404);
  });

  it('an execution still running has no entry yet; once finished it has one', async () => {
    const ws = await svc.admin.workspaces.create.mutate({
      orgId: a.org.id,
      ownerId: a.user.id,
      name: 'Running',
      skipDefaultWorkflow: true,
    });
    const id = await deployWorkflow(svc.admin, ws.id, {
      blocks: [{ id: 'w', type: 'wait', ms: 1500 }],
    });
    const ack = await svc.call('POST', `/api/workflows/${id}/execute`, {
      key: a.key,
      body: { async: true },
    });
    expect(ack.status).toBe(202);
    expect(await page(a.key, { workspaceId: ws.id })).toEqual({ data: [] });
    expect(await page(a.key, { workspaceId: ws.id, executionId: ack.body.taskId })).toEqual({ data: [] });
    expect((await pollJob(svc.call, a.key, ack.body.taskId)).body.status).toBe('completed');
    expect(executionIds((await page(a.key, { workspaceId: ws.id })).data)).toEqual([ack.body.taskId]);
  });
});

describe('invalid queries: 400 {error, details} naming the parameter', () => {
  const q = () => ({ workspaceId: a.workspace.id });

  it('workspaceId: missing or not a uuid', async () => {
    expectInvalid(await logs(a.key, {}), 'workspaceId');
    expectInvalid(await logs(a.key, { workspaceId: 'main' }), 'workspaceId');
  });

  it('limit: 0, 1001, abc, 1.5, empty; 1 and 1000 pass', async () => {
    for (const limit of ['0', '1001', 'abc', '1.5', '', '-1', '1e2'])
      expectInvalid(await logs(a.key, { ...q(), limit }), 'limit');
    expect((await page(a.key, { ...q(), limit: 1 })).data).toHaveLength(1);
    expect((await page(a.key, { ...q(), limit: 1000 })).data).toHaveLength(10);
  });

  it('cursor: garbage, tampered, or not of this shape', async () => {
    const first = await page(a.key, { ...q(), limit: 1 });
    const valid = first.nextCursor as string;
    const decoded = JSON.parse(Buffer.from(valid, 'base64url').toString('utf8'));
    expect(Object.keys(decoded)).toEqual(['t', 'id']);
    const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    for (const cursor of [
      'garbage',
      `${valid}x`,
      enc({ ...decoded, id: 'not-a-uuid' }),
      enc({ ...decoded, id: `${decoded.id}0` }),
      enc({ ...decoded, t: 'yesterday' }),
      enc({ ...decoded, t: decoded.t.replace(/\d{3}Z$/, 'Z') }),
      enc({ ...decoded, t: `0000${decoded.t.slice(4)}` }),
      enc({ ...decoded, t: decoded.t.replace(/T\d\d/, 'T25') }),
      enc({ ...decoded, extra: 1 }),
      enc({ id: decoded.id, t: decoded.t }),
      enc([decoded.t, decoded.id]),
      enc(null),
    ]) {
      expectInvalid(await logs(a.key, { ...q(), cursor }), 'cursor');
    }
    // A cursor rebuilt exactly is the cursor.
    expect((await page(a.key, { ...q(), limit: 1, cursor: enc(decoded) })).data).toEqual(
      (await page(a.key, { ...q(), limit: 1, cursor: valid })).data,
    );
  });

  it('filters of the wrong shape', async () => {
    expectInvalid(await logs(a.key, { ...q(), workflowIds: 'nope' }), 'workflowIds');
    expectInvalid(await logs(a.key, { ...q(), workflowIds: `${wf.echo},` }), 'workflowIds');
    expectInvalid(await logs(a.key, { ...q(), workflowIds: '' }), 'workflowIds');
    expectInvalid(await logs(a.key, { ...q(), level: 'warn' }), 'level');
    expectInvalid(await logs(a.key, { ...q(), triggers: '' }), 'triggers');
    expectInvalid(await logs(a.key, { ...q(), triggers: 'api,DROP TABLE' }), 'triggers');
    expectInvalid(await logs(a.key, { ...q(), executionId: 'x' }), 'executionId');
    expectInvalid(await logs(a.key, { ...q(), details: 'all' }), 'details');
  });

  it('dates: not a date, an impossible day, or an end before the start', async () => {
    expectInvalid(await logs(a.key, { ...q(), startDate: 'yesterday' }), 'startDate');
    expectInvalid(await logs(a.key, { ...q(), endDate: '2024-02-30' }), 'endDate');
    expectInvalid(
      await logs(a.key, { ...q(), startDate: '2024-05-02', endDate: '2024-05-01T23:59:59Z' }),
      'endDate',
    );
    // The same day as both ends is a whole day, not an empty range.
    expect((await page(a.key, { ...q(), startDate: '2024-05-01', endDate: '2024-05-01' })).data).toEqual([]);
  });

  it('durations: negative, fractional, beyond an integer, or min above max', async () => {
    expectInvalid(await logs(a.key, { ...q(), minDurationMs: -1 }), 'minDurationMs');
    expectInvalid(await logs(a.key, { ...q(), maxDurationMs: '1.5' }), 'maxDurationMs');
    expectInvalid(await logs(a.key, { ...q(), maxDurationMs: 2_147_483_648 }), 'maxDurationMs');
    expectInvalid(await logs(a.key, { ...q(), minDurationMs: 10, maxDurationMs: 9 }), 'maxDurationMs');
    expect((await page(a.key, { ...q(), maxDurationMs: 2_147_483_647 })).data).toHaveLength(10);
  });

  it('a parameter given twice', async () => {
    const res = await svc.app.request(
      `http://api.test/api/v1/logs?workspaceId=${a.workspace.id}&level=info&level=error`,
      { headers: { 'X-API-Key': a.key } },
    );
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ details: [expect.objectContaining({ path: ['level'] })] });
  });
});
