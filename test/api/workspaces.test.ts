import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addPerson,
  createTenant,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';

let svc: TestService;
let tenant: Tenant;

beforeAll(async () => {
  svc = await startTestService();
  tenant = await createTenant(svc.admin, { plan: 'enterprise' });
});
afterAll(() => svc.close());

const create = (body: unknown, key = tenant.key) => svc.call('POST', '/api/v1/workspaces', { key, body });

async function auditActions(workspaceId: string) {
  const res = await svc.call('GET', '/api/v1/audit-logs', {
    key: tenant.key,
    query: { workspaceId, limit: 100 },
  });
  expect(res.status).toBe(200);
  return res.body.data.filter((e: { workspaceId: string }) => e.workspaceId === workspaceId);
}

describe('POST /api/v1/workspaces', () => {
  it('creates a workspace in the key holder organization, with the caller as admin', async () => {
    const res = await create({ name: 'Marketing', color: '#12abEF' });
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
    expect(ws.updatedAt).toBe(ws.createdAt);
  });

  it('gives the caller admin permission there: they can act in the new workspace', async () => {
    const { body } = await create({ name: 'Acting' });
    const res = await svc.call('GET', '/api/v1/audit-logs', {
      key: tenant.key,
      query: { workspaceId: body.data.workspace.id },
    });
    expect(res.status).toBe(200);
  });

  it('creates the default agent workflow unless skipDefaultWorkflow is true', async () => {
    const withDefault = (await create({ name: 'With default' })).body.data.workspace;
    const without = (await create({ name: 'Without default', skipDefaultWorkflow: true })).body.data
      .workspace;
    const withActions = (await auditActions(withDefault.id)).map((e: { action: string }) => e.action);
    const withoutActions = (await auditActions(without.id)).map((e: { action: string }) => e.action);
    expect(withActions.sort()).toEqual(['workflow.created', 'workspace.created']);
    expect(withoutActions).toEqual(['workspace.created']);
    const [row] = await svc.db.query<{ n: number }>(
      'select count(*)::int as n from workflows where workspace_id = $1',
      [withDefault.id],
    );
    expect(row?.n).toBe(1);
  });

  it('records workspace.created with the caller as actor, in the same transaction', async () => {
    const ws = (await create({ name: 'Audited', skipDefaultWorkflow: true })).body.data.workspace;
    const [entry] = await auditActions(ws.id);
    expect(entry).toMatchObject({
      action: 'workspace.created',
      resourceType: 'workspace',
      resourceId: ws.id,
      actorId: tenant.user.id,
      actorName: tenant.user.name,
      actorEmail: tenant.user.email,
    });
  });

  it('derives unique slugs within the organization, also for racing creations of one name', async () => {
    const first = (await create({ name: 'Sales Team!' })).body.data.workspace;
    const second = (await create({ name: 'sales   team' })).body.data.workspace;
    expect(first.slug).toBe('sales-team');
    expect(second.slug).toBe('sales-team-2');
    const racing = await Promise.all(
      Array.from({ length: 5 }, () => create({ name: 'Race', skipDefaultWorkflow: true })),
    );
    expect(racing.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const slugs = racing.map((r) => r.body.data.workspace.slug).sort();
    expect(new Set(slugs).size).toBe(5);
    expect(slugs).toContain('race');
  });

  it('gives a name without letters or digits a usable slug', async () => {
    const ws = (await create({ name: '🚀🚀' })).body.data.workspace;
    expect(ws.slug).toMatch(/^workspace(-\d+)?$/);
  });

  it('lets the same slug exist in two organizations', async () => {
    const other = await createTenant(svc.admin);
    const a = (await create({ name: 'Shared name' })).body.data.workspace;
    const b = (await create({ name: 'Shared name' }, other.key)).body.data.workspace;
    expect(a.slug).toBe(b.slug);
    expect(b.organizationId).toBe(other.org.id);
  });

  it('lets a plain member create a workspace, of which they become admin', async () => {
    const person = await addPerson(svc.admin, tenant, { role: 'member' });
    const res = await create({ name: 'Mine' }, person.key);
    expect(res.status).toBe(200);
    expect(res.body.data.workspace).toMatchObject({
      ownerId: person.user.id,
      role: 'admin',
      organizationId: tenant.org.id,
    });
  });

  it.each([
    [{}, ['name']],
    [{ name: '   ' }, ['name']],
    [{ name: 'x'.repeat(101) }, ['name']],
    [{ name: 7 }, ['name']],
    [{ name: 'ok', color: '#12345' }, ['color']],
    [{ name: 'ok', color: '123456' }, ['color']],
    [{ name: 'ok', color: '#GGGGGG' }, ['color']],
    [{ name: 'ok', color: 'red' }, ['color']],
    [{ name: 'ok', skipDefaultWorkflow: 'yes' }, ['skipDefaultWorkflow']],
    [{ name: 'ok', organizationId: 'nope' }, ['organizationId']],
  ])('refuses %j with 400 naming %j, creating nothing', async (body, paths) => {
    const before = await svc.admin.workspaces.list.query({ orgId: tenant.org.id });
    const res = await create(body);
    expect(res.status).toBe(400);
    expect(res.body.details.map((d: { path: string[] }) => d.path.join('.'))).toEqual(paths);
    expect(await svc.admin.workspaces.list.query({ orgId: tenant.org.id })).toHaveLength(before.length);
  });

  it('refuses a body that is not an object', async () => {
    for (const body of [[], 'name', 42, null]) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
  });

  it('refuses a user who has left every organization (403)', async () => {
    const person = await addPerson(svc.admin, tenant, { role: 'member' });
    await svc.admin.members.remove.mutate({ orgId: tenant.org.id, userId: person.user.id });
    const res = await create({ name: 'Orphan' }, person.key);
    expect(res.status).toBe(403);
  });

  it('creates in the named organization for a user who belongs to several', async () => {
    const other = await createTenant(svc.admin);
    await svc.admin.members.add.mutate({ orgId: other.org.id, userId: tenant.user.id, role: 'member' });
    const home = (await create({ name: 'Home' })).body.data.workspace;
    const away = (await create({ name: 'Away', organizationId: other.org.id })).body.data.workspace;
    expect(home.organizationId).toBe(tenant.org.id);
    expect(away.organizationId).toBe(other.org.id);
  });
});
