// Approval blocks through the public API, on either database: reaching one pauses the execution
// (`paused`, `metadata.pause`, no job held), POST /api/resume/… answers it exactly once (two racing
// answers: one wins, the other 409), the branch taken follows the answer, the injected clock fires
// the timeout branch, a cancel ends a paused execution, the audit log and the trace record it.
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resumeDueExecutions } from '../../jobs/resume-parked.ts';
import { ENDS, type ExecutionNotices, watchExecutions } from '../helpers/execution-notices.ts';
import { killAll, startServiceRunner } from '../helpers/runner-processes.ts';
import {
  addPerson,
  adminError,
  createTenant,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';
import { startTargetServer, type TargetServer } from '../helpers/target-server.ts';
import { deployWorkflow } from '../helpers/workflows.ts';

const HOUR = 3_600_000;
let now = Date.parse('2026-01-01T00:00:00.000Z');
const clock = () => new Date(now);

let svc: TestService;
let tenant: Tenant;
let other: Tenant;
let notices: ExecutionNotices;
let target: TargetServer;
let base: string;
let hits: TargetServer['hits'];
/** The completion callbacks the target received. */
let callbacks: TargetServer['posted'];

beforeAll(async () => {
  target = await startTargetServer();
  ({ base, hits, posted: callbacks } = target);
  svc = await startTestService({ HTTP_ALLOW_LIST: '127.0.0.1' }, { runner: true, clock });
  notices = await watchExecutions(svc.db);
  tenant = await createTenant(svc.admin);
  other = await createTenant(svc.admin);
});
afterAll(async () => {
  await notices?.close();
  await svc?.close();
  await target?.close();
});

const start = async (wf: string, inputs: Record<string, unknown> = {}) => {
  const res = await svc.call('POST', `/api/workflows/${wf}/execute`, {
    key: tenant.key,
    body: { inputs, async: true },
  });
  expect(res.status).toBe(202);
  return res.body.taskId as string;
};
const job = (id: string, key = tenant.key) => svc.call('GET', `/api/jobs/${id}`, { key });
/** Waits for the runner's notice that it parked the execution for a person; answers its Job record. */
const paused = async (id: string) => {
  await notices.next(id, ['parked']);
  const { body } = await job(id);
  expect(body.status, JSON.stringify(body)).toBe('paused');
  return body;
};
/** Waits for the runner's notice that the execution ended; answers the GET of its Job record. */
const finished = async (id: string) => {
  await notices.next(id, ENDS);
  return job(id);
};
const resume = (pause: { resumeUrl: string }, body: unknown, key = tenant.key) =>
  svc.call('POST', pause.resumeUrl, { key, body });

const approvalFlow = (tag: string, timeoutMs?: number) => ({
  blocks: [
    { id: 'before', type: 'http', url: `${base}/before?${tag}` },
    {
      id: 'ask',
      type: 'approval',
      message: 'Refund <start.amount> EUR?',
      fields: { comment: { type: 'string', required: true }, score: { type: 'number', default: 3 } },
      ...(timeoutMs ? { timeoutMs } : {}),
    },
    { id: 'yes', type: 'http', url: `${base}/yes?${tag}` },
    { id: 'no', type: 'response', data: { rejected: true, by: '<ask.by>' } },
    { id: 'late', type: 'response', data: { timedOut: '<ask.timedOut>' } },
    {
      id: 'done',
      type: 'response',
      data: { approved: '<ask.approved>', data: '<ask.data>', by: '<ask.by>' },
    },
  ],
  edges: [
    { from: 'before', to: 'ask' },
    { from: 'ask', to: 'yes', branch: 'approved' },
    { from: 'ask', to: 'no', branch: 'rejected' },
    { from: 'ask', to: 'late', branch: 'timeout' },
    { from: 'yes', to: 'done' },
  ],
  inputs: { amount: { type: 'number', required: true } },
});

describe('approval blocks', () => {
  it('pauses (no job held), lists it, and resumes down the approved branch once', async () => {
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, approvalFlow('t=1', HOUR));
    const id = await start(wf, { amount: 120 });
    const record = await paused(id);
    const pause = record.metadata.pause;
    expect(pause).toMatchObject({
      blockId: 'ask',
      message: 'Refund 120 EUR?',
      fields: { comment: { type: 'string', required: true } },
      resumeUrl: `/api/resume/${wf}/${id}/${pause.contextId}`,
      expiresAt: new Date(now + HOUR).toISOString(),
    });
    expect(record.success).toBe(true);
    const open = await svc.db.query<{ n: number }>(
      `select count(*)::int as n from pgboss.job where data->>'executionId' = $1 and state < 'completed'`,
      [id],
    );
    expect(open[0]?.n).toBe(0);
    const list = await svc.call('GET', `/api/workflows/${wf}/paused`, { key: tenant.key });
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([
      { executionId: id, workflowId: wf, createdAt: expect.any(String), pause },
    ]);
    const runs = await svc.call('GET', `/api/v1/workflows/${wf}/runs`, {
      key: tenant.key,
      query: { status: 'paused' },
    });
    expect(runs.body.data.map((r: { id: string }) => r.id)).toEqual([id]);
    // Bad answers change nothing.
    const missing = await resume(pause, { approved: true, data: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.details[0].path).toEqual(['data', 'comment']);
    expect((await resume(pause, { approved: true, data: { comment: 'x', score: 'high' } })).status).toBe(400);
    expect((await resume(pause, { approved: true, data: { comment: 'x', extra: 1 } })).status).toBe(400);
    expect((await resume(pause, { approved: 'yes' })).status).toBe(400);
    expect((await resume(pause, { approved: true, data: { comment: 'x' } }, other.key)).status).toBe(404);
    const wrongContext = pause.resumeUrl.replace(pause.contextId, crypto.randomUUID());
    expect(
      (
        await svc.call('POST', wrongContext, {
          key: tenant.key,
          body: { approved: true, data: { comment: 'x' } },
        })
      ).status,
    ).toBe(409);
    expect((await job(id)).body.status).toBe('paused');
    // Two racing answers: one wins, the other is a 409.
    const [a, b] = await Promise.all([
      resume(pause, { approved: true, data: { comment: 'fine' } }),
      resume(pause, { approved: false, data: { comment: 'no' } }),
    ]);
    expect([a.status, b.status].sort()).toEqual([202, 409]);
    const winner = a.status === 202 ? a : b;
    // No concurrency limit: it goes on at once.
    expect(winner.body.status).toBe('processing');
    const done = await finished(id);
    if (winner.body.approved) {
      expect(done.body).toMatchObject({
        status: 'completed',
        output: { approved: true, data: { comment: 'fine', score: 3 } },
      });
      expect(hits.get('/yes?t=1')).toBe(1);
    } else {
      expect(done.body).toMatchObject({ status: 'completed', output: { rejected: true } });
      expect(hits.get('/yes?t=1')).toBeUndefined();
    }
    expect(hits.get('/before?t=1')).toBe(1);
    expect(done.body.metadata.pause).toBeUndefined();
    // Answered: a later answer is refused, and the timeout no longer fires.
    expect((await resume(pause, { approved: true, data: { comment: 'again' } })).status).toBe(409);
    now += 2 * HOUR;
    expect(await resumeDueExecutions(svc.db, svc.queue, clock())).toBe(0);
    // The trace shows the pause as the approval's span; the audit log says who answered.
    const detail = await svc.admin.executions.get.query({ id });
    const span = detail.traceSpans.find((s: { blockId: string }) => s.blockId === 'ask');
    expect(span).toMatchObject({ type: 'approval', status: 'success', startedAt: pause.pausedAt });
    const audit = await svc.db.query<{ action: string; metadata: { executionId: string } }>(
      `select action, metadata from audit_logs where metadata->>'executionId' = $1 and action in ('workflow.approve', 'workflow.reject')`,
      [id],
    );
    expect(audit.map((r) => r.action)).toEqual([
      winner.body.approved ? 'workflow.approve' : 'workflow.reject',
    ]);
  });

  it('a rejection takes the rejected branch and records who rejected', async () => {
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, approvalFlow('t=2'));
    const id = await start(wf, { amount: 5 });
    const { pause } = (await paused(id)).metadata;
    expect(pause.expiresAt).toBeNull();
    // A key that may only read the workspace may not answer.
    const reader = await addPerson(svc.admin, tenant, { permission: 'read' });
    expect((await resume(pause, { approved: false }, reader.key)).status).toBe(403);
    const res = await resume(pause, { approved: false });
    expect(res.status).toBe(202);
    expect(res.body.by).toBe(`user:${tenant.user.id}`);
    const done = await finished(id);
    expect(done.body).toMatchObject({
      status: 'completed',
      output: { rejected: true, by: `user:${tenant.user.id}` },
    });
    expect(hits.get('/yes?t=2')).toBeUndefined();
  });

  it('the timeout fires by the injected clock and takes the timeout branch; an answer after it is 409', async () => {
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, approvalFlow('t=3', HOUR));
    const id = await start(wf, { amount: 1 });
    const { pause } = (await paused(id)).metadata;
    expect(await resumeDueExecutions(svc.db, svc.queue, new Date(now + HOUR - 60_000))).toBe(0);
    now += HOUR;
    const done = await finished(id);
    expect(done.body).toMatchObject({ status: 'completed', output: { timedOut: true } });
    expect((await resume(pause, { approved: true, data: { comment: 'late' } })).status).toBe(409);
    expect(hits.get('/yes?t=3')).toBeUndefined();
  });

  it('a cancel ends a paused execution; it never resumes', async () => {
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, approvalFlow('t=4', HOUR));
    const id = await start(wf, { amount: 1 });
    const { pause } = (await paused(id)).metadata;
    const res = await svc.call('POST', `/api/workflows/${wf}/executions/${id}/cancel`, { key: tenant.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ reason: 'recorded', pausedCancelled: true });
    expect((await resume(pause, { approved: true, data: { comment: 'x' } })).status).toBe(409);
    now += 2 * HOUR;
    expect(await resumeDueExecutions(svc.db, svc.queue, clock())).toBe(0);
    expect((await job(id)).body.status).toBe('cancelled');
    const list = await svc.call('GET', `/api/workflows/${wf}/paused`, { key: tenant.key });
    expect(list.body.data).toEqual([]);
  });

  it('a sync caller gets the paused execution as a 202 with its job', async () => {
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, approvalFlow('t=5'));
    const res = await svc.call('POST', `/api/workflows/${wf}/execute`, {
      key: tenant.key,
      body: { inputs: { amount: 2 } },
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'paused', metadata: { pause: { blockId: 'ask' } } });
    expect((await resume(res.body.metadata.pause, { approved: true, data: { comment: 'ok' } })).status).toBe(
      202,
    );
    expect((await finished(res.body.taskId)).body.status).toBe('completed');
  });

  it('a completion callback gets a paused event with the resume details, then the end', async () => {
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, approvalFlow('t=11'));
    const res = await svc.call('POST', `/api/workflows/${wf}/execute`, {
      key: tenant.key,
      body: { inputs: { amount: 11 }, async: true, callbackUrl: `${base}/cb?t=11` },
    });
    const id = res.body.taskId as string;
    const event = await target.received(
      () => callbacks.find((c) => c.path === '/cb?t=11'),
      'the paused event',
    );
    expect(event.body).toMatchObject({ event: 'paused', taskId: id, status: 'paused' });
    const pause = event.body.metadata.pause;
    expect(pause).toMatchObject({ blockId: 'ask', resumeUrl: expect.stringContaining(id) });
    expect(pause.approvalUrl).toMatch(/^\/approve\//);
    expect((await resume(pause, { approved: true, data: { comment: 'via callback' } })).status).toBe(202);
    await finished(id);
    const end = await target.received(() => {
      const all = callbacks.filter((c) => c.path === '/cb?t=11');
      return all.length === 2 ? all[1] : undefined;
    }, 'the end callback');
    expect(end.body).toMatchObject({ taskId: id, status: 'completed' });
    expect(end.body.event).toBeUndefined();
  });

  it('refuses bad approval definitions at deploy, and an approval inside a loop at run time', async () => {
    const failure = await adminError(
      deployWorkflow(svc.admin, tenant.workspace.id, {
        blocks: [
          { id: 'a', type: 'approval', message: 'x' },
          { id: 'b', type: 'response', data: 1 },
        ],
        edges: [{ from: 'a', to: 'b', branch: 'maybe' }],
      }),
    );
    expect(failure.details?.[0]?.message).toMatch(/not a branch of approval/);
    await expect(
      deployWorkflow(svc.admin, tenant.workspace.id, {
        blocks: [{ id: 'a', type: 'approval', message: 'x', fields: { f: { type: 'date' } } }],
      }),
    ).rejects.toThrow();
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [
        { id: 'each', type: 'loop', forEach: [1], blocks: [{ id: 'inner', type: 'approval', message: 'x' }] },
      ],
    });
    const id = await start(wf);
    const done = await finished(id);
    expect(done.body.status).toBe('failed');
    expect(done.body.error).toMatch(/cannot run inside a loop/);
  });

  it('an answered execution of a full concurrency group waits queued for its slot', async () => {
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [
        { id: 'before', type: 'http', url: `${base}/<start.path>` },
        { id: 'ask', type: 'approval', message: 'Go on?' },
        { id: 'after', type: 'http', url: `${base}/after?<start.path>` },
      ],
      edges: [
        { from: 'before', to: 'ask' },
        { from: 'ask', to: 'after', branch: 'approved' },
      ],
      inputs: { path: { type: 'string', required: true } },
      concurrency: { limit: 1 },
    });
    const first = await start(wf, { path: 'answer-first' });
    const { pause } = (await paused(first)).metadata;
    // The pause let go of the only slot: the second takes it and holds it.
    const second = await start(wf, { path: 'hold-second' });
    await target.received(() => target.held[0], 'the second to hold its slot');
    const answer = await resume(pause, { approved: true });
    expect(answer.status).toBe(202);
    expect(answer.body.status).toBe('queued');
    // The first finds its group full: its job is done, it waits queued.
    await notices.next(first, ['waiting']);
    const open = await svc.db.query<{ n: number }>(
      `select count(*)::int as n from pgboss.job where data->>'executionId' = $1 and state < 'completed'`,
      [first],
    );
    expect(open[0]?.n).toBe(0);
    expect((await job(first)).body.status).toBe('queued');
    expect(hits.get('/after?answer-first')).toBeUndefined();
    // The second reaches its own approval: its pause frees the slot, and the first takes it.
    for (const release of target.held.splice(0)) release();
    const secondPause = (await paused(second)).metadata.pause;
    expect((await finished(first)).body.status).toBe('completed');
    expect(hits.get('/after?answer-first')).toBe(1);
    expect((await resume(secondPause, { approved: false })).status).toBe(202);
    expect((await finished(second)).body.status).toBe('completed');
    expect(hits.get('/answer-first')).toBe(1);
  });

  it("the paused list and the resume are the workspace's only", async () => {
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, approvalFlow('t=6'));
    expect((await svc.call('GET', `/api/workflows/${wf}/paused`, { key: other.key })).status).toBe(404);
    expect(
      (await svc.call('GET', `/api/workflows/${crypto.randomUUID()}/paused`, { key: tenant.key })).status,
    ).toBe(404);
    expect(
      (await svc.call('GET', `/api/workflows/${wf}/paused`, { key: tenant.key, query: { limit: 0 } })).status,
    ).toBe(400);
    const bad = await svc.call('POST', `/api/resume/${wf}/not-a-uuid/${crypto.randomUUID()}`, {
      key: tenant.key,
      body: { approved: true },
    });
    expect(bad.status).toBe(400);
    const none = await svc.call('POST', `/api/resume/${wf}/${crypto.randomUUID()}/${crypto.randomUUID()}`, {
      key: tenant.key,
      body: { approved: true },
    });
    expect(none.status).toBe(404);
  });
});

