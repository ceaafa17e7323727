// GET /api/v1/audit-logs: who may read it, which entries it returns, its filters and its paging, and
// that the actions of the foundation leave (only) the entries they should.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditLogEntry as Entry } from '../../db/audit-logs.ts';
import {
  addPerson,
  createTenant,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';

type Query = Record<string, string | number | boolean | undefined>;

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.close());

const auditLogs = (key: string | undefined, query: Query) =>
  svc.call('GET', '/api/v1/audit-logs', { ...(key !== undefined ? { key } : {}), query });

/** One page that must succeed. */
async function page(key: string, query: Query): Promise<{ data: Entry[]; nextCursor: string | null }> {
  const res = await auditLogs(key, query);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** Every entry of a listing, following nextCursor to the end. */
async function everything(key: string, query: Query, limit = 100): Promise<Entry[]> {
  const all: Entry[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 1000; i++) {
    const p = await page(key, { ...query, limit, ...(cursor ? { cursor } : {}) });
    all.push(...p.data);
    if (!p.nextCursor) return all;
    cursor = p.nextCursor;
  }
  throw new Error('paging did not end');
}

/** A 400 whose details name the given field. */
/** Another organization's workspace, or none at all: the same 404, which tells nothing apart. */
function expectNoWorkspace(res: { status: number; body: unknown }) {
  expect(res.status, JSON.stringify(res.body)).toBe(404);
  expect(res.body).toEqual({ error: 'Workspace not found' });
}

function expectInvalid(
  res: { status: number; body: { error?: unknown; details?: unknown } },
  path: string[],
) {
  expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(400);
  expect(typeof res.body.error).toBe('string');
  expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
}

function expectError(res: { status: number; body: unknown }, status: number) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toEqual({ error: expect.any(String) });
}

const shiftMs = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString();
const dayOf = (iso: string, deltaDays = 0) =>
  new Date(Date.parse(`${iso.slice(0, 10)}T00:00:00.000Z`) + deltaDays * 86_400_000)
    .toISOString()
    .slice(0, 10);
/** The entries of `all` created in [from, to], both inclusive (ISO strings in Z form compare as text). */
const within = (all: Entry[], from: string, to: string) =>
  all.filter((e) => e.createdAt >= from && e.createdAt <= to);
const ids = (entries: Entry[]) => entries.map((e) => e.id);

const enterprise = () => createTenant(svc.admin, { plan: 'enterprise' });

