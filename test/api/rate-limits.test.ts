// Rate limits through the public API: token buckets per billed subject, sync and async apart and
// the /api/v1 bucket beside them; exact under concurrency (also across two API processes), refilled
// by an injected clock, following plan and quota changes at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi } from '../../api/start.ts';
import { createLogger } from '../../logger.ts';
import {
  addPerson,
  createTenant,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';
import { deployWorkflow } from '../helpers/workflows.ts';

let svc: TestService;
let now = new Date('2026-03-10T12:00:00.000Z');
const clock = () => now;
const advance = (ms: number) => {
  now = new Date(now.getTime() + ms);
};

beforeAll(async () => {
  svc = await startTestService({}, { runner: true, clock });
});
afterAll(() => svc.close());

const ECHO = { blocks: [{ id: 'r', type: 'response', data: { ok: true } }] };

/** A tenant with a deployed workflow, and its async (and optionally sync) bucket shrunk. */
async function tenantWithLimits(limits: Record<string, unknown> = {}, plan?: 'free' | 'team') {
  const tenant = await createTenant(svc.admin, plan ? { plan } : {});
  const workflowId = await deployWorkflow(svc.admin, tenant.workspace.id, ECHO);
  if (Object.keys(limits).length) await svc.admin.quotas.set.mutate({ orgId: tenant.org.id, ...limits });
  return { tenant, workflowId };
}

const execute = (t: Tenant, workflowId: string, mode: 'sync' | 'async', key = t.key) =>
  svc.call('POST', `/api/workflows/${workflowId}/execute`, {
    key,
    body: { inputs: {}, ...(mode === 'async' ? { async: true } : {}) },
  });

const executionCount = async (workflowId: string) =>
  Number(
    (
      await svc.db.query<{ n: string }>('select count(*) as n from executions where workflow_id = $1', [
        workflowId,
      ])
    )[0]?.n,
  );

describe('execution buckets', () => {
  it('passes exactly as many of a concurrent burst as the bucket holds, and refuses the rest with 429', async () => {
    const { tenant, workflowId } = await tenantWithLimits({ async: { requestsPerMinute: 60, maxBurst: 5 } });
    const answers = await Promise.all(Array.from({ length: 12 }, () => execute(tenant, workflowId, 'async')));
    const passed = answers.filter((r) => r.status === 202);
    const refused = answers.filter((r) => r.status === 429);
    expect(passed).toHaveLength(5);
    expect(refused).toHaveLength(7);
    for (const r of refused) {
      expect(r.body).toEqual({ error: expect.stringContaining('Rate limit exceeded for async executions') });
      // One token a second at 60 per minute, and the bucket is empty.
      expect(r.headers.get('Retry-After')).toBe('1');
      expect(r.headers.get('X-RateLimit-Remaining')).toBe('0');
      expect(r.headers.get('X-RateLimit-Limit')).toBe('60');
    }
    expect(passed.map((r) => Number(r.headers.get('X-RateLimit-Remaining'))).sort()).toEqual([0, 1, 2, 3, 4]);
    // A refused request leaves nothing behind: no execution, no audit entry.
    expect(await executionCount(workflowId)).toBe(5);
    const audits = await svc.db.query(
      `select 1 from audit_logs where action = 'workflow.execute' and resource_id = $1`,
      [workflowId],
    );
    expect(audits).toHaveLength(5);
  });

  it('refills with time, one token per 60/rate seconds, never above maxBurst', async () => {
    const { tenant, workflowId } = await tenantWithLimits({ async: { requestsPerMinute: 60, maxBurst: 3 } });
    for (let i = 0; i < 3; i++) expect((await execute(tenant, workflowId, 'async')).status).toBe(202);
    expect((await execute(tenant, workflowId, 'async')).status).toBe(429);
    advance(999);
    expect((await execute(tenant, workflowId, 'async')).status).toBe(429);
    advance(1);
    const refilled = await execute(tenant, workflowId, 'async');
    expect(refilled.status).toBe(202);
    expect(refilled.body.limits.workflowExecutionRateLimit.async.remaining).toBe(0);
    expect((await execute(tenant, workflowId, 'async')).status).toBe(429);
    // An idle hour fills the bucket to its capacity, not to 3,600 tokens.
    advance(3_600_000);
    const answers = await Promise.all(Array.from({ length: 5 }, () => execute(tenant, workflowId, 'async')));
    expect(answers.filter((r) => r.status === 202)).toHaveLength(3);
  });

  it('keeps sync and async buckets apart, and reports both in the limits object', async () => {
    const { tenant, workflowId } = await tenantWithLimits({
      async: { requestsPerMinute: 60, maxBurst: 2 },
      sync: { requestsPerMinute: 30, maxBurst: 4 },
    });
    for (let i = 0; i < 2; i++) expect((await execute(tenant, workflowId, 'async')).status).toBe(202);
    expect((await execute(tenant, workflowId, 'async')).status).toBe(429);
    const sync = await execute(tenant, workflowId, 'sync');
    expect(sync.status).toBe(200);
    expect(sync.body.output).toEqual({ ok: true });
    expect(sync.headers.get('X-RateLimit-Limit')).toBe('30');
    expect(sync.headers.get('X-RateLimit-Remaining')).toBe('3');
    const { sync: s, async: a } = sync.body.limits.workflowExecutionRateLimit;
    expect(s).toEqual({ requestsPerMinute: 30, maxBurst: 4, remaining: 3, resetAt: expect.any(String) });
    // One sync token refills in 2 s; the async bucket (two tokens at 1/s) is full again in 2 s.
    expect(Date.parse(s.resetAt) - now.getTime()).toBe(2000);
    expect(a).toEqual({ requestsPerMinute: 60, maxBurst: 2, remaining: 0, resetAt: expect.any(String) });
    expect(Date.parse(a.resetAt) - now.getTime()).toBe(2000);
    // Reading the async bucket for the limits object took nothing from it.
    expect((await execute(tenant, workflowId, 'async')).status).toBe(429);
  });

  it('bills free-plan members apart and pools team-plan members under the organization', async () => {
    const free = await tenantWithLimits({ async: { requestsPerMinute: 60, maxBurst: 2 } });
    const freeMate = await addPerson(svc.admin, free.tenant, { permission: 'write' });
    for (let i = 0; i < 2; i++)
      expect((await execute(free.tenant, free.workflowId, 'async')).status).toBe(202);
    expect((await execute(free.tenant, free.workflowId, 'async')).status).toBe(429);
    expect((await execute(free.tenant, free.workflowId, 'async', freeMate.key)).status).toBe(202);

    const team = await tenantWithLimits({ async: { requestsPerMinute: 60, maxBurst: 2 } }, 'team');
    const teamMate = await addPerson(svc.admin, team.tenant, { permission: 'write' });
    expect((await execute(team.tenant, team.workflowId, 'async')).status).toBe(202);
    expect((await execute(team.tenant, team.workflowId, 'async', teamMate.key)).status).toBe(202);
    expect((await execute(team.tenant, team.workflowId, 'async', teamMate.key)).status).toBe(429);
    expect((await execute(team.tenant, team.workflowId, 'async')).status).toBe(429);
  });

  it('bills a workspace key to the workspace owner', async () => {
    const { tenant, workflowId } = await tenantWithLimits({ async: { requestsPerMinute: 60, maxBurst: 2 } });
    const wsKey = await svc.admin.keys.create.mutate({
      type: 'workspace',
      workspaceId: tenant.workspace.id,
      name: 'ci',
    });
    expect((await execute(tenant, workflowId, 'async', wsKey.key)).status).toBe(202);
    expect((await execute(tenant, workflowId, 'async')).status).toBe(202);
    expect((await execute(tenant, workflowId, 'async', wsKey.key)).status).toBe(429);
  });

  it('applies a plan change and a quota change to the next request', async () => {
    const { tenant, workflowId } = await tenantWithLimits();
    const first = await execute(tenant, workflowId, 'async');
    expect(first.body.limits.workflowExecutionRateLimit.async).toMatchObject({
      requestsPerMinute: 200,
      maxBurst: 400,
      remaining: 399,
    });
    expect(first.body.limits.usage).toMatchObject({ plan: 'free', limit: 5 });
    await svc.admin.orgs.setPlan.mutate({ orgId: tenant.org.id, plan: 'team' });
    // Team plans bill the organization: a fresh bucket at the team rates.
    const upgraded = await execute(tenant, workflowId, 'async');
    expect(upgraded.body.limits.workflowExecutionRateLimit.async).toMatchObject({
      requestsPerMinute: 2500,
      maxBurst: 5000,
      remaining: 4999,
    });
    expect(upgraded.body.limits.usage).toMatchObject({ plan: 'team', limit: 40 });
    await svc.admin.quotas.set.mutate({
      orgId: tenant.org.id,
      async: { requestsPerMinute: 10, maxBurst: 1 },
    });
    // The bucket holds what it held, but never more than the new capacity.
    const capped = await execute(tenant, workflowId, 'async');
    expect(capped.status).toBe(202);
    expect(capped.body.limits.workflowExecutionRateLimit.async).toMatchObject({
      requestsPerMinute: 10,
      maxBurst: 1,
      remaining: 0,
    });
    expect((await execute(tenant, workflowId, 'async')).status).toBe(429);
  });

  it('takes no token for a request refused for bad input', async () => {
    const { tenant } = await tenantWithLimits({ async: { requestsPerMinute: 60, maxBurst: 2 } });
    const strict = await deployWorkflow(svc.admin, tenant.workspace.id, {
      inputs: { n: { type: 'number', required: true } },
      blocks: [{ id: 'r', type: 'response', data: '<start.n>' }],
    });
    for (let i = 0; i < 3; i++) {
      const bad = await svc.call('POST', `/api/workflows/${strict}/execute`, {
        key: tenant.key,
        body: { inputs: { n: 'x' }, async: true },
      });
      expect(bad.status).toBe(400);
    }
    const good = await svc.call('POST', `/api/workflows/${strict}/execute`, {
      key: tenant.key,
      body: { inputs: { n: 1 }, async: true },
    });
    expect(good.status).toBe(202);
    expect(good.body.limits.workflowExecutionRateLimit.async.remaining).toBe(1);
  });

  it('is exact across two API processes drawing from one bucket', async () => {
    const { tenant, workflowId } = await tenantWithLimits({ async: { requestsPerMinute: 60, maxBurst: 7 } });
    const other = await startApi({
      db: svc.db,
      config: svc.config,
      log: createLogger('silent'),
      queue: svc.queue,
      clock,
    });
    try {
      const viaOther = async () =>
        await other.app.request(`/api/workflows/${workflowId}/execute`, {
          method: 'POST',
          headers: { 'X-API-Key': tenant.key, 'Content-Type': 'application/json' },
          body: JSON.stringify({ inputs: {}, async: true }),
        });
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          i % 2
            ? viaOther().then((r) => r.status)
            : execute(tenant, workflowId, 'async').then((r) => r.status),
        ),
      );
      expect(answers.filter((s) => s === 202)).toHaveLength(7);
      expect(answers.filter((s) => s === 429)).toHaveLength(13);
      expect(await executionCount(workflowId)).toBe(7);
    } finally {
      await other.close();
    }
  });
});

