import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';

let svc: TestService;
let tenant: Tenant;

beforeAll(async () => {
  svc = await startTestService();
  tenant = await createTenant(svc.admin);
});
afterAll(() => svc.close());

describe('POST /api/v1/workspaces', () => {
  it('creates a workspace in the key holder organization, with the caller as admin', async () => {
    const res = await svc.call('POST', '/api/v1/workspaces', {
      key: tenant.key,
      body: { name: 'Marketing', color: '#12abEF' },
    });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    const ws = res.body.data.workspace;
    expect(ws).toMatchObject({
      name: 'Marketing',
      slug: 'marketing',
      color: '#12ABEF',
      ownerId: tenant.user.id,
      organizationId: tenant.org.id,
      billedAccountUserId: tenant.user.id,
      allowPersonalApiKeys: true,
      role: 'admin',
      archivedAt: null,
    });
    expect(Object.keys(ws).sort()).toEqual(
      [
        'allowPersonalApiKeys',
        'archivedAt',
        'billedAccountUserId',
        'color',
        'createdAt',
        'id',
        'name',
        'organizationId',
        'ownerId',
        'role',
        'slug',
        'updatedAt',
      ].sort(),
    );
    expect(new Date(ws.createdAt).toISOString()).toBe(ws.createdAt);
  });
});