describe('access', () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await enterprise();
  });

  it('lets the owner of an enterprise organization read, answering {data, nextCursor} only', async () => {
    const res = await auditLogs(t.key, { workspaceId: t.workspace.id });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['data', 'nextCursor']);
    expect(res.body.data.length).toBeGreaterThan(0);
    expect(res.body.nextCursor).toBeNull();
  });

  it('lets an organization admin read, even without a permission on the workspace', async () => {
    const admin = await addPerson(svc.admin, t, { role: 'admin' });
    expect((await auditLogs(admin.key, { workspaceId: t.workspace.id })).status).toBe(200);
  });

  it('refuses an organization member (403), even one who administers the workspace', async () => {
    const member = await addPerson(svc.admin, t, { role: 'member', permission: 'admin' });
    expectError(await auditLogs(member.key, { workspaceId: t.workspace.id }), 403);
  });

  it('refuses a member promoted and demoted according to their current role', async () => {
    const p = await addPerson(svc.admin, t, { role: 'member' });
    expectError(await auditLogs(p.key, { workspaceId: t.workspace.id }), 403);
    await svc.admin.members.setRole.mutate({ orgId: t.org.id, userId: p.user.id, role: 'owner' });
    expect((await auditLogs(p.key, { workspaceId: t.workspace.id })).status).toBe(200);
    await svc.admin.members.setRole.mutate({ orgId: t.org.id, userId: p.user.id, role: 'member' });
    expectError(await auditLogs(p.key, { workspaceId: t.workspace.id }), 403);
  });

  it('needs the enterprise plan: 403 on free, pro and team, 200 once set to enterprise', async () => {
    const free = await createTenant(svc.admin); // plan free
    expectError(await auditLogs(free.key, { workspaceId: free.workspace.id }), 403);
    for (const plan of ['pro', 'team'] as const) {
      await svc.admin.orgs.setPlan.mutate({ orgId: free.org.id, plan });
      expectError(await auditLogs(free.key, { workspaceId: free.workspace.id }), 403);
    }
    await svc.admin.orgs.setPlan.mutate({ orgId: free.org.id, plan: 'enterprise' });
    expect((await auditLogs(free.key, { workspaceId: free.workspace.id })).status).toBe(200);
    await svc.admin.orgs.setPlan.mutate({ orgId: free.org.id, plan: 'free' });
    expectError(await auditLogs(free.key, { workspaceId: free.workspace.id }), 403);
  });

  it('refuses workspace keys (403), in their own workspace and in another', async () => {
    const other = await svc.admin.workspaces.create.mutate({
      orgId: t.org.id,
      ownerId: t.user.id,
      name: 'Other',
      skipDefaultWorkflow: true,
    });
    const { key } = await svc.admin.keys.create.mutate({
      type: 'workspace',
      workspaceId: t.workspace.id,
      name: 'automation',
    });
    expectError(await auditLogs(key, { workspaceId: t.workspace.id }), 403);
    expectError(await auditLogs(key, { workspaceId: other.id }), 403);
  });

  it('refuses a personal key in a workspace that disallows personal keys (403)', async () => {
    const ws = await svc.admin.workspaces.create.mutate({
      orgId: t.org.id,
      ownerId: t.user.id,
      name: 'Locked',
      skipDefaultWorkflow: true,
    });
    expect((await auditLogs(t.key, { workspaceId: ws.id })).status).toBe(200);
    await svc.admin.workspaces.update.mutate({ workspaceId: ws.id, allowPersonalApiKeys: false });
    expectError(await auditLogs(t.key, { workspaceId: ws.id }), 403);
    // Only that workspace is closed to personal keys.
    expect((await auditLogs(t.key, { workspaceId: t.workspace.id })).status).toBe(200);
    await svc.admin.workspaces.update.mutate({ workspaceId: ws.id, allowPersonalApiKeys: true });
    expect((await auditLogs(t.key, { workspaceId: ws.id })).status).toBe(200);
  });

  it('answers 401 {error} without a key, with an unknown key, and with a revoked key', async () => {
    const q = { workspaceId: t.workspace.id };
    expectError(await auditLogs(undefined, q), 401);
    expectError(await auditLogs('', q), 401);
    expectError(await auditLogs('not-a-key', q), 401);
    expectError(await auditLogs(`sk-service-${'A'.repeat(32)}`, q), 401);
    const { key, id } = await svc.admin.keys.create.mutate({
      type: 'personal',
      userId: t.user.id,
      name: 'temp',
    });
    expect((await auditLogs(key, q)).status).toBe(200);
    await svc.admin.keys.revoke.mutate({ id });
    expectError(await auditLogs(key, q), 401);
  });

  it('checks the key before the query: 401 even for an invalid query', async () => {
    expectError(await auditLogs(undefined, { workspaceId: 'nope', limit: 0 }), 401);
  });

  it('treats a former admin as an outsider (404: no such workspace for them), though their key still authenticates', async () => {
    const p = await addPerson(svc.admin, t, { role: 'admin' });
    expect((await auditLogs(p.key, { workspaceId: t.workspace.id })).status).toBe(200);
    await svc.admin.members.remove.mutate({ orgId: t.org.id, userId: p.user.id });
    expectNoWorkspace(await auditLogs(p.key, { workspaceId: t.workspace.id }));
  });
});

describe('workspaceId', () => {
  let t: Tenant;
  let stranger: Tenant;
  beforeAll(async () => {
    t = await enterprise();
    stranger = await enterprise();
  });

  it('is required and must be a uuid (400 with details)', async () => {
    expectInvalid(await auditLogs(t.key, {}), ['workspaceId']);
    expectInvalid(await auditLogs(t.key, { workspaceId: 'main' }), ['workspaceId']);
    expectInvalid(await auditLogs(t.key, { workspaceId: `${t.workspace.id}x` }), ['workspaceId']);
  });

  it("must name a workspace of the caller's organization: another organization's is a 404, as one that does not exist", async () => {
    expectNoWorkspace(await auditLogs(t.key, { workspaceId: stranger.workspace.id }));
    expectNoWorkspace(await auditLogs(t.key, { workspaceId: randomUUID() }));
    // and the other way round
    expectNoWorkspace(await auditLogs(stranger.key, { workspaceId: t.workspace.id }));
  });

  it('refuses a parameter given twice', async () => {
    const res = await svc.call(
      'GET',
      `/api/v1/audit-logs?workspaceId=${t.workspace.id}&workspaceId=${stranger.workspace.id}`,
      { key: t.key },
    );
    expectInvalid(res, ['workspaceId']);
  });
});

