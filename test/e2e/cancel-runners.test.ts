// A cancel reaching a runner in another process: the API here, the runner a separate runner/main.ts
// on the same Postgres. The cancel travels only through the database (NOTIFY, with the runner's poll
// behind it), and the runner aborts the http call it was making. Needs a server database (the embedded
// one serves one process), so it runs in the TEST_DATABASE_URL pass.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll, startServiceRunner } from '../helpers/runner-processes.ts';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';
import { until as waitFor } from '../helpers/until.ts';
import { deployWorkflow } from '../helpers/workflows.ts';

const serverDatabase = Boolean(process.env.TEST_DATABASE_URL);

const until = <T>(probe: () => Promise<T | undefined> | T | undefined, what: string) =>
  waitFor(probe, what, { tries: 600, everyMs: 25 });

describe.runIf(serverDatabase)('cancel across processes', () => {
  let svc: TestService;
  let tenant: Tenant;
  let target: Server;
  let url: string;
  let arrived = false;
  let closed = false;
  const runners: ChildProcess[] = [];

  beforeAll(async () => {
    svc = await startTestService();
    tenant = await createTenant(svc.admin);
    // Never answers; notes when the runner's request arrives and when its connection goes.
    target = createServer((req, res) => {
      arrived = true;
      req.resume();
      res.on('close', () => {
        closed = true;
      });
    });
    target.listen(0, '127.0.0.1');
    await once(target, 'listening');
    url = `http://127.0.0.1:${(target.address() as AddressInfo).port}/hang`;
  });
  afterAll(async () => {
    await killAll(runners);
    await svc?.close();
    target?.closeAllConnections();
    await new Promise((r) => target?.close(r));
  });

  it('stops the run in the runner process, which then records what ran', async () => {
    await startServiceRunner(svc, runners);
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [{ id: 'call', type: 'http', url }],
    });
    const started = await svc.call('POST', `/api/workflows/${wf}/execute`, {
      key: tenant.key,
      body: { async: true },
    });
    const id = started.body.taskId as string;
    await until(() => (arrived ? true : undefined), 'the runner to make its call');
    const res = await svc.call('POST', `/api/workflows/${wf}/executions/${id}/cancel`, { key: tenant.key });
    expect(res.body).toMatchObject({ success: true, reason: 'recorded' });
    await until(() => (closed ? true : undefined), 'the runner to abort its call');
    const detail = await until(async () => {
      const e = await svc.admin.executions.get.query({ id });
      return e.cost ? e : undefined;
    }, 'the runner to record what ran');
    expect(detail).toMatchObject({ status: 'cancelled', traceSpans: [{ blockId: 'call', status: 'error' }] });
  });
});
