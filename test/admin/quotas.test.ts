// Admin plane: per-organization quota overrides laid over the plan's limits.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLANS } from '../../db/plans.ts';
import { upload } from '../api/files-helpers.ts';
import {
  addPerson,
  adminError,
  createTenant,
  createWorkspace,
  startTestService,
  type TestService,
} from '../helpers/service.ts';

const GB = 1_000_000_000;
const NO_SUCH_ORG = '00000000-0000-4000-8000-000000000000';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.close());

const newOrg = (plan: 'free' | 'pro' | 'team' | 'enterprise' = 'free') =>
  svc.admin.orgs.create.mutate({ name: `Quota ${plan}`, plan });

describe('quotas.get', () => {
  it("shows the plan's limits when nothing is overridden", async () => {
    const org = await newOrg('free');
    const q = await svc.admin.quotas.get.query({ orgId: org.id });
    expect(q).toEqual({ organizationId: org.id, plan: 'free', overrides: {}, limits: PLANS.free });
    // Buckets hold twice the per-minute rate, as the design states.
    for (const bucket of [q.limits.sync, q.limits.async, q.limits.api]) {
      expect(bucket.maxBurst).toBe(2 * bucket.requestsPerMinute);
    }
  });

  it('follows the plan when it changes', async () => {
    const org = await newOrg('free');
    await svc.admin.orgs.setPlan.mutate({ orgId: org.id, plan: 'team' });
    const q = await svc.admin.quotas.get.query({ orgId: org.id });
    expect(q).toMatchObject({ plan: 'team', limits: PLANS.team });
  });

  it('refuses an unknown organization with NOT_FOUND', async () => {
    expect(await adminError(svc.admin.quotas.get.query({ orgId: NO_SUCH_ORG }))).toMatchObject({
      code: 'NOT_FOUND',
      httpStatus: 404,
    });
  });
});