describe('returned entries', () => {
  let t: Tenant;
  let sibling: { id: string };
  let stranger: Tenant;
  let all: Entry[];
  beforeAll(async () => {
    t = await enterprise();
    stranger = await enterprise();
    // Entries in another workspace of the same organization, and in another organization.
    sibling = await svc.admin.workspaces.create.mutate({
      orgId: t.org.id,
      ownerId: t.user.id,
      name: 'Sibling',
    });
    await svc.admin.workspaces.update.mutate({ workspaceId: sibling.id, name: 'Sibling 2' });
    await svc.admin.keys.create.mutate({ type: 'workspace', workspaceId: sibling.id, name: 'sibling key' });
    const created = await svc.call('POST', '/api/v1/workspaces', { key: t.key, body: { name: 'Via API' } });
    expect(created.status).toBe(200);
    await addPerson(svc.admin, stranger, { role: 'admin', permission: 'write' });
    await svc.admin.workspaces.update.mutate({ workspaceId: stranger.workspace.id, name: 'Theirs' });
    // Entries of this workspace, and of the organization (no workspace).
    await svc.admin.workspaces.update.mutate({ workspaceId: t.workspace.id, color: '#112233' });
    await addPerson(svc.admin, t, { role: 'member', permission: 'read' });
    all = await everything(t.key, { workspaceId: t.workspace.id });
  });

  it('holds the workspace entries and the organization-level ones, nothing else', () => {
    expect(all.length).toBeGreaterThan(0);
    for (const e of all) expect([t.workspace.id, null]).toContain(e.workspaceId);
    const actions = all.map((e) => `${e.action}:${e.workspaceId === null ? 'org' : 'ws'}`);
    expect(actions).toEqual(
      expect.arrayContaining([
        'organization.created:org',
        'member.invited:org',
        'api_key.created:org',
        'workspace.created:ws',
        'workspace.updated:ws',
        'permission.granted:ws',
      ]),
    );
  });

  it('leaves out the entries of another workspace of the same organization', async () => {
    const mentionsSibling = (e: Entry) => e.workspaceId === sibling.id || e.resourceId === sibling.id;
    expect(all.filter(mentionsSibling)).toEqual([]);
    // They exist: the sibling workspace's own listing has them, with this workspace's entries left out.
    const theirs = await everything(t.key, { workspaceId: sibling.id });
    expect(theirs.filter((e) => e.workspaceId === sibling.id).map((e) => e.action)).toEqual(
      expect.arrayContaining([
        'workspace.created',
        'workflow.created',
        'workspace.updated',
        'api_key.created',
      ]),
    );
    expect(theirs.filter((e) => e.workspaceId === t.workspace.id)).toEqual([]);
    // The organization-level entries are the same in both.
    const orgLevel = (es: Entry[]) => ids(es.filter((e) => e.workspaceId === null));
    expect(orgLevel(theirs)).toEqual(orgLevel(all));
  });

  it('never holds entries of another organization', async () => {
    const theirs = await everything(stranger.key, { workspaceId: stranger.workspace.id });
    expect(theirs.length).toBeGreaterThan(0);
    const mine = new Set(ids(all));
    expect(theirs.filter((e) => mine.has(e.id))).toEqual([]);
    const strangerIds = new Set([stranger.workspace.id, stranger.org.id, stranger.user.id]);
    expect(all.filter((e) => strangerIds.has(e.resourceId ?? ''))).toEqual([]);
  });

  it('shows a person in two organizations only the entries of the workspace organization', async () => {
    const a = await enterprise();
    const b = await enterprise();
    const both = await addPerson(svc.admin, a, { role: 'admin' });
    await svc.admin.members.add.mutate({ orgId: b.org.id, userId: both.user.id, role: 'member' });
    // One key, created while a member of both: an api_key.created in each organization.
    const key = await svc.admin.keys.create.mutate({ type: 'personal', userId: both.user.id, name: 'two' });
    const inA = await everything(both.key, { workspaceId: a.workspace.id, resourceId: key.id });
    const inB = await everything(b.key, { workspaceId: b.workspace.id, resourceId: key.id });
    expect(inA).toHaveLength(1);
    expect(inB).toHaveLength(1);
    expect(inA[0]?.id).not.toBe(inB[0]?.id);
    // Admin in a, plain member in b: the role that counts is the one in the workspace's organization.
    expectError(await auditLogs(both.key, { workspaceId: b.workspace.id }), 403);
    await svc.admin.members.setRole.mutate({ orgId: b.org.id, userId: both.user.id, role: 'admin' });
    const bAll = await everything(both.key, { workspaceId: b.workspace.id });
    const aIds = new Set(ids(await everything(a.key, { workspaceId: a.workspace.id })));
    expect(bAll.filter((e) => aIds.has(e.id))).toEqual([]);
    expect(bAll.map((e) => e.resourceId)).not.toContain(a.org.id);
    expect(bAll.map((e) => e.resourceId)).toContain(b.org.id);
  });

  it('shapes each entry as documented, newest first', () => {
    for (const e of all) {
      expect(Object.keys(e).sort()).toEqual(
        [
          'action',
          'actorEmail',
          'actorId',
          'actorName',
          'createdAt',
          'id',
          'metadata',
          'resourceId',
          'resourceType',
          'workspaceId',
        ].sort(),
      );
      expect(e.action).toMatch(/^[a-z_]+\.[a-z_]+$/);
      expect(typeof e.id).toBe('string');
      expect(typeof e.resourceType).toBe('string');
      expect(typeof e.metadata).toBe('object');
      expect(new Date(e.createdAt).toISOString()).toBe(e.createdAt);
    }
    const order = [...all].sort((a, b) =>
      a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1,
    );
    expect(ids(all)).toEqual(ids(order));
  });
});

