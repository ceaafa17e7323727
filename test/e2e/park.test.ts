// Parked executions, through the public API on either database: a long `wait` or retry delay parks
// the execution (processing, `metadata.resumeAt`, no job, no concurrency slot), and the runner's
// sweeper resumes it when the injected clock says it is due; it goes on after its finished blocks.
// Cancel of a parked execution; a sync caller handed the job. (A runner process killed while an
// execution is parked, then another one resuming it, is at the end, on a server database.)
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUES } from '../../jobs/queues.ts';
import { resumeDueExecutions } from '../../jobs/resume-parked.ts';
import { ENDS, type ExecutionNotices, watchExecutions } from '../helpers/execution-notices.ts';
import { killAll, startServiceRunner } from '../helpers/runner-processes.ts';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';
import { startTargetServer, type TargetServer } from '../helpers/target-server.ts';
import { deployWorkflow } from '../helpers/workflows.ts';

const HOUR = 3_600_000;
let now = Date.parse('2026-01-01T00:00:00.000Z');
const clock = () => new Date(now);

let svc: TestService;
let tenant: Tenant;
let notices: ExecutionNotices;
let target: TargetServer;
let base: string;
let hits: TargetServer['hits'];

beforeAll(async () => {
  target = await startTargetServer();
  ({ base, hits } = target);
  svc = await startTestService({ HTTP_ALLOW_LIST: '127.0.0.1' }, { runner: true, clock });
  notices = await watchExecutions(svc.db);
  tenant = await createTenant(svc.admin);
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
const job = (id: string) => svc.call('GET', `/api/jobs/${id}`, { key: tenant.key });
/** Waits for the runner's notice that it parked the execution; answers its Job record. */
const parked = async (id: string) => {
  await notices.next(id, ['parked']);
  const { body } = await job(id);
  expect(body.metadata?.resumeAt, JSON.stringify(body)).toEqual(expect.any(String));
  return body;
};
/** Waits for the runner's notice that the execution ended; answers the GET of its Job record. */
const finished = async (id: string) => {
  await notices.next(id, ENDS);
  return job(id);
};
/** The execution's pg-boss jobs not yet finished (a parked execution holds none). */
const openJobs = async (id: string) => {
  const rows = await svc.db.query<{ n: number }>(
    `select count(*)::int as n from pgboss.job where data->>'executionId' = $1 and state < 'completed'`,
    [id],
  );
  return rows[0]?.n;
};

const waitFlow = (tag: string, ms: number | string = HOUR) => ({
  blocks: [
    { id: 'before', type: 'http', url: `${base}/before?${tag}` },
    { id: 'pause', type: 'wait', ms },
    { id: 'after', type: 'http', url: `${base}/after?${tag}` },
    { id: 'done', type: 'response', data: { waited: '<pause.waitedMs>', after: '<after.data.hit>' } },
  ],
  edges: [
    { from: 'before', to: 'pause' },
    { from: 'pause', to: 'after' },
    { from: 'after', to: 'done' },
  ],
});

describe('parked executions', () => {
  it('parks a 1-hour wait (no job held) and resumes it when the clock reaches it', async () => {
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, waitFlow('t=1'));
    const id = await start(wf);
    const record = await parked(id);
    expect(record.status).toBe('processing');
    expect(record.metadata.resumeAt).toBe(new Date(now + HOUR).toISOString());
    expect(await openJobs(id)).toBe(0);
    // The admin plane (and its console) shows the same due time.
    expect((await svc.admin.executions.get.query({ id })).resumeAt).toBe(record.metadata.resumeAt);
    expect(hits.get('/before?t=1')).toBe(1);
    expect(hits.get('/after?t=1')).toBeUndefined();
    // Not due a minute early.
    expect(await resumeDueExecutions(svc.db, svc.queue, new Date(now + HOUR - 60_000))).toBe(0);
    now += HOUR;
    const done = await finished(id);
    expect(done.body).toMatchObject({ status: 'completed', output: { waited: HOUR, after: '/after?t=1' } });
    expect(done.body.metadata.resumeAt).toBeUndefined();
    expect((await svc.admin.executions.get.query({ id })).resumeAt).toBeNull();
    expect(hits.get('/before?t=1')).toBe(1);
    expect(hits.get('/after?t=1')).toBe(1);
    const detail = await svc.admin.executions.get.query({ id });
    expect(detail.traceSpans.map((s: { blockId: string }) => s.blockId).sort()).toEqual([
      'after',
      'before',
      'done',
      'pause',
    ]);
  });

  it('a takeover before the due time (crash between checkpoint and park) parks again; a stray job does nothing', async () => {
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, waitFlow('t=7'));
    const id = await start(wf);
    const { metadata } = await parked(id);
    // A stray delivery of a parked execution: no claim, nothing runs.
    await svc.queue.send(QUEUES.workflowExecute, { executionId: id });
    // As if the runner died after the park's checkpoint, before the row recorded the park.
    await svc.db.query('update executions set resume_at = null where id = $1', [id]);
    await svc.queue.send(QUEUES.workflowExecute, { executionId: id });
    const again = await parked(id);
    expect(again.metadata.resumeAt).toBe(metadata.resumeAt);
    expect(hits.get('/before?t=7')).toBe(1);
    expect(hits.get('/after?t=7')).toBeUndefined();
    now += HOUR;
    expect((await finished(id)).body.status).toBe('completed');
    expect(hits.get('/after?t=7')).toBe(1);
  });

  it('one path parks while another runs: the other finishes first, nothing repeats on resume', async () => {
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [
        { id: 'pause', type: 'wait', ms: HOUR },
        { id: 'side', type: 'http', url: `${base}/side?t=8` },
        { id: 'after', type: 'http', url: `${base}/after?t=8` },
      ],
      edges: [{ from: 'pause', to: 'after' }],
    });
    const id = await start(wf);
    await parked(id);
    expect(hits.get('/side?t=8')).toBe(1);
    expect(hits.get('/after?t=8')).toBeUndefined();
    now += HOUR;
    expect((await finished(id)).body.status).toBe('completed');
    expect(hits.get('/side?t=8')).toBe(1);
    expect(hits.get('/after?t=8')).toBe(1);
  });

  it('refuses a wait beyond 30 days at deploy', async () => {
    await expect(
      deployWorkflow(svc.admin, tenant.workspace.id, waitFlow('t=x', 31 * 24 * HOUR)),
    ).rejects.toThrow();
  });

  it('a cancel of a parked execution ends it at once, and it never resumes', async () => {
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, waitFlow('t=2'));
    const id = await start(wf);
    await parked(id);
    const res = await svc.call('POST', `/api/workflows/${wf}/executions/${id}/cancel`, { key: tenant.key });
    expect(res.status).toBe(200);
    expect((await job(id)).body).toMatchObject({ status: 'cancelled' });
    now += 2 * HOUR;
    // What every runner's sweep does once it is due: it finds nothing to resume.
    expect(await resumeDueExecutions(svc.db, svc.queue, clock())).toBe(0);
    const after = (await job(id)).body;
    expect(after.status).toBe('cancelled');
    expect(after.metadata.resumeAt).toBeUndefined();
    expect(hits.get('/after?t=2')).toBeUndefined();
  });

  it('a long retry delay parks; the retry goes on with its next attempt', async () => {
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [
        {
          id: 'call',
          type: 'http',
          url: `${base}/flaky?t=3`,
          retry: { maxAttempts: 3, delayMs: 60_000, backoff: 'fixed', jitter: false },
        },
      ],
    });
    const id = await start(wf);
    const record = await parked(id);
    expect(record.metadata.resumeAt).toBe(new Date(now + 60_000).toISOString());
    expect(hits.get('/flaky?t=3')).toBe(1);
    now += 60_000;
    const done = await finished(id);
    expect(done.body).toMatchObject({ status: 'completed' });
    expect(hits.get('/flaky?t=3')).toBe(2);
    const detail = await svc.admin.executions.get.query({ id });
    const attempts = detail.traceSpans.map((s: { attempt?: number; status: string }) => [
      s.attempt,
      s.status,
    ]);
    expect(attempts).toEqual([
      [1, 'error'],
      [2, 'success'],
    ]);
  });

  it('a parked execution holds no concurrency slot', async () => {
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, {
      ...waitFlow('t=4', '<start.ms>'),
      inputs: { ms: { type: 'number', required: true } },
      concurrency: { limit: 1 },
    });
    const first = await start(wf, { ms: HOUR });
    await parked(first);
    // With a limit of 1, this one runs only because the parked one let go of its slot.
    const second = await start(wf, { ms: 0 });
    expect((await finished(second)).body.status).toBe('completed');
    now += HOUR;
    expect((await finished(first)).body.status).toBe('completed');
  });

  it('a resumed execution of a full group waits queued for its slot', async () => {
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [
        { id: 'before', type: 'http', url: `${base}/<start.path>` },
        { id: 'pause', type: 'wait', ms: '<start.ms>' },
        { id: 'after', type: 'http', url: `${base}/after?<start.path>` },
      ],
      edges: [
        { from: 'before', to: 'pause' },
        { from: 'pause', to: 'after' },
      ],
      inputs: { ms: { type: 'number', required: true }, path: { type: 'string', required: true } },
      concurrency: { limit: 1 },
    });
    const first = await start(wf, { ms: HOUR, path: 'resume-first' });
    await parked(first);
    // The second holds the only slot while the first comes due.
    const second = await start(wf, { ms: 0, path: 'hold-second' });
    await target.received(() => target.held[0], 'the second to hold its slot');
    now += HOUR;
    // Resumed by the sweep, the first finds its group full: its job is done, it waits queued.
    await notices.next(first, ['waiting']);
    const waiting = (await job(first)).body;
    expect(waiting.metadata?.resumeAt).toBeUndefined();
    expect(await openJobs(first)).toBe(0);
    expect(waiting.status).toBe('queued');
    expect(hits.get('/after?resume-first')).toBeUndefined();
    for (const release of target.held.splice(0)) release();
    expect((await finished(second)).body.status).toBe('completed');
    const done = await finished(first);
    expect(done.body.status).toBe('completed');
    expect(hits.get('/after?resume-first')).toBe(1);
    expect(hits.get('/resume-first')).toBe(1);
    // The trace shows the two never ran at once: the first's last block began after the second ended.
    const [a, b] = await Promise.all([
      svc.admin.executions.get.query({ id: first }),
      svc.admin.executions.get.query({ id: second }),
    ]);
    const after = a.traceSpans.find((s: { blockId: string }) => s.blockId === 'after');
    const ends = b.traceSpans.map((s: { endedAt: string }) => Date.parse(s.endedAt));
    expect(Date.parse(after?.startedAt ?? '')).toBeGreaterThanOrEqual(Math.max(...ends));
  });

  it('a sync caller gets the parked execution as a 202 with its job', async () => {
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, waitFlow('t=5'));
    const res = await svc.call('POST', `/api/workflows/${wf}/execute`, { key: tenant.key, body: {} });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ success: false, status: 'processing' });
    expect(res.body.metadata.resumeAt).toBe(new Date(now + HOUR).toISOString());
    now += HOUR;
    expect((await finished(res.body.taskId)).body.status).toBe('completed');
  });
});