describe('approvals through the admin plane', () => {
  it('executions.get shows the pause; executions.resume answers it once, with bad data refused', async () => {
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, approvalFlow('t=10'));
    const id = await start(wf, { amount: 10 });
    const record = await paused(id);
    const detail = await svc.admin.executions.get.query({ id });
    expect(detail.status).toBe('paused');
    expect(detail.pause).toEqual(record.metadata.pause);
    const listed = await svc.admin.executions.list.query({
      workspaceId: tenant.workspace.id,
      status: 'paused',
    });
    expect(listed.data.map((e: { id: string }) => e.id)).toContain(id);
    const bad = await adminError(
      svc.admin.executions.resume.mutate({ id, approved: true, data: { comment: 5 } }),
    );
    expect(bad.httpStatus).toBe(400);
    expect(bad.details?.[0]?.path).toEqual(['data', 'comment']);
    const unknown = await adminError(
      svc.admin.executions.resume.mutate({ id: crypto.randomUUID(), approved: true }),
    );
    expect(unknown.httpStatus).toBe(404);
    const done = await svc.admin.executions.resume.mutate({ id, approved: false });
    expect(done).toMatchObject({ status: 'processing', approved: false, by: 'admin' });
    const again = await adminError(svc.admin.executions.resume.mutate({ id, approved: true }));
    expect(again.httpStatus).toBe(409);
    expect((await finished(id)).body.output).toEqual({ rejected: true, by: 'admin' });
  });
});

