// BILLING_ENABLED=false, for self-hosted services that do not meter: no rate limit, no spend
// limit, no rate-limit headers; the limits object shows the plan's figures. Its own file because it
// needs a service configured apart (one embedded database's queue per test process).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTenant, startTestService, type TestService } from '../helpers/service.ts';
import { deployWorkflow } from '../helpers/workflows.ts';

let off: TestService;
beforeAll(async () => {
  off = await startTestService({ BILLING_ENABLED: 'false' });
});
afterAll(() => off.close());

it('never limits, sends no rate-limit headers, and shows the plan figures', async () => {
  const tenant = await createTenant(off.admin);
  await off.admin.quotas.set.mutate({
    orgId: tenant.org.id,
    async: { requestsPerMinute: 1, maxBurst: 1 },
    usageLimit: 0,
  });
  const workflowId = await deployWorkflow(off.admin, tenant.workspace.id, {
    blocks: [{ id: 'r', type: 'response', data: { ok: true } }],
  });
  for (let i = 0; i < 3; i++) {
    const res = await off.call('POST', `/api/workflows/${workflowId}/execute`, {
      key: tenant.key,
      body: { async: true },
    });
    expect(res.status).toBe(202);
    expect(res.headers.get('X-RateLimit-Limit')).toBeNull();
    expect(res.body.limits.workflowExecutionRateLimit.async).toMatchObject({ maxBurst: 1, remaining: 1 });
    expect(res.body.limits.usage).toEqual({
      currentPeriodCost: 0,
      limit: 0,
      plan: 'free',
      isExceeded: false,
    });
  }
  const [row] = await off.db.query<{ billing_subject: string | null }>(
    'select billing_subject from executions where workflow_id = $1 limit 1',
    [workflowId],
  );
  expect(row?.billing_subject).toBeNull();
  const v1 = await off.call('GET', '/api/v1/audit-logs', {
    key: tenant.key,
    query: { workspaceId: tenant.workspace.id },
  });
  expect(v1.headers.get('X-RateLimit-Limit')).toBeNull();
  const usage = await off.call('GET', '/api/users/me/usage-limits', { key: tenant.key });
  expect(usage.body.usage).toMatchObject({ currentPeriodCost: 0, limit: 0, isExceeded: false });
});