describe('the /api/v1 bucket', () => {
  it('limits /api/v1 requests apart from executions, with headers on every answer', async () => {
    const { tenant, workflowId } = await tenantWithLimits({ api: { requestsPerMinute: 120, maxBurst: 2 } });
    const list = () =>
      svc.call('GET', '/api/v1/audit-logs', { key: tenant.key, query: { workspaceId: tenant.workspace.id } });
    const first = await list();
    // A free plan may not read audit logs: the 403 still counts and still carries the headers.
    expect(first.status).toBe(403);
    expect(first.headers.get('X-RateLimit-Limit')).toBe('120');
    expect(first.headers.get('X-RateLimit-Remaining')).toBe('1');
    expect(Number(first.headers.get('X-RateLimit-Reset'))).toBe(Math.ceil((now.getTime() + 500) / 1000));
    expect((await list()).status).toBe(403);
    const limited = await list();
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: expect.stringContaining('Rate limit exceeded') });
    expect(limited.headers.get('Retry-After')).toBe('1');
    // Executions and job polls do not draw from it; polls show it.
    const run = await execute(tenant, workflowId, 'async');
    expect(run.status).toBe(202);
    const poll = await svc.call('GET', `/api/jobs/${run.body.taskId}`, { key: tenant.key });
    expect(poll.status).toBe(200);
    expect(poll.headers.get('X-RateLimit-Remaining')).toBe('0');
    advance(500);
    expect((await list()).status).toBe(403);
  });

  it('answers an invalid request after taking its token, and an empty bucket before judging the input', async () => {
    // A request is validated (and its workspace access read) beside the take, but its refusal is
    // answered after it, where it always was: an invalid request counts, and 429 comes before 400.
    const { tenant } = await tenantWithLimits({ api: { requestsPerMinute: 120, maxBurst: 2 } }, 'team');
    const create = (schema: unknown) =>
      svc.call('POST', '/api/v1/tables', {
        key: tenant.key,
        body: { workspaceId: tenant.workspace.id, name: 'people', schema },
      });
    const invalid = await create({ columns: [{ name: 'n', type: 'no-such-type' }] });
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get('X-RateLimit-Remaining')).toBe('1');
    const made = await create({ columns: [{ name: 'n', type: 'number' }] });
    expect(made.status).toBe(200);
    expect(made.headers.get('X-RateLimit-Remaining')).toBe('0');
    const limited = await create({ columns: [{ name: 'n', type: 'no-such-type' }] });
    expect(limited.status).toBe(429);
    const malformed = await svc.app.request('/api/v1/tables', {
      method: 'POST',
      headers: { 'X-API-Key': tenant.key, 'Content-Type': 'application/json' },
      body: '{"workspaceId": ',
    });
    expect(malformed.status).toBe(429);
    // Only the valid request wrote anything.
    advance(1_000);
    const tables = await svc.call('GET', '/api/v1/tables', {
      key: tenant.key,
      query: { workspaceId: tenant.workspace.id },
    });
    expect(tables.body.data.tables.map((t: { name: string }) => t.name)).toEqual(['people']);
  });

  it('sends no rate-limit headers to an unauthenticated request', async () => {
    const res = await svc.call('GET', '/api/v1/audit-logs', { key: 'sk-service-nope' });
    expect(res.status).toBe(401);
    expect(res.headers.get('X-RateLimit-Limit')).toBeNull();
  });
});