describe('quotas.set', () => {
  it('overrides the given fields and leaves the others on the plan', async () => {
    const org = await newOrg('pro');
    const overrides = {
      sync: { requestsPerMinute: 100, maxBurst: 150 },
      usageLimit: 123.45,
      storageLimitBytes: 7 * GB,
      maxRowsPerTable: 42,
      maxTables: 3,
    };
    const answer = await svc.admin.quotas.set.mutate({ orgId: org.id, ...overrides });
    expect(answer).toEqual({
      organizationId: org.id,
      plan: 'pro',
      overrides,
      limits: { ...PLANS.pro, ...overrides },
    });
    expect(answer.limits.async).toEqual(PLANS.pro.async);
    expect(answer.limits.api).toEqual(PLANS.pro.api);
    expect(await svc.admin.quotas.get.query({ orgId: org.id })).toEqual(answer);
  });

  it('merges with earlier overrides; null returns a field to the plan', async () => {
    const org = await newOrg('free');
    await svc.admin.quotas.set.mutate({ orgId: org.id, usageLimit: 99, maxTables: 9 });
    const merged = await svc.admin.quotas.set.mutate({
      orgId: org.id,
      async: { requestsPerMinute: 7, maxBurst: 7 },
    });
    expect(merged.overrides).toEqual({
      usageLimit: 99,
      maxTables: 9,
      async: { requestsPerMinute: 7, maxBurst: 7 },
    });

    const back = await svc.admin.quotas.set.mutate({ orgId: org.id, usageLimit: null, async: null });
    expect(back.overrides).toEqual({ maxTables: 9 });
    expect(back.limits).toEqual({ ...PLANS.free, maxTables: 9 });

    // Overrides outlive a plan change; the rest follows the new plan.
    await svc.admin.orgs.setPlan.mutate({ orgId: org.id, plan: 'enterprise' });
    expect((await svc.admin.quotas.get.query({ orgId: org.id })).limits).toEqual({
      ...PLANS.enterprise,
      maxTables: 9,
    });

    // Null on a field that was never overridden is harmless.
    const same = await svc.admin.quotas.set.mutate({ orgId: org.id, maxRowsPerTable: null });
    expect(same.overrides).toEqual({ maxTables: 9 });
  });

  it('replaces a rate as a whole', async () => {
    const org = await newOrg('free');
    await svc.admin.quotas.set.mutate({ orgId: org.id, api: { requestsPerMinute: 1000, maxBurst: 2000 } });
    const q = await svc.admin.quotas.set.mutate({
      orgId: org.id,
      api: { requestsPerMinute: 5, maxBurst: 6 },
    });
    expect(q.limits.api).toEqual({ requestsPerMinute: 5, maxBurst: 6 });
  });

  it('refuses an unknown field with BAD_REQUEST and changes nothing', async () => {
    const org = await newOrg('free');
    await svc.admin.quotas.set.mutate({ orgId: org.id, maxTables: 4 });
    const err = await adminError(
      svc.admin.quotas.set.mutate({ orgId: org.id, maxTables: 8, maxWorkspaces: 3 } as never),
    );
    expect(err).toMatchObject({ code: 'BAD_REQUEST', httpStatus: 400 });
    expect(err.details).toEqual([expect.objectContaining({ code: 'unrecognized_keys' })]);
    expect(err.details?.[0]?.message).toContain('maxWorkspaces');
    expect((await svc.admin.quotas.get.query({ orgId: org.id })).overrides).toEqual({ maxTables: 4 });
  });

  it('refuses values out of range with BAD_REQUEST naming the field', async () => {
    const org = await newOrg('free');
    const cases: [Record<string, unknown>, (string | number)[]][] = [
      [{ maxTables: 0 }, ['maxTables']],
      [{ maxRowsPerTable: 1.5 }, ['maxRowsPerTable']],
      [{ usageLimit: -1 }, ['usageLimit']],
      [{ storageLimitBytes: -1 }, ['storageLimitBytes']],
      [{ sync: { requestsPerMinute: 10 } }, ['sync', 'maxBurst']],
      [{ sync: { requestsPerMinute: 0, maxBurst: 1 } }, ['sync', 'requestsPerMinute']],
      [{ api: 100 }, ['api']],
    ];
    for (const [change, path] of cases) {
      const err = await adminError(
        svc.admin.quotas.set.mutate({ orgId: org.id, ...change } as Parameters<
          typeof svc.admin.quotas.set.mutate
        >[0]),
      );
      expect(err.code, JSON.stringify(change)).toBe('BAD_REQUEST');
      expect(err.details?.[0]?.path, JSON.stringify(change)).toEqual(path);
    }
    expect((await svc.admin.quotas.get.query({ orgId: org.id })).overrides).toEqual({});
  });

  it('refuses an unknown organization with NOT_FOUND', async () => {
    expect(await adminError(svc.admin.quotas.set.mutate({ orgId: NO_SUCH_ORG, maxTables: 2 }))).toMatchObject(
      {
        code: 'NOT_FOUND',
        httpStatus: 404,
      },
    );
  });

  it('records quota.updated in the audit log, by the admin plane', async () => {
    const tenant = await createTenant(svc.admin, { plan: 'enterprise' });
    await svc.admin.quotas.set.mutate({ orgId: tenant.org.id, maxTables: 11, usageLimit: null });
    const res = await svc.call('GET', '/api/v1/audit-logs', {
      key: tenant.key,
      query: { workspaceId: tenant.workspace.id, action: 'quota.updated' },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    expect(res.body.data[0]).toMatchObject({
      action: 'quota.updated',
      actorId: null,
      actorName: 'admin plane',
      resourceType: 'organization',
      resourceId: tenant.org.id,
      workspaceId: null,
      metadata: { changes: { maxTables: 11, usageLimit: null } },
    });
    // A refused change leaves no entry.
    await adminError(svc.admin.quotas.set.mutate({ orgId: tenant.org.id, maxTables: 0 }));
    const again = await svc.call('GET', '/api/v1/audit-logs', {
      key: tenant.key,
      query: { workspaceId: tenant.workspace.id, action: 'quota.updated' },
    });
    expect(again.body.data).toHaveLength(1);
  });
});

describe('quotas.usage', () => {
  const put = (key: string, workspaceId: string, bytes: number) =>
    upload(svc, key, { workspaceId, name: `f${Math.random()}.bin`, content: Buffer.alloc(bytes, 1) });

  it('pools a team organization under one subject: spend and storage against the overridden limits', async () => {
    const tenant = await createTenant(svc.admin, { plan: 'team' });
    const second = await createWorkspace(svc.admin, tenant);
    expect((await put(tenant.key, tenant.workspace.id, 1000)).status).toBe(200);
    expect((await put(tenant.key, second, 234)).status).toBe(200);
    await svc.admin.quotas.set.mutate({ orgId: tenant.org.id, storageLimitBytes: 5000 });

    const usage = await svc.admin.quotas.usage.query({ organizationId: tenant.org.id });
    const now = new Date();
    const subject = {
      subject: `org:${tenant.org.id}`,
      user: null,
      workspaceIds: [tenant.workspace.id, second],
      spend: { used: 0, limit: PLANS.team.usageLimit, isExceeded: false },
      storage: { usedBytes: 1234, limitBytes: 5000 },
      rateLimit: {
        sync: { requestsPerMinute: 300, maxBurst: 600, remaining: 600, resetAt: expect.any(String) },
        async: { requestsPerMinute: 2500, maxBurst: 5000, remaining: 5000, resetAt: expect.any(String) },
      },
    };
    expect(usage).toEqual({
      organizationId: tenant.org.id,
      plan: 'team',
      overrides: { storageLimitBytes: 5000 },
      limits: { ...PLANS.team, storageLimitBytes: 5000 },
      pooled: true,
      billingEnabled: true,
      period: {
        start: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString(),
        end: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
      },
      spend: subject.spend,
      storage: subject.storage,
      subjects: [subject],
    });
    // Read, never drawn from: no execution bucket was made for the subject.
    const buckets = await svc.db.query('select key from rate_limit_buckets where key = any($1::text[])', [
      [`org:${tenant.org.id}:sync`, `org:${tenant.org.id}:async`],
    ]);
    expect(buckets).toEqual([]);
  });

  it('lists one subject per billed user on free and pro: the owners first, then each workspace’s billed user', async () => {
    const tenant = await createTenant(svc.admin, { plan: 'pro' });
    const person = await addPerson(svc.admin, tenant);
    const theirs = await svc.admin.workspaces.create.mutate({
      orgId: tenant.org.id,
      ownerId: person.user.id,
      name: 'Theirs',
      skipDefaultWorkflow: true,
    });
    expect((await put(tenant.key, tenant.workspace.id, 100)).status).toBe(200);
    expect((await put(person.key, theirs.id, 500)).status).toBe(200);

    const usage = await svc.admin.quotas.usage.query({ organizationId: tenant.org.id });
    expect(usage).toMatchObject({ plan: 'pro', pooled: false });
    expect(usage.subjects).toMatchObject([
      {
        subject: `user:${tenant.user.id}`,
        user: { id: tenant.user.id, name: tenant.user.name, email: tenant.user.email },
        workspaceIds: [tenant.workspace.id],
        spend: { used: 0, limit: PLANS.pro.usageLimit, isExceeded: false },
        storage: { usedBytes: 100, limitBytes: PLANS.pro.storageLimitBytes },
      },
      {
        subject: `user:${person.user.id}`,
        user: { id: person.user.id },
        workspaceIds: [theirs.id],
        storage: { usedBytes: 500, limitBytes: PLANS.pro.storageLimitBytes },
      },
    ]);
    // The headline bars are the first owner's.
    expect(usage.storage).toEqual(usage.subjects[0]?.storage);
    expect(usage.spend).toEqual(usage.subjects[0]?.spend);
  });

  it('answers an organization with nobody in it with no subjects and empty bars', async () => {
    const org = await newOrg('free');
    const usage = await svc.admin.quotas.usage.query({ organizationId: org.id });
    expect(usage).toMatchObject({
      plan: 'free',
      pooled: false,
      subjects: [],
      spend: { used: 0, limit: PLANS.free.usageLimit, isExceeded: false },
      storage: { usedBytes: 0, limitBytes: PLANS.free.storageLimitBytes },
    });
  });

  it('refuses an unknown organization with NOT_FOUND and a malformed one with BAD_REQUEST', async () => {
    expect(await adminError(svc.admin.quotas.usage.query({ organizationId: NO_SUCH_ORG }))).toMatchObject({
      code: 'NOT_FOUND',
      message: 'Organization not found',
    });
    for (const input of [{ organizationId: 'x' }, {}, { orgId: NO_SUCH_ORG }]) {
      const err = await adminError(
        svc.admin.quotas.usage.query(input as Parameters<typeof svc.admin.quotas.usage.query>[0]),
      );
      expect(err, JSON.stringify(input)).toMatchObject({ code: 'BAD_REQUEST' });
      expect(err.details?.[0]?.path).toEqual(['organizationId']);
    }
  });
});