describe.runIf(Boolean(process.env.TEST_DATABASE_URL))('parked executions across runner processes', () => {
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

  it('survives the kill of the runner that parked it; another runner resumes it once', async () => {
    await startServiceRunner(own, runners);
    const wf = await deployWorkflow(own.admin, ownTenant.workspace.id, waitFlow('t=6'));
    const res = await own.call('POST', `/api/workflows/${wf}/execute`, {
      key: ownTenant.key,
      body: { async: true },
    });
    const id = res.body.taskId as string;
    await ownNotices.next(id, ['parked']);
    const parkedRecord = await own.call('GET', `/api/jobs/${id}`, { key: ownTenant.key });
    expect(parkedRecord.body.metadata?.resumeAt).toEqual(expect.any(String));
    await killAll(runners);
    await startServiceRunner(own, runners);
    // A runner process keeps the system clock: the hour passes by moving the due time instead (the
    // row's, and the parked checkpoint's, which a runner checks again when it resumes).
    await own.db.query(`update executions set resume_at = now() - interval '1 second' where id = $1`, [id]);
    await own.db.query(
      `update execution_checkpoints set record = jsonb_set(record, '{dueAt}', '0') where execution_id = $1`,
      [id],
    );
    await ownNotices.next(id, ENDS);
    const done = await own.call('GET', `/api/jobs/${id}`, { key: ownTenant.key });
    expect(done.body).toMatchObject({ status: 'completed', output: { waited: HOUR, after: '/after?t=6' } });
    expect(hits.get('/before?t=6')).toBe(1);
    expect(hits.get('/after?t=6')).toBe(1);
  });
});
