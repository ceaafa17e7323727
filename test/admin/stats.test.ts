// stats.overview, the admin console's first page: executions ended per minute of the last hour by
// final status with p50/p95 duration (60 zero-filled buckets, oldest first), executions in flight,
// the queues' backlog and the ingestion backlog, for the whole service or one organization or
// workspace. First while no runner works (everything waits), then once one has worked it all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OVERVIEW_SQL } from '../../db/stats.ts';
import { QUEUES } from '../../jobs/queues.ts';
import { createLogger } from '../../logger.ts';
import { type Runner, startRunner } from '../../runner/runner.ts';
import { createKnowledgeBase, settled, uploadDocument } from '../api/knowledge-helpers.ts';
import {
  ADMIN_TOKEN,
  adminError,
  createTenant,
  createWorkspace,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';
import { deployWorkflow } from '../helpers/workflows.ts';

let svc: TestService;
let tenant: Tenant;
let other: Tenant;
let runner: Runner | null = null;

beforeAll(async () => {
  // No runner at first: what is sent stays waiting until the second part starts one.
  svc = await startTestService();
  tenant = await createTenant(svc.admin);
  other = await createTenant(svc.admin);
});
afterAll(async () => {
  await runner?.stop();
  await svc.close();
});

const GREET = {
  inputs: { who: { type: 'string', required: true } },
  blocks: [{ id: 'r', type: 'response', data: { hello: '<start.who>' } }],
};
const FAILING = { blocks: [{ id: 'f', type: 'function', code: 'throw new Error("on purpose")' }] };

type Overview = Awaited<ReturnType<typeof svc.admin.stats.overview.query>>;

const overview = (scope?: { organizationId?: string; workspaceId?: string }) =>
  svc.admin.stats.overview.query(scope);

const total = (o: Overview, field: 'completed' | 'failed') => o.minutes.reduce((sum, m) => sum + m[field], 0);

/** The 60 buckets: whole minutes, one apart, oldest first, the last one holding generatedAt. */
function expectWindow(o: Overview) {
  expect(o.minutes).toHaveLength(60);
  const starts = o.minutes.map((m) => Date.parse(m.minute));
  for (const [i, at] of starts.entries()) {
    expect(at % 60_000).toBe(0);
    if (i > 0) expect(at - (starts[i - 1] as number)).toBe(60_000);
  }
  const generated = Date.parse(o.generatedAt);
  expect(generated).toBeGreaterThanOrEqual(starts[59] as number);
  expect(generated).toBeLessThan((starts[59] as number) + 60_000);
  for (const m of o.minutes) {
    if (m.completed + m.failed === 0) expect([m.p50Ms, m.p95Ms]).toEqual([null, null]);
    else {
      expect(m.p50Ms).toEqual(expect.any(Number));
      expect(m.p95Ms).toBeGreaterThanOrEqual(m.p50Ms as number);
    }
  }
}

const queueOf = (o: Overview, queue: string) => o.queues.find((q) => q.queue === queue);

/** Polls the admin view of an execution until it has finished (a runner works meanwhile). */
async function finished(id: string) {
  for (let i = 0; i < 800; i++) {
    const e = await svc.admin.executions.get.query({ id });
    if (e.status === 'completed' || e.status === 'failed') return e;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`execution ${id} did not finish`);
}

const started: string[] = [];
const documents: { good: string; empty: string; knowledgeBaseId: string } = {
  good: '',
  empty: '',
  knowledgeBaseId: '',
};

describe('stats.overview while no runner works', () => {
  it('counts queued executions, waiting queue jobs and pending documents, narrowed by scope', async () => {
    const greet = await deployWorkflow(svc.admin, tenant.workspace.id, GREET);
    const failing = await deployWorkflow(svc.admin, tenant.workspace.id, FAILING);
    for (const who of ['a', 'b', 'c'])
      started.push(
        (await svc.admin.executions.run.mutate({ workflowId: greet, inputs: { who } })).executionId,
      );
    started.push((await svc.admin.executions.run.mutate({ workflowId: failing })).executionId);
    const otherWf = await deployWorkflow(svc.admin, other.workspace.id, GREET);
    started.push(
      (await svc.admin.executions.run.mutate({ workflowId: otherWf, inputs: { who: 'o' } })).executionId,
    );
    const kb = await createKnowledgeBase(svc, tenant.workspace.id);
    documents.knowledgeBaseId = kb.id;
    for (const [slot, content] of [
      ['good', 'Some words about budgets and foxes.'],
      ['empty', ''],
    ] as const) {
      const res = await uploadDocument(svc, tenant.key, kb.id, {
        workspaceId: tenant.workspace.id,
        name: `${slot}.txt`,
        content,
      });
      expect(res.status).toBe(200);
      documents[slot] = res.body.data.document.id;
    }

    const all = await overview();
    expectWindow(all);
    expect(all.executions).toEqual({ queued: 5, processing: 0 });
    expect(total(all, 'completed') + total(all, 'failed')).toBe(0);
    expect(all.ingestion).toEqual({ pending: 2, processing: 0, failed: 0 });
    // Every queue of ours is listed, idle ones as zeros, sorted by name.
    expect(all.queues.map((q) => q.queue)).toEqual(Object.values(QUEUES).toSorted());
    expect(queueOf(all, 'workflow-execute')).toEqual({
      queue: 'workflow-execute',
      waiting: 5,
      active: 0,
      oldestWaitingSeconds: expect.any(Number),
    });
    expect(queueOf(all, 'workflow-execute')?.oldestWaitingSeconds).toBeGreaterThanOrEqual(0);
    expect(queueOf(all, 'knowledge-ingest')).toMatchObject({ waiting: 2, active: 0 });
    expect(queueOf(all, 'execution-callback')).toEqual({
      queue: 'execution-callback',
      waiting: 0,
      active: 0,
      oldestWaitingSeconds: 0,
    });

    // Narrowed: executions and documents follow the scope; the queues stay service-wide.
    const mine = await overview({ organizationId: tenant.org.id });
    expect(mine.executions).toEqual({ queued: 4, processing: 0 });
    expect(mine.ingestion).toEqual({ pending: 2, processing: 0, failed: 0 });
    expect(queueOf(mine, 'workflow-execute')?.waiting).toBe(5);
    const theirs = await overview({ organizationId: other.org.id, workspaceId: other.workspace.id });
    expect(theirs.executions).toEqual({ queued: 1, processing: 0 });
    expect(theirs.ingestion).toEqual({ pending: 0, processing: 0, failed: 0 });
    const emptyWs = await overview({ workspaceId: await createWorkspace(svc.admin, tenant) });
    expect(emptyWs.executions).toEqual({ queued: 0, processing: 0 });
    expect(emptyWs.ingestion.pending).toBe(0);
  });
});

describe('stats.overview once a runner has worked everything', () => {
  it('counts ended executions by status in the minutes they ended, and the backlogs drain', async () => {
    runner = await startRunner({
      db: svc.db,
      config: svc.config,
      log: createLogger('silent'),
      encryptionKey: svc.encryptionKey,
    });
    for (const id of started) await finished(id);
    expect((await settled(svc, documents.good)).processingStatus).toBe('completed');
    expect((await settled(svc, documents.empty)).processingStatus).toBe('failed');

    const mine = await overview({ organizationId: tenant.org.id });
    expectWindow(mine);
    expect(total(mine, 'completed')).toBe(3);
    expect(total(mine, 'failed')).toBe(1);
    expect(mine.executions).toEqual({ queued: 0, processing: 0 });
    expect(mine.ingestion).toEqual({ pending: 0, processing: 0, failed: 1 });
    // Every execution ended in the last minute or two: their minutes carry durations.
    const busy = mine.minutes.filter((m) => m.completed + m.failed > 0);
    expect(busy.length).toBeGreaterThanOrEqual(1);
    for (const m of busy) expect(m.p50Ms).toBeGreaterThanOrEqual(0);

    const theirs = await overview({ workspaceId: other.workspace.id });
    expect([total(theirs, 'completed'), total(theirs, 'failed')]).toEqual([1, 0]);
    const all = await overview();
    expect(total(all, 'completed') + total(all, 'failed')).toBe(5);

    // The console's knowledge page shows the failure and its reason.
    const listed = await svc.admin.knowledge.documents.query({ knowledgeBaseId: documents.knowledgeBaseId });
    const byId = new Map(listed.documents.map((d) => [d.id, d]));
    expect(byId.get(documents.good)).toMatchObject({ processingStatus: 'completed', processingError: null });
    expect(byId.get(documents.empty)).toMatchObject({
      processingStatus: 'failed',
      processingError: expect.stringMatching(/\w/),
    });
  });

  it('puts each execution in the minute it ended, with p50/p95 by percentile_cont, and leaves out older ones', async () => {
    const ws = await createWorkspace(svc.admin, tenant);
    const wf = await deployWorkflow(svc.admin, ws, GREET);
    const ids: string[] = [];
    for (let i = 0; i < 7; i++)
      ids.push(
        (await svc.admin.executions.run.mutate({ workflowId: wf, inputs: { who: `${i}` } })).executionId,
      );
    for (const id of ids) await finished(id);
    const durations = [100, 200, 300, 400, 1000];

    // Their ends are moved (relative to the database's clock) to known places in the window: five in
    // the minute 10 minutes before the current one, one at the very start of the window, one just
    // before it. A minute may turn between arranging and reading: then arrange again.
    for (let attempt = 0; ; attempt++) {
      const [at] = await svc.db.query<{ minute: Date; since: Date }>(
        `select date_trunc('minute', now()) - interval '10 minutes' as minute,
                date_trunc('minute', now()) - interval '59 minutes' as since`,
      );
      const minute = (at as { minute: Date }).minute;
      const since = (at as { since: Date }).since;
      const place = (id: string, endedAt: Date, ms: number) =>
        svc.db.query(
          `update executions set ended_at = $2::timestamptz,
             started_at = $2::timestamptz - make_interval(secs => $3::float8 / 1000) where id = $1`,
          [id, endedAt.toISOString(), ms],
        );
      for (const [i, ms] of durations.entries())
        await place(ids[i] as string, new Date(minute.getTime() + 1000 * (i + 1)), ms);
      await place(ids[5] as string, since, 50);
      await place(ids[6] as string, new Date(since.getTime() - 1), 70);

      const o = await overview({ workspaceId: ws });
      if (o.minutes[0]?.minute !== since.toISOString()) {
        if (attempt < 3) continue;
        throw new Error('the minute kept turning');
      }
      expectWindow(o);
      expect(o.minutes[0]).toEqual({
        minute: since.toISOString(),
        completed: 1,
        failed: 0,
        p50Ms: 50,
        p95Ms: 50,
      });
      expect(o.minutes[49]).toMatchObject({ minute: minute.toISOString(), completed: 5, failed: 0 });
      expect(o.minutes[49]?.p50Ms).toBeCloseTo(300, 6);
      // percentile_cont interpolates: 400 + 0.8 × (1000 − 400).
      expect(o.minutes[49]?.p95Ms).toBeCloseTo(880, 6);
      expect(total(o, 'completed')).toBe(6);
      break;
    }
  });

  it('reads the ended executions through executions_ended_idx', async () => {
    // With sequential scans priced out, the plan shows whether the index can answer the window.
    const plan = await svc.db.transaction(async (tx) => {
      await tx.query('set local enable_seqscan = off');
      return tx.query<Record<string, string>>(`explain ${OVERVIEW_SQL}`, [null, null, 60]);
    });
    expect(plan.map((r) => Object.values(r).join('')).join('\n')).toContain('executions_ended_idx');
  });
});

describe('stats.overview refusals', () => {
  it('answers NOT_FOUND for an unknown organization or workspace, BAD_REQUEST for a mismatch or a bad id', async () => {
    const nobody = crypto.randomUUID();
    expect(await adminError(overview({ organizationId: nobody }))).toMatchObject({
      code: 'NOT_FOUND',
      message: 'Organization not found',
    });
    expect(await adminError(overview({ workspaceId: nobody }))).toMatchObject({
      code: 'NOT_FOUND',
      message: 'Workspace not found',
    });
    const mismatch = await adminError(
      overview({ organizationId: tenant.org.id, workspaceId: other.workspace.id }),
    );
    expect(mismatch).toMatchObject({ code: 'BAD_REQUEST' });
    expect(mismatch.details).toEqual([
      { code: 'custom', path: ['workspaceId'], message: 'Not a workspace of that organization' },
    ]);
    const bad = await adminError(overview({ workspaceId: 'x' }));
    expect(bad).toMatchObject({ code: 'BAD_REQUEST' });
    expect(bad.details?.[0]?.path).toEqual(['workspaceId']);
  });

  it('requires the admin token', async () => {
    const url = 'http://admin.test/trpc/stats.overview';
    expect((await svc.adminApp.request(url)).status).toBe(401);
    const res = await svc.adminApp.request(url, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(res.status).toBe(200);
    expect((await res.json()).result.data.minutes).toHaveLength(60);
  });
});