describe('actions recorded', () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await enterprise();
  });

  const find = async (workspaceId: string, query: Query) => everything(t.key, { workspaceId, ...query });

  it('workspace.created and the default workflow.created, by the user of the personal key', async () => {
    const res = await svc.call('POST', '/api/v1/workspaces', { key: t.key, body: { name: 'Sales' } });
    expect(res.status).toBe(200);
    const ws = res.body.data.workspace;
    const actor = { actorId: t.user.id, actorName: t.user.name, actorEmail: t.user.email };
    const entries = await find(ws.id, {});
    const created = entries.filter((e) => e.action === 'workspace.created');
    expect(created).toEqual([
      expect.objectContaining({
        ...actor,
        resourceType: 'workspace',
        resourceId: ws.id,
        workspaceId: ws.id,
        metadata: { name: 'Sales', slug: ws.slug },
      }),
    ]);
    const workflow = entries.filter((e) => e.action === 'workflow.created');
    expect(workflow).toEqual([
      expect.objectContaining({ ...actor, resourceType: 'workflow', workspaceId: ws.id }),
    ]);
    expect(workflow[0]?.resourceId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('no workflow.created when skipDefaultWorkflow is true', async () => {
    const res = await svc.call('POST', '/api/v1/workspaces', {
      key: t.key,
      body: { name: 'Bare', skipDefaultWorkflow: true },
    });
    expect(res.status).toBe(200);
    const entries = await find(res.body.data.workspace.id, {});
    expect(entries.filter((e) => e.workspaceId !== null).map((e) => e.action)).toEqual(['workspace.created']);
  });

  it('member.invited and member.removed, by the admin plane, at organization level', async () => {
    const p = await addPerson(svc.admin, t, { role: 'admin' });
    const admin = { actorId: null, actorName: 'admin plane', actorEmail: null };
    const member = { ...admin, resourceType: 'member', resourceId: p.user.id, workspaceId: null };
    expect(await find(t.workspace.id, { action: 'member.invited', resourceId: p.user.id })).toEqual([
      expect.objectContaining({ ...member, metadata: { role: 'admin' } }),
    ]);
    await svc.admin.members.remove.mutate({ orgId: t.org.id, userId: p.user.id });
    expect(await find(t.workspace.id, { action: 'member.removed', resourceId: p.user.id })).toEqual([
      expect.objectContaining({ ...member, action: 'member.removed' }),
    ]);
  });

  it('api_key.created and api_key.revoked, for personal keys (organization level) and workspace keys', async () => {
    const personal = await svc.admin.keys.create.mutate({ type: 'personal', userId: t.user.id, name: 'ci' });
    const wsKey = await svc.admin.keys.create.mutate({
      type: 'workspace',
      workspaceId: t.workspace.id,
      name: 'bot',
    });
    await svc.admin.keys.revoke.mutate({ id: personal.id });
    await svc.admin.keys.revoke.mutate({ id: wsKey.id });
    const base = { actorId: null, actorName: 'admin plane', resourceType: 'api_key' };
    // A creation and its revocation may share a millisecond: compare them sorted by action.
    const about = async (id: string) =>
      (await find(t.workspace.id, { resourceId: id })).sort((a, b) => a.action.localeCompare(b.action));
    expect(await about(personal.id)).toEqual([
      expect.objectContaining({
        ...base,
        action: 'api_key.created',
        resourceId: personal.id,
        workspaceId: null,
        metadata: { type: 'personal', name: 'ci', userId: t.user.id },
      }),
      expect.objectContaining({
        ...base,
        action: 'api_key.revoked',
        resourceId: personal.id,
        workspaceId: null,
      }),
    ]);
    expect(await about(wsKey.id)).toEqual([
      expect.objectContaining({
        ...base,
        action: 'api_key.created',
        workspaceId: t.workspace.id,
        metadata: { type: 'workspace', name: 'bot', userId: null },
      }),
      expect.objectContaining({ ...base, action: 'api_key.revoked', workspaceId: t.workspace.id }),
    ]);
    // The key value never reaches the log.
    const text = JSON.stringify(await find(t.workspace.id, {}));
    expect(text).not.toContain(personal.key);
    expect(text).not.toContain(wsKey.key);
  });

  it('permission.granted and workspace.updated, by the admin plane', async () => {
    const p = await addPerson(svc.admin, t, { role: 'member', permission: 'write' });
    await svc.admin.workspaces.update.mutate({ workspaceId: t.workspace.id, name: 'Renamed' });
    const admin = { actorId: null, actorName: 'admin plane', actorEmail: null };
    const ws = { resourceType: 'workspace', resourceId: t.workspace.id, workspaceId: t.workspace.id };
    const granted = await find(t.workspace.id, { action: 'permission.granted' });
    expect(granted.filter((e) => e.metadata.userId === p.user.id)).toEqual([
      expect.objectContaining({ ...admin, ...ws, metadata: { userId: p.user.id, permission: 'write' } }),
    ]);
    const [updated] = await find(t.workspace.id, { action: 'workspace.updated' });
    expect(updated).toEqual(
      expect.objectContaining({ ...admin, ...ws, metadata: { changes: { name: 'Renamed' } } }),
    );
  });
});

describe('atomicity: a failed action leaves no entry', () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await enterprise();
  });

  const snapshot = () => everything(t.key, { workspaceId: t.workspace.id });

  it('POST /api/v1/workspaces with an invalid colour: 400, no workspace, no entry', async () => {
    const before = await snapshot();
    const workspacesBefore = await svc.admin.workspaces.list.query({ orgId: t.org.id });
    const res = await svc.call('POST', '/api/v1/workspaces', {
      key: t.key,
      body: { name: 'Bad', color: 'red' },
    });
    expectInvalid(res, ['color']);
    expect(await svc.admin.workspaces.list.query({ orgId: t.org.id })).toEqual(workspacesBefore);
    expect(await snapshot()).toEqual(before);
  });

  it('admin members.add of an existing member: CONFLICT and no new member.invited', async () => {
    const p = await addPerson(svc.admin, t, { role: 'member' });
    const before = await snapshot();
    await expect(
      svc.admin.members.add.mutate({ orgId: t.org.id, userId: p.user.id, role: 'admin' }),
    ).rejects.toMatchObject({ data: { code: 'CONFLICT' } });
    expect(await snapshot()).toEqual(before);
    expect(
      await everything(t.key, {
        workspaceId: t.workspace.id,
        action: 'member.invited',
        resourceId: p.user.id,
      }),
    ).toHaveLength(1);
  });

  it('removing the last owner: CONFLICT and no member.removed', async () => {
    const before = await snapshot();
    await expect(
      svc.admin.members.remove.mutate({ orgId: t.org.id, userId: t.user.id }),
    ).rejects.toMatchObject({
      data: { code: 'CONFLICT' },
    });
    expect(await snapshot()).toEqual(before);
  });

  it('archiving an archived workspace: CONFLICT and a single workspace.archived', async () => {
    const ws = await svc.admin.workspaces.create.mutate({
      orgId: t.org.id,
      ownerId: t.user.id,
      name: 'Old',
      skipDefaultWorkflow: true,
    });
    await svc.admin.workspaces.archive.mutate({ workspaceId: ws.id });
    const before = await everything(t.key, { workspaceId: ws.id });
    await expect(svc.admin.workspaces.archive.mutate({ workspaceId: ws.id })).rejects.toMatchObject({
      data: { code: 'CONFLICT' },
    });
    const after = await everything(t.key, { workspaceId: ws.id });
    expect(after).toEqual(before);
    expect(after.filter((e) => e.action === 'workspace.archived')).toHaveLength(1);
  });
});

