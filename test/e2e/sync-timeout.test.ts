// A sync call whose execution outlasts SYNC_WAIT_TIMEOUT_MS answers 202 with its job, which still
// completes: the caller polls instead of holding the connection.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';
import { deployWorkflow, pollJob } from '../helpers/workflows.ts';

let svc: TestService;
let tenant: Tenant;

beforeAll(async () => {
  svc = await startTestService({ SYNC_WAIT_TIMEOUT_MS: '200' }, { runner: true });
  tenant = await createTenant(svc.admin);
});
afterAll(() => svc.close());

it('hands back the job of a sync execution still running at the wait limit', async () => {
  const id = await deployWorkflow(svc.admin, tenant.workspace.id, {
    blocks: [
      { id: 'w', type: 'wait', ms: 600 },
      { id: 'r', type: 'response', data: 'late' },
    ],
    edges: [{ from: 'w', to: 'r' }],
  });
  const res = await svc.call('POST', `/api/workflows/${id}/execute`, { key: tenant.key, body: {} });
  expect(res.status).toBe(202);
  // Queued or processing: a loaded machine may not have started it within the wait.
  expect(res.body).toMatchObject({
    success: false,
    taskId: expect.any(String),
    status: expect.stringMatching(/^(queued|processing)$/),
  });
  expect(res.body.error).toMatch(/still running/);
  const job = await pollJob(svc.call, tenant.key, res.body.taskId);
  expect(job.body).toMatchObject({ status: 'completed', output: 'late' });
});
