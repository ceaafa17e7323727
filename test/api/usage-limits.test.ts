// Spend and the usage-limits record: each execution adds $0.005 (plus model tokens) to its billed
// subject's spend for the period; at the limit new executions get 402; a new period starts afresh.
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  addPerson,
  createTenant,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';
import { deployWorkflow } from '../helpers/workflows.ts';

let svc: TestService;
// The runner records spend in the period an execution ends in (real time); the API reads the
// period of this clock, so it starts at the real now and only moves forward.
let now = new Date();
const clock = () => now;

beforeAll(async () => {
  svc = await startTestService({}, { runner: true, clock });
});
afterAll(() => svc.close());

const ECHO = { blocks: [{ id: 'r', type: 'response', data: { ok: true } }] };

async function tenantWithWorkflow(plan?: 'team') {
  const tenant = await createTenant(svc.admin, plan ? { plan } : {});
  const workflowId = await deployWorkflow(svc.admin, tenant.workspace.id, ECHO);
  return { tenant, workflowId };
}

const execute = (t: Tenant, workflowId: string, options: { key?: string; async?: boolean } = {}) =>
  svc.call('POST', `/api/workflows/${workflowId}/execute`, {
    key: options.key ?? t.key,
    body: { inputs: {}, ...(options.async ? { async: true } : {}) },
  });

const usageLimits = (key: string) => svc.call('GET', '/api/users/me/usage-limits', { key });

it('answers the usage-limits record of a new free-plan user', async () => {
  const { tenant } = await tenantWithWorkflow();
  const res = await usageLimits(tenant.key);
  expect(res.status).toBe(200);
  const bucket = (limit: number) => ({
    limit,
    remaining: limit * 2,
    reset: now.toISOString(),
    isLimited: false,
    requestsPerMinute: limit,
    maxBurst: limit * 2,
    resetAt: now.toISOString(),
  });
  const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  expect(res.body).toEqual({
    success: true,
    rateLimit: { sync: bucket(50), async: bucket(200), authType: 'api' },
    usage: {
      currentPeriodCost: 0,
      limit: 5,
      plan: 'free',
      isExceeded: false,
      periodStart: month.toISOString(),
      periodEnd: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
    },
    storage: { usedBytes: 0, limitBytes: 5_000_000_000, percentUsed: 0 },
  });
});

it('adds each execution to the period spend, and reading the figures takes no token', async () => {
  const { tenant, workflowId } = await tenantWithWorkflow();
  expect((await execute(tenant, workflowId)).status).toBe(200);
  const second = await execute(tenant, workflowId);
  // The limits object is judged at admission: the first run's $0.005 is already spent.
  expect(second.body.limits.usage).toEqual({
    currentPeriodCost: 0.005,
    limit: 5,
    plan: 'free',
    isExceeded: false,
  });
  const first = await usageLimits(tenant.key);
  const again = await usageLimits(tenant.key);
  expect(first.body.usage.currentPeriodCost).toBe(0.01);
  expect(first.body.rateLimit.sync.remaining).toBe(98);
  expect(again.body.rateLimit.sync.remaining).toBe(98);
  expect(again.body.rateLimit.async.remaining).toBe(400);
});

it('refuses new executions with 402 once the spend limit is reached, taking no token', async () => {
  const { tenant, workflowId } = await tenantWithWorkflow();
  await svc.admin.quotas.set.mutate({ orgId: tenant.org.id, usageLimit: 0.012 });
  for (let i = 0; i < 3; i++) expect((await execute(tenant, workflowId)).status).toBe(200);
  const refused = await execute(tenant, workflowId);
  expect(refused.status).toBe(402);
  expect(refused.body).toEqual({ error: expect.stringContaining('Usage limit exceeded') });
  expect(refused.body.error).toContain('$0.015 spent of $0.012');
  expect(refused.headers.get('X-RateLimit-Remaining')).toBe('97');
  expect((await execute(tenant, workflowId, { async: true })).status).toBe(402);
  const [count] = await svc.db.query<{ n: number }>(
    'select count(*)::int as n from executions where workflow_id = $1',
    [workflowId],
  );
  expect(count?.n).toBe(3);
  const record = await usageLimits(tenant.key);
  expect(record.body.usage).toMatchObject({ currentPeriodCost: 0.015, limit: 0.012, isExceeded: true });
  expect(record.body.rateLimit.sync.remaining).toBe(97);
  // Raising the limit lets executions through at once.
  await svc.admin.quotas.set.mutate({ orgId: tenant.org.id, usageLimit: 1 });
  expect((await execute(tenant, workflowId)).status).toBe(200);
});

it('starts a new billing period with nothing spent', async () => {
  const { tenant, workflowId } = await tenantWithWorkflow();
  await svc.admin.quotas.set.mutate({ orgId: tenant.org.id, usageLimit: 0.005 });
  expect((await execute(tenant, workflowId)).status).toBe(200);
  expect((await execute(tenant, workflowId)).status).toBe(402);
  const saved = now;
  now = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  try {
    const record = await usageLimits(tenant.key);
    expect(record.body.usage).toMatchObject({ currentPeriodCost: 0, isExceeded: false });
    expect(record.body.usage.periodStart).toBe(now.toISOString());
    const res = await execute(tenant, workflowId, { async: true });
    expect(res.status).toBe(202);
    expect(res.body.limits.usage.currentPeriodCost).toBe(0);
  } finally {
    now = new Date(Math.max(saved.getTime(), Date.now()));
  }
});

it('pools the spend of a team plan under the organization, for personal and workspace keys', async () => {
  const { tenant, workflowId } = await tenantWithWorkflow('team');
  const mate = await addPerson(svc.admin, tenant, { permission: 'write' });
  const wsKey = await svc.admin.keys.create.mutate({
    type: 'workspace',
    workspaceId: tenant.workspace.id,
    name: 'ci',
  });
  expect((await execute(tenant, workflowId)).status).toBe(200);
  expect((await execute(tenant, workflowId, { key: mate.key })).status).toBe(200);
  expect((await execute(tenant, workflowId, { key: wsKey.key })).status).toBe(200);
  for (const key of [tenant.key, mate.key, wsKey.key]) {
    const record = await usageLimits(key);
    expect(record.body.usage).toMatchObject({ currentPeriodCost: 0.015, limit: 40, plan: 'team' });
    expect(record.body.rateLimit.sync).toMatchObject({ requestsPerMinute: 300, remaining: 597 });
    expect(record.body.storage.limitBytes).toBe(500_000_000_000);
  }
});

it('bills a free-plan member of a team organization to the best plan they belong to', async () => {
  const { tenant } = await tenantWithWorkflow('team');
  const own = await createTenant(svc.admin);
  await svc.admin.members.add.mutate({ orgId: tenant.org.id, userId: own.user.id, role: 'member' });
  const record = await usageLimits(own.key);
  expect(record.body.usage.plan).toBe('team');
});

it('answers 401 without a valid key', async () => {
  expect((await svc.call('GET', '/api/users/me/usage-limits')).status).toBe(401);
  const res = await usageLimits('sk-service-unknownkeyunknownkey');
  expect(res.status).toBe(401);
  expect(res.body).toEqual({ error: expect.any(String) });
});
