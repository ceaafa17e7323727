// Admin plane: organizations, users, members and workspaces, and the rules that keep them consistent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLAN_NAMES } from '../../db/plans.ts';
import {
  addPerson,
  adminError,
  createTenant,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';

let svc: TestService;
let n = 0;
/** A unique e-mail address per call. */
const email = (who = 'user') => `${who}-${++n}@example.com`;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.close());

async function newUser(name = 'Someone') {
  return svc.admin.users.create.mutate({ name, email: email() });
}

/** Permissions rows of a user: the admin plane and the public API have no read of them yet. */
async function permissionsOf(userId: string) {
  return svc.db.query<{ workspace_id: string; permission: string }>(
    'select workspace_id, permission from workspace_permissions where user_id = $1 order by workspace_id',
    [userId],
  );
}

describe('orgs', () => {
  it('creates an organization on the free plan with a slug derived from its name', async () => {
    const org = await svc.admin.orgs.create.mutate({ name: '  Ácme Corp! ' });
    expect(org).toMatchObject({ name: 'Ácme Corp!', slug: 'acme-corp', plan: 'free' });
    expect(org.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(org.createdAt).toISOString()).toBe(org.createdAt);
  });

  it('derives the next free slug when the name is taken', async () => {
    const a = await svc.admin.orgs.create.mutate({ name: 'Globex' });
    const b = await svc.admin.orgs.create.mutate({ name: 'globex' });
    const c = await svc.admin.orgs.create.mutate({ name: 'GLOBEX' });
    expect([a.slug, b.slug, c.slug]).toEqual(['globex', 'globex-2', 'globex-3']);
  });

  it('gives concurrent creations of one name distinct slugs, all of them succeeding', async () => {
    const orgs = await Promise.all(
      Array.from({ length: 5 }, () => svc.admin.orgs.create.mutate({ name: 'Initech' })),
    );
    expect(orgs.map((o) => o.slug).sort()).toEqual([
      'initech',
      'initech-2',
      'initech-3',
      'initech-4',
      'initech-5',
    ]);
  });

  it('takes an explicit slug and plan, and refuses a slug already taken with CONFLICT', async () => {
    const org = await svc.admin.orgs.create.mutate({ name: 'Umbrella', slug: 'umbrella-co', plan: 'team' });
    expect(org).toMatchObject({ slug: 'umbrella-co', plan: 'team' });
    const err = await adminError(svc.admin.orgs.create.mutate({ name: 'Other', slug: 'umbrella-co' }));
    expect(err).toMatchObject({ code: 'CONFLICT', httpStatus: 409 });
    expect(err.message).toContain('umbrella-co');
    // A derived slug steps around an explicit one.
    expect((await svc.admin.orgs.create.mutate({ name: 'Umbrella Co' })).slug).toBe('umbrella-co-2');
  });

  it('refuses an invalid plan, slug or name with BAD_REQUEST and the field issues', async () => {
    const plan = await adminError(svc.admin.orgs.create.mutate({ name: 'Hooli', plan: 'gold' as never }));
    expect(plan).toMatchObject({ code: 'BAD_REQUEST', httpStatus: 400 });
    expect(plan.details).toEqual([expect.objectContaining({ path: ['plan'], code: 'invalid_value' })]);

    for (const slug of ['Hooli', 'hoo li', '-hooli', 'hooli--x', 'x'.repeat(65)]) {
      const err = await adminError(svc.admin.orgs.create.mutate({ name: 'Hooli', slug }));
      expect(err.code, slug).toBe('BAD_REQUEST');
      expect(err.details?.[0]?.path, slug).toEqual(['slug']);
    }
    const name = await adminError(svc.admin.orgs.create.mutate({ name: '   ' }));
    expect(name.details?.[0]?.path).toEqual(['name']);
    const orgs = await svc.admin.orgs.list.query();
    expect(orgs.map((o) => o.name)).not.toContain('Hooli');
  });

  it('refuses text Postgres cannot store (NUL, an unpaired surrogate) in any input with its path, creating nothing', async () => {
    const before = await svc.admin.orgs.list.query();
    for (const bad of ['Hoo\u0000li', 'Hoo\ud800li']) {
      const org = await adminError(svc.admin.orgs.create.mutate({ name: bad }));
      expect(org).toMatchObject({ code: 'BAD_REQUEST', httpStatus: 400 });
      expect(org.details?.[0]?.path).toEqual(['name']);
      const ws = await adminError(
        svc.admin.workspaces.create.mutate({ orgId: before[0]?.id as string, name: bad } as never),
      );
      expect(ws.code).toBe('BAD_REQUEST');
    }
    expect(await svc.admin.orgs.list.query()).toEqual(before);
  });

  it('lists organizations in creation order', async () => {
    const a = await svc.admin.orgs.create.mutate({ name: 'List A' });
    const b = await svc.admin.orgs.create.mutate({ name: 'List B' });
    const orgs = await svc.admin.orgs.list.query();
    expect(orgs).toContainEqual(a);
    expect(orgs).toContainEqual(b);
    expect(orgs.findIndex((o) => o.id === a.id)).toBeLessThan(orgs.findIndex((o) => o.id === b.id));
  });

  it('changes the plan; an unknown organization is NOT_FOUND, an unknown plan BAD_REQUEST', async () => {
    const org = await svc.admin.orgs.create.mutate({ name: 'Planned' });
    for (const plan of PLAN_NAMES) {
      const changed = await svc.admin.orgs.setPlan.mutate({ orgId: org.id, plan });
      expect(changed).toMatchObject({ id: org.id, plan, slug: org.slug });
    }
    const listed = (await svc.admin.orgs.list.query()).find((o) => o.id === org.id);
    expect(listed?.plan).toBe('enterprise');
    expect(
      await adminError(
        svc.admin.orgs.setPlan.mutate({ orgId: '00000000-0000-4000-8000-000000000000', plan: 'pro' }),
      ),
    ).toMatchObject({ code: 'NOT_FOUND', httpStatus: 404 });
    const bad = await adminError(svc.admin.orgs.setPlan.mutate({ orgId: org.id, plan: 'platinum' as never }));
    expect(bad.code).toBe('BAD_REQUEST');
    expect(bad.details?.[0]?.path).toEqual(['plan']);
  });
});

