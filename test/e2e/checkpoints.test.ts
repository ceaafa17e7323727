// Checkpoints through the queue, on either database: an execution whose runner stalls inside a block
// is taken over by a second delivery of its job (as pg-boss re-delivers the job of a runner that
// died), and the new attempt continues after the blocks the first one finished: their side effects
// happen once, and their spans and cost are in the final trace and charge once. (The SIGKILL of a
// real runner process is test/e2e/checkpoint-runners.test.ts, on a server database.)
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUES } from '../../jobs/queues.ts';
import { startChatServer } from '../helpers/openai-server.ts';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';
import { until } from '../helpers/until.ts';
import { deployWorkflow, pollJob } from '../helpers/workflows.ts';

describe('checkpoints', () => {
  let svc: TestService;
  let tenant: Tenant;
  let chat: Awaited<ReturnType<typeof startChatServer>>;
  let target: Server;
  let base: string;
  // Calls by path and query: the witness of what ran how often.
  const hits = new Map<string, number>();
  // The first call to a `stall` path never answers: the first attempt is stuck there, as if dead.
  const stalled: ServerResponse[] = [];

  beforeAll(async () => {
    chat = await startChatServer();
    svc = await startTestService(
      { HTTP_ALLOW_LIST: '127.0.0.1', OPENAI_BASE_URL: chat.url, OPENAI_API_KEY: 'sk-test' },
      { runner: true },
    );
    tenant = await createTenant(svc.admin);
    target = createServer((req: IncomingMessage, res: ServerResponse) => {
      const key = req.url ?? '/';
      const n = (hits.get(key) ?? 0) + 1;
      hits.set(key, n);
      if (key.startsWith('/stall') && n === 1) {
        stalled.push(res);
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ hit: key }));
    });
    target.listen(0, '127.0.0.1');
    await once(target, 'listening');
    base = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const res of stalled) res.destroy();
    target?.closeAllConnections();
    await new Promise((r) => target?.close(r));
    await svc?.close();
    await chat?.close();
  });

  /** Starts an execution, waits for it to stall at `stallPath`, re-delivers its job, waits for the end. */
  async function takeOver(wf: string, stallPath: string) {
    const started = await svc.call('POST', `/api/workflows/${wf}/execute`, {
      key: tenant.key,
      body: { async: true },
    });
    expect(started.status).toBe(202);
    const id = started.body.taskId as string;
    await until(() => (hits.get(stallPath) ? true : undefined), 'the first attempt to stall');
    const heldWhileStalled = await checkpointsOf(id);
    // What pg-boss does once the stalled runner's heartbeat lapses: the job again, to any runner.
    await svc.queue.send(QUEUES.workflowExecute, { executionId: id });
    const done = await pollJob(svc.call, tenant.key, id);
    const detail = await svc.admin.executions.get.query({ id });
    return { id, done, detail, heldWhileStalled };
  }

  async function checkpointsOf(id: string): Promise<number> {
    const [row] = await svc.db.query<{ n: number }>(
      'select count(*)::int as n from execution_checkpoints where execution_id = $1',
      [id],
    );
    return row?.n ?? 0;
  }

  it('continues after the finished http block: one call, the execution completes', async () => {
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [
        { id: 'call', type: 'http', url: `${base}/count?w=1` },
        { id: 'pure', type: 'function', code: 'return 1 + 1' },
        { id: 'later', type: 'http', url: `${base}/stall?w=1` },
        { id: 'done', type: 'response', data: { first: '<call.data.hit>', later: '<later.data.hit>' } },
      ],
      edges: [
        { from: 'call', to: 'pure' },
        { from: 'pure', to: 'later' },
        { from: 'later', to: 'done' },
      ],
    });
    const { id, done, detail, heldWhileStalled } = await takeOver(wf, '/stall?w=1');
    // Held while the execution was unfinished, gone with the transaction that finished it.
    expect(heldWhileStalled).toBeGreaterThan(0);
    expect(await checkpointsOf(id)).toBe(0);
    expect(done.body).toMatchObject({
      status: 'completed',
      output: { first: '/count?w=1', later: '/stall?w=1' },
    });
    expect(hits.get('/count?w=1')).toBe(1);
    // The block the crash landed in ran again; it is in the trace once, as the attempt that finished.
    expect(hits.get('/stall?w=1')).toBe(2);
    const ids = detail.traceSpans.map((s: { blockId: string }) => s.blockId);
    expect(ids.sort()).toEqual(['call', 'done', 'later', 'pure']);
    const [row] = await svc.db.query<{ attempt: number }>('select attempt from executions where id = $1', [
      id,
    ]);
    expect(row?.attempt).toBe(2);
  });

  it('a cancel deletes the checkpoints in its own transaction', async () => {
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [
        { id: 'call', type: 'http', url: `${base}/count?w=5` },
        { id: 'later', type: 'http', url: `${base}/stall?w=5` },
      ],
      edges: [{ from: 'call', to: 'later' }],
    });
    const started = await svc.call('POST', `/api/workflows/${wf}/execute`, {
      key: tenant.key,
      body: { async: true },
    });
    const id = started.body.taskId as string;
    await until(() => (hits.get('/stall?w=5') ? true : undefined), 'the attempt to stall');
    expect(await checkpointsOf(id)).toBeGreaterThan(0);
    const cancelled = await svc.call('POST', `/api/workflows/${wf}/executions/${id}/cancel`, {
      key: tenant.key,
    });
    expect(cancelled.status).toBe(200);
    expect(await checkpointsOf(id)).toBe(0);
  });

  it('does not repeat the finished iterations of a loop', async () => {
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [
        {
          id: 'each',
          type: 'loop',
          count: 5,
          blocks: [
            { id: 'pick', type: 'function', code: 'return loop.index === 3 ? "stall" : "count"' },
            { id: 'call', type: 'http', url: `${base}/<pick>?w=2&i=<loop.index>` },
          ],
          edges: [{ from: 'pick', to: 'call' }],
        },
      ],
    });
    const { done, detail } = await takeOver(wf, '/stall?w=2&i=3');
    expect(done.body.status).toBe('completed');
    for (const i of [0, 1, 2, 4]) expect(hits.get(`/count?w=2&i=${i}`), `iteration ${i}`).toBe(1);
    expect(hits.get('/stall?w=2&i=3')).toBe(2);
    const calls = detail.traceSpans
      .filter((s: { blockId: string }) => s.blockId === 'call')
      .map((s) => [s.iteration, s.status]);
    expect(calls.sort()).toEqual([0, 1, 2, 3, 4].map((i) => [i, 'success']));
  });

  it('charges a checkpointed agent block once, with its span once', async () => {
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [
        { id: 'ask', type: 'agent', model: 'gpt-4o-mini', prompt: 'checkpoint me' },
        { id: 'later', type: 'http', url: `${base}/stall?w=3` },
      ],
      edges: [{ from: 'ask', to: 'later' }],
    });
    const asked = () => chat.requests.filter((r) => r.messages.at(-1)?.content === 'checkpoint me').length;
    const { done, detail } = await takeOver(wf, '/stall?w=3');
    expect(done.body.status).toBe('completed');
    expect(asked()).toBe(1);
    expect(detail.traceSpans.filter((s: { blockId: string }) => s.blockId === 'ask')).toHaveLength(1);
    // One model call's tokens (20 prompt, 5 completion), not two.
    expect(detail.cost).toMatchObject({ tokens: { prompt: 20, completion: 5, total: 25 } });
  });

  it('keeps what a block routed to its error edge', async () => {
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [
        { id: 'call', type: 'http', url: 'http://10.255.255.1:9/blocked' },
        { id: 'later', type: 'http', url: `${base}/stall?w=4` },
        { id: 'done', type: 'response', data: '<call.error>' },
      ],
      edges: [
        { from: 'call', to: 'later', branch: 'error' },
        { from: 'later', to: 'done' },
      ],
    });
    const { done, detail } = await takeOver(wf, '/stall?w=4');
    expect(done.body.status).toBe('completed');
    expect(typeof done.body.output).toBe('string');
    expect(detail.traceSpans.filter((s: { blockId: string }) => s.blockId === 'call')).toHaveLength(1);
  });
});
