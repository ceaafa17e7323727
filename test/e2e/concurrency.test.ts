// Per-workflow concurrency limits, through the public API: at most `limit` executions of a group
// in flight (seen by the target server and in the spans), per-key groups independent, FIFO order
// within a group, nothing failing for the wait, a bad `concurrency` refused. With the in-process
// runner on both databases; with two runner processes (and one killed holding a slot) on Postgres.
import type { ChildProcess } from 'node:child_process';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { QUEUES, WAKE_CHANNEL } from '../../jobs/queues.ts';
import { exited, killAll, startServiceRunner } from '../helpers/runner-processes.ts';
import {
  adminError,
  createTenant,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';
import { deployWorkflow, pollJob } from '../helpers/workflows.ts';

const serverDatabase = Boolean(process.env.TEST_DATABASE_URL);

/**
 * The workflows' http target: counts requests in flight (all, and per key), records the order ids
 * arrive in, and holds the requests of the keys (or ids) it is told to until released.
 */
function startTarget() {
  const inFlight = new Map<string, number>();
  const state = {
    total: 0,
    maxTotal: 0,
    maxPerKey: new Map<string, number>(),
    order: [] as string[],
    hits: new Map<string, number>(),
    holdKeys: new Set<string>(),
    /**
     * Holds the first request until a second is in flight, then lets both go: two at once happen
     * however slowly a loaded machine starts the second (a limit of one would hang the test instead).
     */
    pairUp: false,
    paired: [] as (() => void)[],
    /** Ids whose first request is held (and never answered: its runner is killed). */
    holdFirstOf: new Set<string>(),
    held: [] as { key: string; res: ServerResponse }[],
  };
  const server = createServer((req, res) => {
    const q = new URL(req.url ?? '/', 'http://x').searchParams;
    const id = q.get('id') ?? '';
    const key = q.get('k') ?? '';
    state.order.push(id);
    state.hits.set(id, (state.hits.get(id) ?? 0) + 1);
    state.total++;
    state.maxTotal = Math.max(state.maxTotal, state.total);
    inFlight.set(key, (inFlight.get(key) ?? 0) + 1);
    state.maxPerKey.set(key, Math.max(state.maxPerKey.get(key) ?? 0, inFlight.get(key) as number));
    const end = () => {
      state.total--;
      inFlight.set(key, (inFlight.get(key) as number) - 1);
      res.end('{}');
    };
    if (state.holdFirstOf.has(id) && state.hits.get(id) === 1) {
      req.on('close', () => {
        state.total--;
        inFlight.set(key, (inFlight.get(key) as number) - 1);
      });
      return;
    }
    if (state.pairUp) {
      if (state.total < 2) {
        state.paired.push(end);
        return;
      }
      state.pairUp = false;
      for (const e of state.paired.splice(0)) setTimeout(e, 20);
    }
    if (state.holdKeys.has(key)) state.held.push({ key, res: { end } as unknown as ServerResponse });
    // A short service time, so the executions overlap when nothing stops them.
    else setTimeout(end, 20);
  });
  return {
    state,
    server,
    release(key: string) {
      state.holdKeys.delete(key);
      for (const h of state.held.filter((x) => x.key === key)) h.res.end();
      state.held = state.held.filter((x) => x.key !== key);
    },
  };
}

type Target = ReturnType<typeof startTarget>;

async function listen(t: Target) {
  await new Promise<void>((r) => t.server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(t.server.address() as AddressInfo).port}/`;
}

const limitedWorkflow = (url: string, concurrency: unknown) => ({
  inputs: { id: { type: 'string', required: true }, k: { type: 'string' } },
  blocks: [
    { id: 'call', type: 'http', url: `${url}?id=<start.id>&k=<start.k>` },
    { id: 'r', type: 'response', data: '<start.id>' },
  ],
  edges: [{ from: 'call', to: 'r' }],
  concurrency,
});

async function executeAsync(svc: TestService, tenant: Tenant, wf: string, inputs: Record<string, unknown>) {
  const res = await svc.call('POST', `/api/workflows/${wf}/execute`, {
    key: tenant.key,
    body: { inputs, async: true },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.taskId as string;
}

async function waitUntil(what: string, ok: () => boolean | Promise<boolean>) {
  for (let i = 0; i < 2000; i++) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`never: ${what}`);
}

/** The spans of an execution's log entry: when its http block ran. */
async function callSpan(svc: TestService, tenant: Tenant, executionId: string) {
  const res = await svc.call('GET', '/api/v1/logs', {
    key: tenant.key,
    query: { workspaceId: tenant.workspace.id, executionId, details: 'full' },
  });
  expect(res.status).toBe(200);
  const spans = res.body.data[0].executionData.traceSpans as { startedAt: string; endedAt: string }[];
  return {
    start: Math.min(...spans.map((s) => Date.parse(s.startedAt))),
    end: Math.max(...spans.map((s) => Date.parse(s.endedAt))),
  };
}

/** The most executions whose spans overlap at any instant. */
function maxOverlap(spans: { start: number; end: number }[]) {
  const events = spans.flatMap((s) => [
    [s.start, 1],
    [s.end, -1],
  ]);
  // An end at the instant of a start counts first: the slot was handed over.
  events.sort((a, b) => (a[0] as number) - (b[0] as number) || (a[1] as number) - (b[1] as number));
  let now = 0;
  let max = 0;
  for (const [, d] of events) {
    now += d as number;
    max = Math.max(max, now);
  }
  return max;
}

/** Runs 20 executions of a limit-2 workflow and checks that no more than 2 were ever in flight. */
async function twentyUnderLimitTwo(svc: TestService, tenant: Tenant, target: Target, url: string) {
  const wf = await deployWorkflow(svc.admin, tenant.workspace.id, limitedWorkflow(url, { limit: 2 }));
  const ids = Array.from({ length: 20 }, (_, i) => `n${i}`);
  target.state.pairUp = true;
  const jobs = await Promise.all(ids.map((id) => executeAsync(svc, tenant, wf, { id })));
  for (const job of jobs) {
    const res = await pollJob(svc.call, tenant.key, job, 2000);
    expect(res.body.status, JSON.stringify(res.body)).toBe('completed');
  }
  expect(target.state.maxTotal).toBeLessThanOrEqual(2);
  // Two at once did happen: the limit lets two in, not one.
  expect(target.state.maxTotal).toBe(2);
  const spans = await Promise.all(jobs.map((j) => callSpan(svc, tenant, j)));
  expect(maxOverlap(spans)).toBeLessThanOrEqual(2);
  for (const id of ids) expect(target.state.hits.get(id), id).toBe(1);
  return wf;
}

describe('concurrency limits (in-process runner)', () => {
  let svc: TestService;
  let tenant: Tenant;
  let target: Target;
  let url: string;

  beforeAll(async () => {
    // A short sync wait: a sync call kept waiting by the limit answers as one that outlives its wait.
    svc = await startTestService(
      { HTTP_ALLOW_LIST: '127.0.0.1', RUNNER_CONCURRENCY: '8', SYNC_WAIT_TIMEOUT_MS: '300' },
      { runner: true },
    );
    tenant = await createTenant(svc.admin);
  });
  afterEach(() => {
    target.server.closeAllConnections();
    target.server.close();
  });
  afterAll(async () => {
    await svc?.close();
  });
  const fresh = async () => {
    target = startTarget();
    url = await listen(target);
  };

  it('refuses a bad concurrency with the path of each problem, and stores nothing', async () => {
    await fresh();
    const refusal = async (concurrency: unknown) => {
      const failure = await adminError(
        svc.admin.workflows.create.mutate({
          workspaceId: tenant.workspace.id,
          name: 'bad concurrency',
          definition: limitedWorkflow(url, concurrency),
        }),
      );
      expect(failure).toMatchObject({ httpStatus: 400, message: 'Invalid workflow definition' });
      return (failure.details ?? []).map((d: { path: (string | number)[] }) => d.path.join('.'));
    };
    expect(await refusal({ limit: 0 })).toEqual(['definition.concurrency.limit']);
    expect(await refusal({ limit: 1001 })).toEqual(['definition.concurrency.limit']);
    expect(await refusal({ limit: 1.5 })).toEqual(['definition.concurrency.limit']);
    expect(await refusal({})).toEqual(['definition.concurrency.limit']);
    expect(await refusal({ limit: 2, extra: 1 })).toEqual(['definition.concurrency']);
    expect(await refusal({ limit: 2, key: 'constant' })).toEqual(['definition.concurrency.key']);
    expect(await refusal({ limit: 2, key: '<call.body>' })).toEqual(['definition.concurrency.key']);
    expect(await refusal({ limit: 2, key: '{{TOKEN}}<start.k>' })).toEqual(['definition.concurrency.key']);
    expect(await refusal({ limit: 2, key: 7 })).toEqual(['definition.concurrency.key']);
    expect(await refusal(5)).toEqual(['definition.concurrency']);
    const listed = await svc.admin.workflows.list.query({ workspaceId: tenant.workspace.id });
    expect(JSON.stringify(listed)).not.toContain('bad concurrency');
  });

  it('runs 20 executions of a limit-2 workflow never more than 2 at once, all completing', async () => {
    await fresh();
    const wf = await twentyUnderLimitTwo(svc, tenant, target, url);
    const rows = await svc.db.query<{ waiting: boolean }>(
      'select concurrency_waiting as waiting from executions where workflow_id = $1',
      [wf],
    );
    expect(rows.every((r) => !r.waiting)).toBe(true);
  });

  it('limits each key on its own: a held key does not stop another', async () => {
    await fresh();
    target.state.holdKeys.add('a');
    const wf = await deployWorkflow(
      svc.admin,
      tenant.workspace.id,
      limitedWorkflow(url, { limit: 1, key: '<start.k>' }),
    );
    const a = [await executeAsync(svc, tenant, wf, { id: 'a1', k: 'a' })];
    await waitUntil('a1 held', () => target.state.held.length === 1);
    a.push(await executeAsync(svc, tenant, wf, { id: 'a2', k: 'a' }));
    const b = await Promise.all(
      ['b1', 'b2', 'b3'].map((id) => executeAsync(svc, tenant, wf, { id, k: 'b' })),
    );
    for (const job of b) expect((await pollJob(svc.call, tenant.key, job)).body.status).toBe('completed');
    // Key b ran while a1 held key a's one slot; a2 still waits, queued, not failed.
    const a2 = await svc.call('GET', `/api/jobs/${a[1]}`, { key: tenant.key });
    expect(a2.body.status).toBe('queued');
    expect(target.state.hits.get('a2')).toBeUndefined();
    target.release('a');
    for (const job of a) expect((await pollJob(svc.call, tenant.key, job)).body.status).toBe('completed');
    expect(target.state.maxPerKey.get('a')).toBe(1);
    expect(target.state.maxPerKey.get('b')).toBe(1);
  });

  it('starts the executions of a group in the order they were queued', async () => {
    await fresh();
    target.state.holdKeys.add('x');
    const wf = await deployWorkflow(
      svc.admin,
      tenant.workspace.id,
      limitedWorkflow(url, { limit: 1, key: '<start.k>' }),
    );
    const ids = Array.from({ length: 8 }, (_, i) => `f${i}`);
    const jobs: string[] = [];
    // Queued one after another while the first holds the slot.
    for (const id of ids) jobs.push(await executeAsync(svc, tenant, wf, { id, k: 'x' }));
    await waitUntil('f0 held', () => target.state.held.length === 1);
    target.release('x');
    for (const job of jobs) expect((await pollJob(svc.call, tenant.key, job)).body.status).toBe('completed');
    expect(target.state.order.filter((id) => id.startsWith('f'))).toEqual(ids);
  });

  it('a cancel hands the slot on: of the running execution, and of a waiting one its place in the queue', async () => {
    await fresh();
    target.state.holdKeys.add('c');
    const wf = await deployWorkflow(
      svc.admin,
      tenant.workspace.id,
      limitedWorkflow(url, { limit: 1, key: '<start.k>' }),
    );
    const c1 = await executeAsync(svc, tenant, wf, { id: 'c1', k: 'c' });
    await waitUntil('c1 held', () => target.state.held.length === 1);
    const c2 = await executeAsync(svc, tenant, wf, { id: 'c2', k: 'c' });
    const c3 = await executeAsync(svc, tenant, wf, { id: 'c3', k: 'c' });
    await waitUntil('c2 and c3 waiting', async () => {
      const rows = await svc.db.query<{ n: number }>(
        'select count(*)::int as n from executions where id = any($1::uuid[]) and concurrency_waiting',
        [[c2, c3]],
      );
      return rows[0]?.n === 2;
    });
    const cancel = (id: string) =>
      svc.call('POST', `/api/workflows/${wf}/executions/${id}/cancel`, { key: tenant.key });
    // The waiting c2 is cancelled first: c3 stays behind the running c1, then the running c1 is.
    expect((await cancel(c2)).status).toBe(200);
    expect((await svc.call('GET', `/api/jobs/${c3}`, { key: tenant.key })).body.status).toBe('queued');
    target.state.holdKeys.delete('c');
    expect((await cancel(c1)).status).toBe(200);
    expect((await pollJob(svc.call, tenant.key, c3)).body.status).toBe('completed');
    expect((await pollJob(svc.call, tenant.key, c1)).body.status).toBe('cancelled');
    expect((await pollJob(svc.call, tenant.key, c2)).body.status).toBe('cancelled');
    expect(target.state.hits.get('c2')).toBeUndefined();
    expect(target.state.hits.get('c3')).toBe(1);
  });

  it('counts executions without a key value in one shared group; a sync call kept waiting gets its job', async () => {
    await fresh();
    target.state.holdKeys.add('');
    const wf = await deployWorkflow(
      svc.admin,
      tenant.workspace.id,
      limitedWorkflow(url, { limit: 1, key: '<start.k>' }),
    );
    const first = await executeAsync(svc, tenant, wf, { id: 'u1' });
    await waitUntil('u1 held', () => target.state.held.length === 1);
    // Sync: the wait ends while it is still queued behind u1, so it answers 202 with its job.
    const sync = await svc.call('POST', `/api/workflows/${wf}/execute`, {
      key: tenant.key,
      body: { inputs: { id: 'u2' } },
    });
    expect(sync.status, JSON.stringify(sync.body)).toBe(202);
    expect(sync.body).toMatchObject({ status: 'queued' });
    const second = sync.body.taskId as string;
    const other = await executeAsync(svc, tenant, wf, { id: 'v1', k: 'v' });
    expect((await pollJob(svc.call, tenant.key, other)).body.status).toBe('completed');
    expect((await svc.call('GET', `/api/jobs/${second}`, { key: tenant.key })).body.status).toBe('queued');
    target.release('');
    for (const job of [first, second])
      expect((await pollJob(svc.call, tenant.key, job)).body.status).toBe('completed');
  });

  it('hands the slot of an execution abandoned by its dead-lettered job to the next one', async () => {
    await fresh();
    target.state.holdFirstOf.add('d1');
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, limitedWorkflow(url, { limit: 1 }));
    const d1 = await executeAsync(svc, tenant, wf, { id: 'd1' });
    await waitUntil('d1 called', () => target.state.hits.get('d1') === 1);
    const d2 = await executeAsync(svc, tenant, wf, { id: 'd2' });
    await waitUntil('d2 waiting', async () => {
      const [row] = await svc.db.query<{ w: boolean }>(
        'select concurrency_waiting as w from executions where id = $1',
        [d2],
      );
      return row?.w === true;
    });
    // What a crash loop leaves behind: d1 processing, its job in the dead-letter queue.
    await svc.queue.send(QUEUES.workflowExecuteDead, { executionId: d1, limited: true });
    await svc.db.notify(WAKE_CHANNEL, QUEUES.workflowExecuteDead);
    expect((await pollJob(svc.call, tenant.key, d1)).body).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/stopped responding/),
    });
    expect((await pollJob(svc.call, tenant.key, d2)).body.status).toBe('completed');
  });
});

describe.runIf(serverDatabase)('concurrency limits across runner processes', () => {
  let svc: TestService;
  let tenant: Tenant;
  const runners: ChildProcess[] = [];
  const startRunner = () => startServiceRunner(svc, runners, { RUNNER_CONCURRENCY: '8' });

  beforeAll(async () => {
    svc = await startTestService({ QUEUE_HEARTBEAT_SECONDS: '10', HTTP_ALLOW_LIST: '127.0.0.1' });
    tenant = await createTenant(svc.admin);
  });
  afterEach(async () => {
    await killAll(runners);
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('two runners together never run more than 2 of a limit-2 workflow, all 20 completing', async () => {
    await Promise.all([startRunner(), startRunner()]);
    const target = startTarget();
    const url = await listen(target);
    try {
      await twentyUnderLimitTwo(svc, tenant, target, url);
    } finally {
      target.server.closeAllConnections();
      target.server.close();
    }
  }, 60_000);

  it('a runner killed while holding the slot does not block the group: the retried attempt keeps it, then the rest run', async () => {
    const doomed = await startRunner();
    const target = startTarget();
    const url = await listen(target);
    try {
      target.state.holdFirstOf.add('c1');
      const wf = await deployWorkflow(svc.admin, tenant.workspace.id, limitedWorkflow(url, { limit: 1 }));
      const first = await executeAsync(svc, tenant, wf, { id: 'c1' });
      await waitUntil('c1 called', () => target.state.hits.get('c1') === 1);
      // One after the other: requests sent together have no order of their own.
      const rest = [
        await executeAsync(svc, tenant, wf, { id: 'c2' }),
        await executeAsync(svc, tenant, wf, { id: 'c3' }),
      ];
      doomed.kill('SIGKILL');
      await exited(doomed);
      await startRunner();
      // The heartbeat (10 s) lapses, pg-boss retries c1's job, which keeps the slot; then c2, c3.
      for (const job of [first, ...rest]) {
        const res = await pollJob(svc.call, tenant.key, job, 3000);
        expect(res.body.status, JSON.stringify(res.body)).toBe('completed');
      }
      expect(target.state.order).toEqual(['c1', 'c1', 'c2', 'c3']);
    } finally {
      target.server.closeAllConnections();
      target.server.close();
    }
  }, 90_000);
});