describe('actorId and includeDeparted', () => {
  let t: Tenant;
  let stranger: Tenant;
  let leaver: Awaited<ReturnType<typeof addPerson>>;
  let stayer: Awaited<ReturnType<typeof addPerson>>;
  let leaverWs: string;
  beforeAll(async () => {
    t = await enterprise();
    stranger = await enterprise();
    leaver = await addPerson(svc.admin, t, { role: 'admin' });
    stayer = await addPerson(svc.admin, t, { role: 'admin' });
    // Creating a workspace is the one action a person takes through the API: the leaver creates one
    // (workspace.created, workflow.created as the leaver), the admin plane adds entries there, then
    // the leaver leaves the organization.
    const res = await svc.call('POST', '/api/v1/workspaces', { key: leaver.key, body: { name: 'Leaver' } });
    expect(res.status).toBe(200);
    leaverWs = res.body.data.workspace.id;
    await svc.admin.workspaces.grant.mutate({
      workspaceId: leaverWs,
      userId: stayer.user.id,
      permission: 'read',
    });
    await svc.admin.members.remove.mutate({ orgId: t.org.id, userId: leaver.user.id });
  });

  it('filters by an active member', async () => {
    const mine = await everything(t.key, { workspaceId: leaverWs, actorId: stayer.user.id });
    // The stayer did nothing: only the admin plane acted for them.
    expect(mine).toEqual([]);
    const owner = await everything(t.key, { workspaceId: t.workspace.id, actorId: t.user.id });
    expect(owner).toEqual([]);
    const created = await svc.call('POST', '/api/v1/workspaces', {
      key: stayer.key,
      body: { name: 'Stayer', skipDefaultWorkflow: true },
    });
    const ws = created.body.data.workspace.id;
    const theirs = await everything(t.key, { workspaceId: ws, actorId: stayer.user.id });
    expect(theirs.map((e) => [e.action, e.actorId])).toEqual([['workspace.created', stayer.user.id]]);
    const all = await everything(t.key, { workspaceId: ws });
    expect(all.length).toBeGreaterThan(theirs.length);
  });

  it('must be a uuid of an organization member: 400 otherwise', async () => {
    const q = { workspaceId: t.workspace.id };
    expectInvalid(await auditLogs(t.key, { ...q, actorId: 'someone' }), ['actorId']);
    expectInvalid(await auditLogs(t.key, { ...q, actorId: randomUUID() }), ['actorId']);
    expectInvalid(await auditLogs(t.key, { ...q, actorId: stranger.user.id }), ['actorId']);
    expectInvalid(await auditLogs(t.key, { ...q, actorId: stranger.user.id, includeDeparted: true }), [
      'actorId',
    ]);
  });

  it('a departed member is a 400 unless includeDeparted=true', async () => {
    const q = { workspaceId: leaverWs, actorId: leaver.user.id };
    expectInvalid(await auditLogs(t.key, q), ['actorId']);
    expectInvalid(await auditLogs(t.key, { ...q, includeDeparted: false }), ['actorId']);
    const theirs = await everything(t.key, { ...q, includeDeparted: true });
    expect(theirs.map((e) => e.action).sort()).toEqual(['workflow.created', 'workspace.created']);
    for (const e of theirs) {
      expect(e).toMatchObject({
        actorId: leaver.user.id,
        actorName: leaver.user.name,
        actorEmail: leaver.user.email,
      });
    }
  });

  it('hides entries of departed members by default, never those of the admin plane', async () => {
    const shown = await everything(t.key, { workspaceId: leaverWs });
    const all = await everything(t.key, { workspaceId: leaverWs, includeDeparted: true });
    expect(shown.filter((e) => e.actorId === leaver.user.id)).toEqual([]);
    expect(all.filter((e) => e.actorId === leaver.user.id)).toHaveLength(2);
    expect(ids(shown)).toEqual(ids(all.filter((e) => e.actorId !== leaver.user.id)));
    // The admin plane's entries (actorId null) are there, among them the leaver's removal itself.
    expect(shown.filter((e) => e.actorId === null).map((e) => e.action)).toEqual(
      expect.arrayContaining(['member.removed', 'member.invited', 'permission.granted']),
    );
    // includeDeparted=false is the default spelled out.
    expect(ids(await everything(t.key, { workspaceId: leaverWs, includeDeparted: false }))).toEqual(
      ids(shown),
    );
  });

  it('shows a returning member entries again', async () => {
    const returning = await addPerson(svc.admin, t, { role: 'admin' });
    const res = await svc.call('POST', '/api/v1/workspaces', {
      key: returning.key,
      body: { name: 'Back', skipDefaultWorkflow: true },
    });
    const ws = res.body.data.workspace.id;
    await svc.admin.members.remove.mutate({ orgId: t.org.id, userId: returning.user.id });
    const q = { workspaceId: ws, actorId: returning.user.id };
    expectInvalid(await auditLogs(t.key, q), ['actorId']);
    await svc.admin.members.add.mutate({ orgId: t.org.id, userId: returning.user.id, role: 'member' });
    expect((await everything(t.key, q)).map((e) => e.action)).toEqual(['workspace.created']);
  });

  it('includeDeparted takes true or false only', async () => {
    for (const v of ['yes', '1', 'TRUE', '']) {
      expectInvalid(await auditLogs(t.key, { workspaceId: t.workspace.id, includeDeparted: v }), [
        'includeDeparted',
      ]);
    }
  });
});

