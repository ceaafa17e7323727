// Runner processes sharing one Postgres: every execution runs exactly once across several runners,
// SIGTERM drains what is running, and a runner killed mid-execution loses nothing. Needs a server
// database (the embedded one serves one process), so it runs in the TEST_DATABASE_URL pass.
import type { ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { exited, killAll, startServiceRunner } from '../helpers/runner-processes.ts';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';
import { deployWorkflow, pollJob } from '../helpers/workflows.ts';

const serverDatabase = Boolean(process.env.TEST_DATABASE_URL);

let svc: TestService;
let tenant: Tenant;
let hits: Map<string, number>;
let target: Server;
let targetUrl: string;
const runners: ChildProcess[] = [];

const startRunner = () => startServiceRunner(svc, runners, { RUNNER_CONCURRENCY: '8' });

async function executeAsync(workflowId: string, inputs: Record<string, unknown>) {
  const res = await svc.call('POST', `/api/workflows/${workflowId}/execute`, {
    key: tenant.key,
    body: { inputs, async: true },
  });
  expect(res.status).toBe(202);
  return res.body.taskId as string;
}

describe.runIf(serverDatabase)('runner processes', () => {
  beforeAll(async () => {
    // Jobs carry the heartbeat they are sent with: short here, so a killed runner is noticed soon.
    svc = await startTestService({ QUEUE_HEARTBEAT_SECONDS: '10' });
    tenant = await createTenant(svc.admin);
    hits = new Map();
    // Counts how often each execution's http block reached it: the witness of "exactly once".
    target = createServer((req, res) => {
      const id = new URL(req.url ?? '/', 'http://x').searchParams.get('id') ?? '';
      hits.set(id, (hits.get(id) ?? 0) + 1);
      res.end('{}');
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/`;
  });
  afterEach(async () => {
    await killAll(runners);
  });
  afterAll(async () => {
    target?.close();
    await svc?.close();
  });

  it('shares the queue between two runners, running every execution exactly once', async () => {
    await Promise.all([startRunner(), startRunner()]);
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, {
      inputs: { id: { type: 'string', required: true } },
      blocks: [{ id: 'call', type: 'http', url: `${targetUrl}?id=<start.id>` }],
    });
    const ids = Array.from({ length: 40 }, (_, i) => `e${i}`);
    const jobs = await Promise.all(ids.map((id) => executeAsync(wf, { id })));
    for (const job of jobs) expect((await pollJob(svc.call, tenant.key, job)).body.status).toBe('completed');
    for (const id of ids) expect(hits.get(id), id).toBe(1);
    const rows = await svc.db.query<{ attempt: number }>(
      'select attempt from executions where workflow_id = $1',
      [wf],
    );
    expect(rows.map((r) => r.attempt)).toEqual(rows.map(() => 1));
  });

  it('finishes the running execution on SIGTERM before exiting', async () => {
    const runner = await startRunner();
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [
        { id: 'w', type: 'wait', ms: 1500 },
        { id: 'r', type: 'response', data: 'drained' },
      ],
      edges: [{ from: 'w', to: 'r' }],
    });
    const job = await executeAsync(wf, {});
    await waitForStatus(job, 'processing');
    runner.kill('SIGTERM');
    expect(await exited(runner)).toEqual({ code: 0, signal: null });
    const res = await svc.call('GET', `/api/jobs/${job}`, { key: tenant.key });
    expect(res.body).toMatchObject({ status: 'completed', output: 'drained' });
  });

  it('recovers an execution whose runner was killed mid-run: retried elsewhere, never stuck processing', async () => {
    const doomed = await startRunner();
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [
        { id: 'w', type: 'wait', ms: 2000 },
        { id: 'r', type: 'response', data: 'survived' },
      ],
      edges: [{ from: 'w', to: 'r' }],
    });
    const job = await executeAsync(wf, {});
    await waitForStatus(job, 'processing');
    doomed.kill('SIGKILL');
    await exited(doomed);
    await startRunner();
    // The heartbeat (10 s) lapses, pg-boss retries the job, the new runner claims a new attempt.
    const res = await pollJob(svc.call, tenant.key, job, 2000);
    expect(res.body).toMatchObject({ status: 'completed', output: 'survived' });
    const [row] = await svc.db.query<{ attempt: number }>('select attempt from executions where id = $1', [
      job,
    ]);
    expect(row?.attempt).toBe(2);
  }, 60_000);
});

async function waitForStatus(job: string, status: string) {
  for (let i = 0; i < 400; i++) {
    const res = await svc.call('GET', `/api/jobs/${job}`, { key: tenant.key });
    if (res.body.status === status) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`job ${job} never reached ${status}`);
}
