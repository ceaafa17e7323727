// A runner process SIGKILLed after an http block reached a counter server and during a later block:
// the execution is carried on by another runner process after the killed one's heartbeat lapses,
// continuing after the checkpointed call (the counter shows one call) and completing. Needs a server
// database (the embedded one serves one process), so it runs in the TEST_DATABASE_URL pass.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exited, killAll, startServiceRunner } from '../helpers/runner-processes.ts';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';
import { until } from '../helpers/until.ts';
import { deployWorkflow, pollJob } from '../helpers/workflows.ts';

const serverDatabase = Boolean(process.env.TEST_DATABASE_URL);

describe.runIf(serverDatabase)('checkpoints across runner processes', () => {
  let svc: TestService;
  let tenant: Tenant;
  let target: Server;
  let base: string;
  const hits = new Map<string, number>();
  const held: ServerResponse[] = [];
  const runners: ChildProcess[] = [];
  const startRunner = () => startServiceRunner(svc, runners);

  beforeAll(async () => {
    // Jobs carry the heartbeat they are sent with: short, so the killed runner is noticed soon.
    svc = await startTestService({ QUEUE_HEARTBEAT_SECONDS: '10' });
    tenant = await createTenant(svc.admin);
    // Counts calls by path; the first call to /slow is held open: the runner is killed during it.
    target = createServer((req, res) => {
      const key = req.url ?? '/';
      const n = (hits.get(key) ?? 0) + 1;
      hits.set(key, n);
      if (key.startsWith('/slow') && n === 1) {
        held.push(res);
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ n }));
    });
    target.listen(0, '127.0.0.1');
    await once(target, 'listening');
    base = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await killAll(runners);
    for (const res of held) res.destroy();
    target?.closeAllConnections();
    await new Promise((r) => target?.close(r));
    await svc?.close();
  });

  it('does not call the counter again after a SIGKILL during a later block, and completes', async () => {
    const doomed = await startRunner();
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [
        { id: 'count', type: 'http', url: `${base}/count`, method: 'POST' },
        { id: 'between', type: 'function', code: 'return "pure"' },
        { id: 'slow', type: 'http', url: `${base}/slow` },
        { id: 'done', type: 'response', data: { counted: '<count.data.n>', between: '<between>' } },
      ],
      edges: [
        { from: 'count', to: 'between' },
        { from: 'between', to: 'slow' },
        { from: 'slow', to: 'done' },
      ],
    });
    const started = await svc.call('POST', `/api/workflows/${wf}/execute`, {
      key: tenant.key,
      body: { async: true },
    });
    const id = started.body.taskId as string;
    await until(() => (hits.get('/slow') ? true : undefined), 'the runner to reach the later block');
    doomed.kill('SIGKILL');
    await exited(doomed);
    await startRunner();
    const res = await pollJob(svc.call, tenant.key, id, 2400);
    expect(res.body).toMatchObject({ status: 'completed', output: { counted: 1, between: 'pure' } });
    expect(hits.get('/count')).toBe(1);
    const detail = await svc.admin.executions.get.query({ id });
    const spans = detail.traceSpans.map((s: { blockId: string }) => s.blockId);
    expect(spans.sort()).toEqual(['between', 'count', 'done', 'slow']);
    const [row] = await svc.db.query<{ attempt: number }>('select attempt from executions where id = $1', [
      id,
    ]);
    expect(row?.attempt).toBe(2);
  }, 90_000);
});