describe('users', () => {
  it('creates and lists users', async () => {
    const user = await svc.admin.users.create.mutate({ name: ' Ada ', email: 'ada@example.com' });
    expect(user).toMatchObject({ name: 'Ada', email: 'ada@example.com' });
    expect(await svc.admin.users.list.query()).toContainEqual(user);
  });

  it('refuses an e-mail address already in use, whatever its case, with CONFLICT', async () => {
    await svc.admin.users.create.mutate({ name: 'Grace', email: 'grace@example.com' });
    for (const again of ['grace@example.com', 'Grace@Example.COM']) {
      const err = await adminError(svc.admin.users.create.mutate({ name: 'Other Grace', email: again }));
      expect(err, again).toMatchObject({ code: 'CONFLICT', httpStatus: 409 });
    }
    const graces = (await svc.admin.users.list.query()).filter((u) => /^grace@/i.test(u.email));
    expect(graces).toHaveLength(1);
  });

  it('refuses a malformed e-mail address or an empty name with BAD_REQUEST', async () => {
    for (const bad of ['not-an-email', 'a@', '@b.co', 'a b@c.co', '']) {
      const err = await adminError(svc.admin.users.create.mutate({ name: 'X', email: bad }));
      expect(err.code, bad).toBe('BAD_REQUEST');
      expect(err.details?.[0]?.path, bad).toEqual(['email']);
    }
    const err = await adminError(svc.admin.users.create.mutate({ name: '', email: email() }));
    expect(err.details?.[0]?.path).toEqual(['name']);
  });
});

