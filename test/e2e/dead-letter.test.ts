// An execution whose job ran out of retries (its runners kept dying) reaches the dead-letter queue,
// where a runner marks it failed: it never stays queued or processing.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { insertExecutions } from '../../db/executions.ts';
import { QUEUES, WAKE_CHANNEL } from '../../jobs/queues.ts';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';
import { deployWorkflow, pollJob } from '../helpers/workflows.ts';

let svc: TestService;
let tenant: Tenant;

beforeAll(async () => {
  svc = await startTestService({}, { runner: true });
  tenant = await createTenant(svc.admin);
});
afterAll(() => svc.close());

it('fails an execution whose job was dead-lettered, with a clear error', async () => {
  const workflowId = await deployWorkflow(svc.admin, tenant.workspace.id, {
    blocks: [{ id: 'r', type: 'response', data: 1 }],
  });
  // The state a crash loop leaves behind: the execution row, and its job in the dead-letter queue.
  const executionId = crypto.randomUUID();
  await insertExecutions(svc.db, [
    {
      id: executionId,
      organizationId: tenant.org.id,
      workspaceId: tenant.workspace.id,
      workflowId,
      version: 1,
      mode: 'async',
      trigger: 'api',
      apiKeyId: null,
      billedUserId: tenant.user.id,
      billingSubject: `user:${tenant.user.id}`,
      inputs: {},
    },
  ]);
  await svc.queue.send(QUEUES.workflowExecuteDead, { executionId });
  await svc.db.notify(WAKE_CHANNEL, QUEUES.workflowExecuteDead);

  const job = await pollJob(svc.call, tenant.key, executionId);
  expect(job.body).toMatchObject({ status: 'failed', error: expect.stringMatching(/stopped responding/) });
  expect(job.body).not.toHaveProperty('output');
});