describe.runIf(Boolean(process.env.TEST_DATABASE_URL))('paused executions across runner processes', () => {
  let own: TestService;
  let ownTenant: Tenant;
  let ownNotices: ExecutionNotices;
  const runners: ChildProcess[] = [];

  beforeAll(async () => {
    own = await startTestService({ HTTP_ALLOW_LIST: '127.0.0.1' });
    ownNotices = await watchExecutions(own.db);
    ownTenant = await createTenant(own.admin);
  });
  afterAll(async () => {
    await killAll(runners);
    await ownNotices?.close();
    await own?.close();
  });

  it('a resume after the runner that paused it was killed goes on in another runner, once', async () => {
    await startServiceRunner(own, runners);
    const wf = await deployWorkflow(own.admin, ownTenant.workspace.id, approvalFlow('t=9'));
    const res = await own.call('POST', `/api/workflows/${wf}/execute`, {
      key: ownTenant.key,
      body: { inputs: { amount: 9 }, async: true },
    });
    const id = res.body.taskId as string;
    await ownNotices.next(id, ['parked']);
    const { pause } = (await own.call('GET', `/api/jobs/${id}`, { key: ownTenant.key })).body.metadata;
    expect(pause).toMatchObject({ resumeUrl: expect.any(String) });
    await killAll(runners);
    await startServiceRunner(own, runners);
    const answer = await own.call('POST', pause.resumeUrl, {
      key: ownTenant.key,
      body: { approved: true, data: { comment: 'after restart' } },
    });
    expect(answer.status).toBe(202);
    await ownNotices.next(id, ENDS);
    const done = await own.call('GET', `/api/jobs/${id}`, { key: ownTenant.key });
    expect(done.body).toMatchObject({ status: 'completed', output: { approved: true } });
    expect(hits.get('/before?t=9')).toBe(1);
    expect(hits.get('/yes?t=9')).toBe(1);
  });
});