describe('filters, dates and paging', () => {
  let t: Tenant;
  let all: Entry[];
  beforeAll(async () => {
    t = await enterprise();
    // Noise in another workspace of the organization, created through the API.
    for (let i = 0; i < 5; i++) {
      const res = await svc.call('POST', '/api/v1/workspaces', { key: t.key, body: { name: `Other ${i}` } });
      expect(res.status).toBe(200);
    }
    // Entries of this workspace and of the organization, interleaved: 4 from createTenant, 50 here.
    for (let i = 0; i < 25; i++) {
      await svc.admin.workspaces.update.mutate({ workspaceId: t.workspace.id, name: `Main ${i}` });
      await svc.admin.keys.create.mutate({ type: 'personal', userId: t.user.id, name: `key ${i}` });
    }
    all = await everything(t.key, { workspaceId: t.workspace.id });
    expect(all.length).toBe(54);
  });

  it('filters by action, resourceType and resourceId', async () => {
    const q = { workspaceId: t.workspace.id };
    const updated = await everything(t.key, { ...q, action: 'workspace.updated' });
    expect(updated).toHaveLength(25);
    expect(ids(updated)).toEqual(ids(all.filter((e) => e.action === 'workspace.updated')));

    const keys = await everything(t.key, { ...q, resourceType: 'api_key' });
    expect(keys).toHaveLength(26);
    expect(ids(keys)).toEqual(ids(all.filter((e) => e.resourceType === 'api_key')));

    const ws = await everything(t.key, { ...q, resourceId: t.workspace.id });
    expect(ids(ws)).toEqual(ids(all.filter((e) => e.resourceId === t.workspace.id)));
    expect(ws).toHaveLength(26);

    const both = await everything(t.key, { ...q, resourceType: 'workspace', action: 'workspace.created' });
    expect(both.map((e) => e.resourceId)).toEqual([t.workspace.id]);

    expect(await everything(t.key, { ...q, action: 'workflow.deployed' })).toEqual([]);
    expect(await everything(t.key, { ...q, resourceId: randomUUID() })).toEqual([]);
    expectInvalid(await auditLogs(t.key, { ...q, action: '' }), ['action']);
  });

  it('limit defaults to 50 and takes 1 to 100', async () => {
    const q = { workspaceId: t.workspace.id };
    const first = await page(t.key, q);
    expect(ids(first.data)).toEqual(ids(all.slice(0, 50)));
    expect(first.nextCursor).toEqual(expect.any(String));
    expect((await page(t.key, { ...q, limit: 1 })).data).toHaveLength(1);
    expect((await page(t.key, { ...q, limit: 100 })).data).toHaveLength(54);
    for (const limit of [0, 101, -1, 1.5, 'abc', '']) {
      expectInvalid(await auditLogs(t.key, { ...q, limit }), ['limit']);
    }
  });

  it('nextCursor is null exactly on the last page', async () => {
    const q = { workspaceId: t.workspace.id };
    expect((await page(t.key, { ...q, limit: 54 })).nextCursor).toBeNull();
    const first = await page(t.key, { ...q, limit: 53 });
    expect(first.nextCursor).toEqual(expect.any(String));
    const last = await page(t.key, { ...q, limit: 53, cursor: first.nextCursor as string });
    expect(ids(last.data)).toEqual([all[53]?.id]);
    expect(last.nextCursor).toBeNull();
  });

  it('pages through every entry exactly once, newest first', async () => {
    for (const limit of [7, 1]) {
      const q = { workspaceId: t.workspace.id, limit };
      const seen: Entry[] = [];
      let cursor: string | undefined;
      let pages = 0;
      for (;;) {
        const p = await page(t.key, { ...q, ...(cursor ? { cursor } : {}) });
        pages++;
        seen.push(...p.data);
        if (!p.nextCursor) break;
        expect(p.data).toHaveLength(limit);
        cursor = p.nextCursor;
      }
      expect(pages).toBe(Math.ceil(54 / limit));
      expect(ids(seen)).toEqual(ids(all));
      expect(new Set(ids(seen)).size).toBe(54);
    }
  });

  it('keeps filters across pages', async () => {
    const updated = await everything(t.key, { workspaceId: t.workspace.id, action: 'workspace.updated' }, 4);
    expect(ids(updated)).toEqual(ids(all.filter((e) => e.action === 'workspace.updated')));
  });

  it('pages stay stable while new entries arrive', async () => {
    const t2 = await enterprise();
    for (let i = 0; i < 6; i++)
      await svc.admin.workspaces.update.mutate({ workspaceId: t2.workspace.id, name: `n${i}` });
    const q = { workspaceId: t2.workspace.id };
    const before = await everything(t2.key, q);
    const first = await page(t2.key, { ...q, limit: 3 });
    await svc.admin.workspaces.update.mutate({ workspaceId: t2.workspace.id, name: 'later' });
    const rest = await everything(t2.key, { ...q, cursor: first.nextCursor as string });
    expect([...ids(first.data), ...ids(rest)]).toEqual(ids(before));
    const after = await everything(t2.key, q);
    expect(after).toHaveLength(before.length + 1);
    expect(after[0]?.metadata).toEqual({ changes: { name: 'later' } });
  });

  it('refuses a cursor it did not issue (400 on cursor)', async () => {
    const q = { workspaceId: t.workspace.id };
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const good = all[10] as Entry;
    const cursors = [
      'garbage!!',
      'eyJ0IjoxfQ', // {"t":1}
      b64({ t: good.createdAt }),
      b64({ t: 'tomorrow', id: good.id }),
      b64({ t: good.createdAt, id: 'not-a-uuid' }),
      b64({ t: good.createdAt, id: '-'.repeat(36) }),
      b64({ t: '1', id: good.id }),
      b64({ t: '0000-01-01T00:00:00.000Z', id: good.id }),
      b64({ t: '2024-02-30T00:00:00.000Z', id: good.id }),
      b64({ t: good.createdAt, id: good.id.toUpperCase() }),
      b64([good.createdAt, good.id]),
      'x'.repeat(501),
    ];
    for (const cursor of cursors) expectInvalid(await auditLogs(t.key, { ...q, cursor }), ['cursor']);
    // A well-formed position is accepted: the entries strictly after it.
    const p = await page(t.key, { ...q, cursor: b64({ t: good.createdAt, id: good.id }) });
    expect(ids(p.data)).toEqual(ids(all.slice(11)));
  });

  describe('dates', () => {
    const range = (query: Query) => everything(t.key, { workspaceId: t.workspace.id, ...query });

    it('startDate and endDate are inclusive, to the millisecond', async () => {
      const x = all[20] as Entry;
      const y = all[40] as Entry;
      const exact = await range({ startDate: x.createdAt, endDate: x.createdAt });
      expect(ids(exact)).toContain(x.id);
      expect(ids(exact)).toEqual(ids(within(all, x.createdAt, x.createdAt)));

      const span = await range({ startDate: y.createdAt, endDate: x.createdAt });
      expect(ids(span)).toEqual(ids(within(all, y.createdAt, x.createdAt)));
      expect(ids(span)).toEqual(expect.arrayContaining([x.id, y.id]));

      const after = await range({ startDate: shiftMs(x.createdAt, 1) });
      expect(ids(after)).not.toContain(x.id);
      expect(ids(after)).toEqual(ids(within(all, shiftMs(x.createdAt, 1), '9999')));
      const before = await range({ endDate: shiftMs(x.createdAt, -1) });
      expect(ids(before)).not.toContain(x.id);
      expect(ids(before)).toEqual(ids(within(all, '0000', shiftMs(x.createdAt, -1))));
      expect(ids(await range({ startDate: x.createdAt }))).toEqual(ids(within(all, x.createdAt, '9999')));
      expect(ids(await range({ endDate: x.createdAt }))).toEqual(ids(within(all, '0000', x.createdAt)));
    });

    it('a bare date as endDate means the end of that day; as startDate its beginning', async () => {
      const x = all[20] as Entry;
      const day = dayOf(x.createdAt);
      expect(ids(await range({ endDate: day }))).toEqual(ids(within(all, '0000', `${day}T23:59:59.999Z`)));
      expect(ids(await range({ endDate: day }))).toContain(x.id);
      expect(ids(await range({ endDate: dayOf(x.createdAt, -1) }))).not.toContain(x.id);
      expect(ids(await range({ startDate: day, endDate: day }))).toEqual(
        ids(within(all, `${day}T00:00:00.000Z`, `${day}T23:59:59.999Z`)),
      );
      expect(ids(await range({ startDate: day }))).toContain(x.id);
      expect(await range({ startDate: dayOf(x.createdAt, 1) })).toEqual([]);
    });

    it('reads offsets, and a date-time without one as UTC', async () => {
      const x = all[30] as Entry;
      const expected = ids(within(all, x.createdAt, x.createdAt));
      // The same instant, written 5h30 ahead of UTC.
      const ahead = new Date(Date.parse(x.createdAt) + 5.5 * 3_600_000).toISOString().replace('Z', '+05:30');
      expect(ids(await range({ startDate: ahead, endDate: ahead }))).toEqual(expected);
      // No offset: UTC, whatever the server's time zone.
      const bare = x.createdAt.replace('Z', '');
      const tz = process.env.TZ;
      process.env.TZ = 'Asia/Kolkata';
      try {
        expect(ids(await range({ startDate: bare, endDate: bare }))).toEqual(expected);
      } finally {
        if (tz === undefined) delete process.env.TZ;
        else process.env.TZ = tz;
      }
    });

    it('startDate after endDate is a 400', async () => {
      const x = all[20] as Entry;
      const q = { workspaceId: t.workspace.id };
      expectInvalid(
        await auditLogs(t.key, { ...q, startDate: shiftMs(x.createdAt, 1), endDate: x.createdAt }),
        ['endDate'],
      );
      expectInvalid(
        await auditLogs(t.key, { ...q, startDate: dayOf(x.createdAt, 1), endDate: dayOf(x.createdAt) }),
        ['endDate'],
      );
    });

    it('an unparseable or impossible date is a 400', async () => {
      const q = { workspaceId: t.workspace.id };
      const bad = [
        'yesterday',
        '2024',
        '01/02/2024',
        '2024-1-2',
        '2024-13-01',
        '2024-02-30',
        '2023-02-29',
        '2024-04-31',
        '2024-01-01T25:00:00Z',
        '2024-01-01T10:61Z',
        '2024-01-01 10:00:00',
        '0000-01-01',
        '0001-01-01T00:00:00+01:00',
        '9999-12-31T23:00:00-05:00',
      ];
      for (const date of bad) {
        expectInvalid(await auditLogs(t.key, { ...q, startDate: date }), ['startDate']);
        expectInvalid(await auditLogs(t.key, { ...q, endDate: date }), ['endDate']);
      }
      // Leap day and the far edges of the calendar are fine.
      for (const date of ['2024-02-29', '0001-01-01', '9999-12-31', '9999-12-31T23:59:59.999Z']) {
        expect((await auditLogs(t.key, { ...q, startDate: date })).status).toBe(200);
        expect((await auditLogs(t.key, { ...q, endDate: date })).status).toBe(200);
      }
    });
  });
});