describe('members', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await createTenant(svc.admin);
  });

  it('adds a member with a role and lists them', async () => {
    const user = await newUser();
    const member = await svc.admin.members.add.mutate({
      orgId: tenant.org.id,
      userId: user.id,
      role: 'admin',
    });
    expect(member).toMatchObject({
      organizationId: tenant.org.id,
      userId: user.id,
      role: 'admin',
      departedAt: null,
    });
    const members = await svc.admin.members.list.query({ orgId: tenant.org.id });
    expect(members.map((m) => [m.userId, m.role])).toEqual(
      expect.arrayContaining([
        [tenant.user.id, 'owner'],
        [user.id, 'admin'],
      ]),
    );
  });

  it('refuses to add an active member again with CONFLICT', async () => {
    const err = await adminError(
      svc.admin.members.add.mutate({ orgId: tenant.org.id, userId: tenant.user.id, role: 'member' }),
    );
    expect(err).toMatchObject({ code: 'CONFLICT', httpStatus: 409 });
    const members = await svc.admin.members.list.query({ orgId: tenant.org.id });
    expect(members.find((m) => m.userId === tenant.user.id)?.role).toBe('owner');
  });

  it('refuses an unknown organization, user or role', async () => {
    const user = await newUser();
    const nobody = '00000000-0000-4000-8000-000000000000';
    expect(
      await adminError(svc.admin.members.add.mutate({ orgId: nobody, userId: user.id, role: 'member' })),
    ).toMatchObject({ code: 'NOT_FOUND' });
    expect(
      await adminError(
        svc.admin.members.add.mutate({ orgId: tenant.org.id, userId: nobody, role: 'member' }),
      ),
    ).toMatchObject({ code: 'NOT_FOUND' });
    const role = await adminError(
      svc.admin.members.add.mutate({ orgId: tenant.org.id, userId: user.id, role: 'guest' as never }),
    );
    expect(role.code).toBe('BAD_REQUEST');
    expect(role.details?.[0]?.path).toEqual(['role']);
    expect(
      await adminError(svc.admin.members.remove.mutate({ orgId: tenant.org.id, userId: user.id })),
    ).toMatchObject({ code: 'NOT_FOUND' });
    expect(
      await adminError(
        svc.admin.members.setRole.mutate({ orgId: tenant.org.id, userId: user.id, role: 'admin' }),
      ),
    ).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('changes a role', async () => {
    const { user } = await addPerson(svc.admin, tenant);
    const changed = await svc.admin.members.setRole.mutate({
      orgId: tenant.org.id,
      userId: user.id,
      role: 'admin',
    });
    expect(changed).toMatchObject({ userId: user.id, role: 'admin', departedAt: null });
  });

  it('keeps at least one owner: removing or demoting the last one is a CONFLICT', async () => {
    const t = await createTenant(svc.admin);
    const remove = await adminError(svc.admin.members.remove.mutate({ orgId: t.org.id, userId: t.user.id }));
    expect(remove).toMatchObject({ code: 'CONFLICT', httpStatus: 409 });
    expect(remove.message).toMatch(/owner/);
    for (const role of ['admin', 'member'] as const) {
      const demote = await adminError(
        svc.admin.members.setRole.mutate({ orgId: t.org.id, userId: t.user.id, role }),
      );
      expect(demote).toMatchObject({ code: 'CONFLICT', httpStatus: 409 });
    }
    // Setting the owner's role to owner again is no demotion.
    await svc.admin.members.setRole.mutate({ orgId: t.org.id, userId: t.user.id, role: 'owner' });

    // With a second owner, the first may step down, and then the second is the last one.
    const { user: second } = await addPerson(svc.admin, t, { role: 'owner' });
    await svc.admin.members.setRole.mutate({ orgId: t.org.id, userId: t.user.id, role: 'admin' });
    expect(
      (await adminError(svc.admin.members.remove.mutate({ orgId: t.org.id, userId: second.id }))).code,
    ).toBe('CONFLICT');
    // An owner who is not the last may leave.
    await svc.admin.members.setRole.mutate({ orgId: t.org.id, userId: t.user.id, role: 'owner' });
    const left = await svc.admin.members.remove.mutate({ orgId: t.org.id, userId: second.id });
    expect(left.departedAt).not.toBeNull();
    const owners = (await svc.admin.members.list.query({ orgId: t.org.id })).filter(
      (m) => m.role === 'owner' && m.departedAt === null,
    );
    expect(owners.map((m) => m.userId)).toEqual([t.user.id]);
  });

  it('never lets concurrent demotions of the last two owners leave none', async () => {
    const t = await createTenant(svc.admin);
    const { user: second } = await addPerson(svc.admin, t, { role: 'owner' });
    const results = await Promise.allSettled(
      [t.user.id, second.id].map((userId) =>
        svc.admin.members.setRole.mutate({ orgId: t.org.id, userId, role: 'member' }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const owners = (await svc.admin.members.list.query({ orgId: t.org.id })).filter(
      (m) => m.role === 'owner' && m.departedAt === null,
    );
    expect(owners).toHaveLength(1);
  });

  it('removes a member: their workspace permissions go, and their key then acts in no organization', async () => {
    const t = await createTenant(svc.admin);
    const other = await svc.admin.workspaces.create.mutate({
      orgId: t.org.id,
      ownerId: t.user.id,
      name: 'Other',
      skipDefaultWorkflow: true,
    });
    const person = await addPerson(svc.admin, t, { permission: 'write' });
    await svc.admin.workspaces.grant.mutate({
      workspaceId: other.id,
      userId: person.user.id,
      permission: 'read',
    });
    expect(await permissionsOf(person.user.id)).toHaveLength(2);
    const before = await svc.call('POST', '/api/v1/workspaces', { key: person.key, body: { name: 'Mine' } });
    expect(before.status).toBe(200);
    // Creating one made them its admin: three permissions now.
    expect(await permissionsOf(person.user.id)).toHaveLength(3);

    const removed = await svc.admin.members.remove.mutate({ orgId: t.org.id, userId: person.user.id });
    expect(removed).toMatchObject({ userId: person.user.id, organizationId: t.org.id });
    expect(removed.departedAt).not.toBeNull();
    expect(await permissionsOf(person.user.id)).toEqual([]);

    const after = await svc.call('POST', '/api/v1/workspaces', { key: person.key, body: { name: 'Again' } });
    expect(after.status).toBe(403);
    expect(after.body.error).toMatch(/belongs to no organization/);

    // The departed member is still listed (audit history needs them), as departed.
    const listed = (await svc.admin.members.list.query({ orgId: t.org.id })).find(
      (m) => m.userId === person.user.id,
    );
    expect(listed?.departedAt).toBe(removed.departedAt);
    // Removing them twice: they are no longer a member.
    expect(
      (await adminError(svc.admin.members.remove.mutate({ orgId: t.org.id, userId: person.user.id }))).code,
    ).toBe('NOT_FOUND');
  });

  it('brings a departed member back with the new role, but not their old permissions', async () => {
    const t = await createTenant(svc.admin);
    const person = await addPerson(svc.admin, t, { role: 'admin', permission: 'admin' });
    await svc.admin.members.remove.mutate({ orgId: t.org.id, userId: person.user.id });

    const back = await svc.admin.members.add.mutate({
      orgId: t.org.id,
      userId: person.user.id,
      role: 'member',
    });
    expect(back).toMatchObject({ userId: person.user.id, role: 'member', departedAt: null });
    const rows = (await svc.admin.members.list.query({ orgId: t.org.id })).filter(
      (m) => m.userId === person.user.id,
    );
    expect(rows).toHaveLength(1);
    expect(await permissionsOf(person.user.id)).toEqual([]);

    const res = await svc.call('POST', '/api/v1/workspaces', { key: person.key, body: { name: 'Back' } });
    expect(res.status).toBe(200);
    expect(res.body.data.workspace.organizationId).toBe(t.org.id);
  });

  it("leaves a departed member's other organizations alone", async () => {
    const first = await createTenant(svc.admin);
    const second = await createTenant(svc.admin);
    const person = await addPerson(svc.admin, first);
    await svc.admin.members.add.mutate({ orgId: second.org.id, userId: person.user.id, role: 'member' });
    await svc.admin.workspaces.grant.mutate({
      workspaceId: second.workspace.id,
      userId: person.user.id,
      permission: 'read',
    });
    await svc.admin.members.remove.mutate({ orgId: first.org.id, userId: person.user.id });
    expect(await permissionsOf(person.user.id)).toEqual([
      { workspace_id: second.workspace.id, permission: 'read' },
    ]);
    const res = await svc.call('POST', '/api/v1/workspaces', {
      key: person.key,
      body: { name: 'Elsewhere' },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.workspace.organizationId).toBe(second.org.id);
  });
});

describe('workspaces', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await createTenant(svc.admin);
  });

  it('creates a workspace owned by a member, with the default colour and the owner as admin', async () => {
    const ws = await svc.admin.workspaces.create.mutate({
      orgId: tenant.org.id,
      ownerId: tenant.user.id,
      name: 'Research & Development',
    });
    expect(ws).toMatchObject({
      name: 'Research & Development',
      slug: 'research-development',
      color: '#3972F6',
      ownerId: tenant.user.id,
      organizationId: tenant.org.id,
      billedAccountUserId: tenant.user.id,
      allowPersonalApiKeys: true,
      role: 'admin',
      archivedAt: null,
    });
    expect(await permissionsOf(tenant.user.id)).toContainEqual({ workspace_id: ws.id, permission: 'admin' });
  });

  it('refuses an owner who is not an active member with BAD_REQUEST naming ownerId', async () => {
    const outsider = await newUser();
    const err = await adminError(
      svc.admin.workspaces.create.mutate({ orgId: tenant.org.id, ownerId: outsider.id, name: 'Nope' }),
    );
    expect(err).toMatchObject({ code: 'BAD_REQUEST', httpStatus: 400 });
    expect(err.details).toEqual([expect.objectContaining({ path: ['ownerId'] })]);

    const departed = await addPerson(svc.admin, tenant);
    await svc.admin.members.remove.mutate({ orgId: tenant.org.id, userId: departed.user.id });
    const again = await adminError(
      svc.admin.workspaces.create.mutate({ orgId: tenant.org.id, ownerId: departed.user.id, name: 'Nope' }),
    );
    expect(again.details?.[0]?.path).toEqual(['ownerId']);
    const names = (await svc.admin.workspaces.list.query({ orgId: tenant.org.id })).map((w) => w.name);
    expect(names).not.toContain('Nope');
  });

  it('gives a second workspace of the same name the next free slug', async () => {
    const make = () =>
      svc.admin.workspaces.create.mutate({
        orgId: tenant.org.id,
        ownerId: tenant.user.id,
        name: 'x',
        skipDefaultWorkflow: true,
      });
    const a = await make();
    const b = await make();
    expect([a.slug, b.slug]).toEqual(['x', 'x-2']);
    expect(b.name).toBe('x');
    // Slugs are per organization: another one starts again at the plain slug.
    const other = await createTenant(svc.admin);
    const c = await svc.admin.workspaces.create.mutate({
      orgId: other.org.id,
      ownerId: other.user.id,
      name: 'x',
      skipDefaultWorkflow: true,
    });
    expect(c.slug).toBe('x');
  });

  it('gives concurrent creations of one name distinct slugs, all of them succeeding', async () => {
    const t = await createTenant(svc.admin);
    const made = await Promise.all(
      Array.from({ length: 5 }, () =>
        svc.admin.workspaces.create.mutate({ orgId: t.org.id, ownerId: t.user.id, name: 'Race' }),
      ),
    );
    expect(made.map((w) => w.slug).sort()).toEqual(['race', 'race-2', 'race-3', 'race-4', 'race-5']);
  });

  it('takes a #RRGGBB colour (stored upper-case) and refuses anything else', async () => {
    const ws = await svc.admin.workspaces.create.mutate({
      orgId: tenant.org.id,
      ownerId: tenant.user.id,
      name: 'Coloured',
      color: '#a1b2c3',
    });
    expect(ws.color).toBe('#A1B2C3');
    for (const color of ['red', '#fff', 'a1b2c3', '#a1b2c3d4', '#ggghhh', '']) {
      const err = await adminError(
        svc.admin.workspaces.create.mutate({
          orgId: tenant.org.id,
          ownerId: tenant.user.id,
          name: 'C',
          color,
        }),
      );
      expect(err.code, color).toBe('BAD_REQUEST');
      expect(err.details?.[0]?.path, color).toEqual(['color']);
    }
  });

  it('lists the workspaces of one organization, or of all', async () => {
    const a = await createTenant(svc.admin);
    const b = await createTenant(svc.admin);
    const listA = await svc.admin.workspaces.list.query({ orgId: a.org.id });
    expect(listA.map((w) => w.id)).toEqual([a.workspace.id]);
    expect(listA[0]).toMatchObject({ organizationId: a.org.id, name: 'Main', slug: 'main' });
    const all = await svc.admin.workspaces.list.query();
    expect(all.map((w) => w.id)).toEqual(expect.arrayContaining([a.workspace.id, b.workspace.id]));
    expect(await svc.admin.workspaces.list.query({})).toEqual(all);
    const none = await svc.admin.workspaces.list.query({
      orgId: (await svc.admin.orgs.create.mutate({ name: 'Empty' })).id,
    });
    expect(none).toEqual([]);
  });

  it('updates name, colour and personal-key setting; needs at least one of them', async () => {
    const id = tenant.workspace.id;
    const renamed = await svc.admin.workspaces.update.mutate({ workspaceId: id, name: 'Renamed' });
    expect(renamed).toMatchObject({ id, name: 'Renamed', slug: 'main' });
    const recoloured = await svc.admin.workspaces.update.mutate({ workspaceId: id, color: '#00ff7f' });
    expect(recoloured).toMatchObject({ name: 'Renamed', color: '#00FF7F' });
    const locked = await svc.admin.workspaces.update.mutate({ workspaceId: id, allowPersonalApiKeys: false });
    expect(locked).toMatchObject({ name: 'Renamed', color: '#00FF7F', allowPersonalApiKeys: false });
    const unlocked = await svc.admin.workspaces.update.mutate({
      workspaceId: id,
      allowPersonalApiKeys: true,
    });
    expect(unlocked.allowPersonalApiKeys).toBe(true);

    const empty = await adminError(svc.admin.workspaces.update.mutate({ workspaceId: id }));
    expect(empty).toMatchObject({ code: 'BAD_REQUEST', httpStatus: 400 });
    expect(empty.details?.[0]?.message).toMatch(/at least one/);
    const badColour = await adminError(
      svc.admin.workspaces.update.mutate({ workspaceId: id, color: 'blue' }),
    );
    expect(badColour.details?.[0]?.path).toEqual(['color']);
    const blank = await adminError(svc.admin.workspaces.update.mutate({ workspaceId: id, name: '  ' }));
    expect(blank.details?.[0]?.path).toEqual(['name']);
    expect(
      await adminError(
        svc.admin.workspaces.update.mutate({
          workspaceId: '00000000-0000-4000-8000-000000000000',
          name: 'Z',
        }),
      ),
    ).toMatchObject({ code: 'NOT_FOUND', httpStatus: 404 });
    const listed = (await svc.admin.workspaces.list.query({ orgId: tenant.org.id })).find((w) => w.id === id);
    expect(listed).toMatchObject({ name: 'Renamed', color: '#00FF7F', allowPersonalApiKeys: true });
  });

  it('grants and changes a member permission; a user outside the organization is BAD_REQUEST', async () => {
    const { user } = await addPerson(svc.admin, tenant);
    const granted = await svc.admin.workspaces.grant.mutate({
      workspaceId: tenant.workspace.id,
      userId: user.id,
      permission: 'read',
    });
    expect(granted).toEqual({ workspaceId: tenant.workspace.id, userId: user.id, permission: 'read' });
    await svc.admin.workspaces.grant.mutate({
      workspaceId: tenant.workspace.id,
      userId: user.id,
      permission: 'write',
    });
    expect(await permissionsOf(user.id)).toEqual([
      { workspace_id: tenant.workspace.id, permission: 'write' },
    ]);

    const outsider = await newUser();
    const err = await adminError(
      svc.admin.workspaces.grant.mutate({
        workspaceId: tenant.workspace.id,
        userId: outsider.id,
        permission: 'read',
      }),
    );
    expect(err).toMatchObject({ code: 'BAD_REQUEST', httpStatus: 400 });
    expect(err.details?.[0]?.path).toEqual(['userId']);
    expect(await permissionsOf(outsider.id)).toEqual([]);

    // A member of another organization is an outsider here too.
    const other = await createTenant(svc.admin);
    const cross = await adminError(
      svc.admin.workspaces.grant.mutate({
        workspaceId: tenant.workspace.id,
        userId: other.user.id,
        permission: 'admin',
      }),
    );
    expect(cross.code).toBe('BAD_REQUEST');

    expect(
      await adminError(
        svc.admin.workspaces.grant.mutate({
          workspaceId: '00000000-0000-4000-8000-000000000000',
          userId: user.id,
          permission: 'read',
        }),
      ),
    ).toMatchObject({ code: 'NOT_FOUND' });
    const perm = await adminError(
      svc.admin.workspaces.grant.mutate({
        workspaceId: tenant.workspace.id,
        userId: user.id,
        permission: 'owner' as never,
      }),
    );
    expect(perm.details?.[0]?.path).toEqual(['permission']);
  });

  it('archives and restores; doing either twice is a CONFLICT', async () => {
    const ws = await svc.admin.workspaces.create.mutate({
      orgId: tenant.org.id,
      ownerId: tenant.user.id,
      name: 'Seasonal',
      skipDefaultWorkflow: true,
    });
    const archived = await svc.admin.workspaces.archive.mutate({ workspaceId: ws.id });
    expect(archived.id).toBe(ws.id);
    expect(archived.archivedAt).toEqual(expect.any(String));
    expect(new Date(archived.archivedAt as string).toISOString()).toBe(archived.archivedAt);
    const listed = (await svc.admin.workspaces.list.query({ orgId: tenant.org.id })).find(
      (w) => w.id === ws.id,
    );
    expect(listed?.archivedAt).toBe(archived.archivedAt);

    const twice = await adminError(svc.admin.workspaces.archive.mutate({ workspaceId: ws.id }));
    expect(twice).toMatchObject({ code: 'CONFLICT', httpStatus: 409 });

    const restored = await svc.admin.workspaces.restore.mutate({ workspaceId: ws.id });
    expect(restored).toMatchObject({ id: ws.id, archivedAt: null });
    expect(await adminError(svc.admin.workspaces.restore.mutate({ workspaceId: ws.id }))).toMatchObject({
      code: 'CONFLICT',
    });
    // Archiving again after a restore is fine.
    expect((await svc.admin.workspaces.archive.mutate({ workspaceId: ws.id })).archivedAt).not.toBeNull();

    const nobody = '00000000-0000-4000-8000-000000000000';
    expect((await adminError(svc.admin.workspaces.archive.mutate({ workspaceId: nobody }))).code).toBe(
      'NOT_FOUND',
    );
    expect((await adminError(svc.admin.workspaces.restore.mutate({ workspaceId: nobody }))).code).toBe(
      'NOT_FOUND',
    );
  });

  it('refuses ids that are not UUIDs with BAD_REQUEST rather than a database error', async () => {
    const err = await adminError(svc.admin.workspaces.archive.mutate({ workspaceId: 'not-a-uuid' }));
    expect(err).toMatchObject({ code: 'BAD_REQUEST' });
    expect(err.details?.[0]?.path).toEqual(['workspaceId']);
  });
});
