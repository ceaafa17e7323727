// Cancelling a queued execution, while no runner is running: it is cancelled at once (Job record,
// callback), and once a runner starts it never runs (its http call never reaches the counter
// server) and costs nothing, while an execution queued beside it runs as usual.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../../logger.ts';
import { type Runner, startRunner } from '../../runner/runner.ts';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';
import { deployWorkflow, pollJob } from '../helpers/workflows.ts';

let server: Server;
let base: string;
let counted = 0;
const callbacks: unknown[] = [];
let svc: TestService;
let tenant: Tenant;
let runner: Runner | null = null;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      if (req.url === '/count') counted++;
      if (req.url === '/callback') callbacks.push(JSON.parse(body));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  svc = await startTestService({ HTTP_ALLOW_LIST: '127.0.0.1' }, { runner: false });
  tenant = await createTenant(svc.admin, { plan: 'enterprise' });
});
afterAll(async () => {
  await runner?.stop();
  await svc.close();
  await new Promise((r) => server.close(r));
});

it('a queued execution is cancelled at once and never starts', async () => {
  const counting = await deployWorkflow(svc.admin, tenant.workspace.id, {
    blocks: [{ id: 'hit', type: 'http', url: `${base}/count` }],
  });
  const started = await svc.call('POST', `/api/workflows/${counting}/execute`, {
    key: tenant.key,
    body: { async: true, callbackUrl: `${base}/callback` },
  });
  expect(started.status).toBe(202);
  const id = started.body.taskId as string;

  const res = await svc.call('POST', `/api/workflows/${counting}/executions/${id}/cancel`, {
    key: tenant.key,
  });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ success: true, reason: 'queue_cancelled', durablyRecorded: true });
  const job = await svc.call('GET', `/api/jobs/${id}`, { key: tenant.key });
  expect(job.body).toMatchObject({
    success: false,
    status: 'cancelled',
    error: 'Execution was cancelled',
    metadata: { cancelledAt: res.body.cancelledAt, cancelledBy: `user:${tenant.user.id}` },
  });

  // A runner starts: it takes both jobs, runs the other execution, and skips the cancelled one.
  runner = await startRunner({
    db: svc.db,
    config: svc.config,
    log: createLogger('silent'),
    encryptionKey: svc.encryptionKey,
  });
  const plain = await deployWorkflow(svc.admin, tenant.workspace.id, {
    blocks: [{ id: 'f', type: 'function', code: 'return 1' }],
  });
  const other = await svc.call('POST', `/api/workflows/${plain}/execute`, {
    key: tenant.key,
    body: { async: true },
  });
  expect((await pollJob(svc.call, tenant.key, other.body.taskId)).body.status).toBe('completed');
  for (let i = 0; i < 400 && callbacks.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
  expect(callbacks).toMatchObject([{ taskId: id, status: 'cancelled', success: false }]);
  // Its job was taken and acknowledged without running it.
  for (let i = 0; i < 400; i++) {
    const [left] = await svc.db.query<{ n: number }>(
      `select count(*)::int as n from pgboss.job where id = $1 and state in ('created', 'retry', 'active')`,
      [id],
    );
    if (left?.n === 0) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  expect(counted).toBe(0);
  const detail = await svc.admin.executions.get.query({ id });
  expect(detail).toMatchObject({ status: 'cancelled', startedAt: null, cost: null, attempt: 0 });
  // Only the other execution is billed.
  const [usage] = await svc.db.query<{ n: number }>('select sum(executions)::int as n from usage_periods');
  expect(usage?.n).toBe(1);
});
