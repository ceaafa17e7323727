// Admin plane: API keys are shown once, stored only as a hash and a ciphertext, and revocable.
import { createDecipheriv, createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminError,
  createTenant,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';

const KEY_FORMAT = /^sk-service-[A-Za-z0-9_-]{32}$/;
const NO_SUCH_ID = '00000000-0000-4000-8000-000000000000';

let svc: TestService;
let tenant: Tenant;

beforeAll(async () => {
  svc = await startTestService();
  tenant = await createTenant(svc.admin);
});
afterAll(() => svc.close());

/** What the database holds for a key, bytes as Buffers whichever backend returned them. */
async function storedKey(id: string) {
  const [row] = await svc.db.query<Record<string, unknown>>('select * from api_keys where id = $1', [id]);
  if (!row) throw new Error(`no api_keys row ${id}`);
  return {
    row,
    hash: Buffer.from(row.key_hash as Uint8Array),
    ciphertext: Buffer.from(row.key_ciphertext as Uint8Array),
  };
}

/** Opens AES-256-GCM as stored: iv (12 bytes) ‖ tag (16 bytes) ‖ data. */
function decrypt(key: Buffer, sealed: Buffer): string {
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12));
  decipher.setAuthTag(sealed.subarray(12, 28));
  return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString('utf8');
}

const createWorkspaceWith = (key: string) =>
  svc.call('POST', '/api/v1/workspaces', { key, body: { name: 'x', skipDefaultWorkflow: true } });

describe('keys.create', () => {
  it('creates a personal key, shown in full once, that acts for its user', async () => {
    const created = await svc.admin.keys.create.mutate({
      type: 'personal',
      userId: tenant.user.id,
      name: 'laptop',
    });
    expect(created.key).toMatch(KEY_FORMAT);
    expect(created).toMatchObject({
      type: 'personal',
      name: 'laptop',
      userId: tenant.user.id,
      workspaceId: null,
      maskedKey: `sk-service-••••${created.key.slice(-4)}`,
      lastUsedAt: null,
      revokedAt: null,
    });
    const res = await createWorkspaceWith(created.key);
    expect(res.status).toBe(200);
    expect(res.body.data.workspace.ownerId).toBe(tenant.user.id);
  });

  it('creates a workspace key, which authenticates but acts for no person', async () => {
    const created = await svc.admin.keys.create.mutate({
      type: 'workspace',
      workspaceId: tenant.workspace.id,
      name: 'ci',
    });
    expect(created.key).toMatch(KEY_FORMAT);
    expect(created).toMatchObject({
      type: 'workspace',
      name: 'ci',
      userId: null,
      workspaceId: tenant.workspace.id,
      revokedAt: null,
    });
    // Recognised (403, not 401): only personal keys create workspaces.
    const res = await createWorkspaceWith(created.key);
    expect(res.status).toBe(403);
    expect(res.body.error).toMatch(/personal API key/);
  });

  it('makes a different key every time', async () => {
    const keys = await Promise.all(
      Array.from({ length: 5 }, () =>
        svc.admin.keys.create.mutate({ type: 'personal', userId: tenant.user.id, name: 'many' }),
      ),
    );
    expect(new Set(keys.map((k) => k.key)).size).toBe(5);
    expect(new Set(keys.map((k) => k.id)).size).toBe(5);
  });

  it('refuses an unknown user or workspace with NOT_FOUND, and creates nothing', async () => {
    const before = (await svc.admin.keys.list.query()).length;
    expect(
      await adminError(svc.admin.keys.create.mutate({ type: 'personal', userId: NO_SUCH_ID, name: 'k' })),
    ).toMatchObject({ code: 'NOT_FOUND', httpStatus: 404 });
    expect(
      await adminError(
        svc.admin.keys.create.mutate({ type: 'workspace', workspaceId: NO_SUCH_ID, name: 'k' }),
      ),
    ).toMatchObject({ code: 'NOT_FOUND', httpStatus: 404 });
    expect(await svc.admin.keys.list.query()).toHaveLength(before);
  });

  it('refuses a malformed request with BAD_REQUEST', async () => {
    const noName = await adminError(
      svc.admin.keys.create.mutate({ type: 'personal', userId: tenant.user.id, name: '  ' }),
    );
    expect(noName).toMatchObject({ code: 'BAD_REQUEST', httpStatus: 400 });
    expect(noName.details?.[0]?.path).toEqual(['name']);
    const wrongType = await adminError(
      svc.admin.keys.create.mutate({ type: 'service', userId: tenant.user.id, name: 'k' } as never),
    );
    expect(wrongType.code).toBe('BAD_REQUEST');
    const mixed = await adminError(
      // A personal key names a user, not a workspace.
      svc.admin.keys.create.mutate({
        type: 'personal',
        workspaceId: tenant.workspace.id,
        name: 'k',
      } as never),
    );
    expect(mixed.code).toBe('BAD_REQUEST');
    expect(mixed.details?.[0]?.path).toEqual(['userId']);
  });
});

describe('keys.list', () => {
  it('shows masked keys only, filtered by user or workspace', async () => {
    const t = await createTenant(svc.admin);
    const personal = await svc.admin.keys.create.mutate({ type: 'personal', userId: t.user.id, name: 'p' });
    const workspace = await svc.admin.keys.create.mutate({
      type: 'workspace',
      workspaceId: t.workspace.id,
      name: 'w',
    });

    const all = await svc.admin.keys.list.query();
    const everything = JSON.stringify(all);
    for (const plain of [t.key, personal.key, workspace.key]) {
      expect(everything).not.toContain(plain);
      // Not even the random part after the prefix.
      expect(everything).not.toContain(plain.slice(11));
    }
    for (const k of all) {
      expect(Object.keys(k)).not.toContain('key');
      expect(k.maskedKey).toMatch(/^sk-service-••••[A-Za-z0-9_-]{4}$/);
    }

    const byUser = await svc.admin.keys.list.query({ userId: t.user.id });
    expect(byUser.map((k) => k.name)).toEqual(['owner key', 'p']);
    expect(byUser[1]).toEqual({
      id: personal.id,
      type: 'personal',
      name: 'p',
      userId: t.user.id,
      workspaceId: null,
      maskedKey: `sk-service-••••${personal.key.slice(-4)}`,
      scopes: [],
      createdAt: personal.createdAt,
      lastUsedAt: null,
      revokedAt: null,
    });
    const byWorkspace = await svc.admin.keys.list.query({ workspaceId: t.workspace.id });
    expect(byWorkspace.map((k) => k.id)).toEqual([workspace.id]);
    expect(byWorkspace[0]?.maskedKey.endsWith(workspace.key.slice(-4))).toBe(true);
    expect(await svc.admin.keys.list.query({ userId: NO_SUCH_ID })).toEqual([]);
  });

  it('records when a key was last used', async () => {
    const created = await svc.admin.keys.create.mutate({
      type: 'personal',
      userId: tenant.user.id,
      name: 'used',
    });
    await createWorkspaceWith(created.key);
    const listed = (await svc.admin.keys.list.query({ userId: tenant.user.id })).find(
      (k) => k.id === created.id,
    );
    expect(listed?.lastUsedAt).toEqual(expect.any(String));
  });
});

describe('storage of keys', () => {
  it('keeps only the SHA-256 and an AES-256-GCM ciphertext, never the plain key', async () => {
    const created = await svc.admin.keys.create.mutate({
      type: 'workspace',
      workspaceId: tenant.workspace.id,
      name: 'stored',
    });
    const { row, hash, ciphertext } = await storedKey(created.id);
    expect(hash.equals(createHash('sha256').update(created.key).digest())).toBe(true);
    expect(ciphertext.includes(Buffer.from(created.key))).toBe(false);
    expect(ciphertext.includes(Buffer.from(created.key.slice(11)))).toBe(false);
    // The ciphertext is sealed with the service's key: recoverable by the service only.
    expect(decrypt(svc.encryptionKey, ciphertext)).toBe(created.key);
    // No column, in any encoding the driver returns, holds the key in the clear.
    const asText = JSON.stringify(row, (_k, v) =>
      v instanceof Uint8Array || Buffer.isBuffer(v) ? Buffer.from(v).toString('latin1') : v,
    );
    expect(asText).not.toContain(created.key.slice(11));
    // Nor does the audit trail.
    const audit = await svc.db.query<{ metadata: unknown }>(
      'select metadata from audit_logs where resource_id = $1',
      [created.id],
    );
    expect(audit.length).toBeGreaterThan(0);
    expect(JSON.stringify(audit)).not.toContain(created.key.slice(11));
  });

  it('seals each key with a fresh IV, so equal keys would not give equal ciphertexts', async () => {
    const a = await svc.admin.keys.create.mutate({ type: 'personal', userId: tenant.user.id, name: 'a' });
    const b = await svc.admin.keys.create.mutate({ type: 'personal', userId: tenant.user.id, name: 'b' });
    const [sa, sb] = await Promise.all([storedKey(a.id), storedKey(b.id)]);
    expect(sa.ciphertext.subarray(0, 12).equals(sb.ciphertext.subarray(0, 12))).toBe(false);
  });
});

describe('keys.revoke', () => {
  it('stops a personal key at once with 401, and lists it as revoked', async () => {
    const created = await svc.admin.keys.create.mutate({
      type: 'personal',
      userId: tenant.user.id,
      name: 'gone',
    });
    expect((await createWorkspaceWith(created.key)).status).toBe(200);

    const revoked = await svc.admin.keys.revoke.mutate({ id: created.id });
    expect(revoked).toMatchObject({ id: created.id, name: 'gone' });
    expect(revoked.revokedAt).toEqual(expect.any(String));
    expect(JSON.stringify(revoked)).not.toContain(created.key.slice(11));

    const res = await createWorkspaceWith(created.key);
    expect(res.status).toBe(401);
    expect(res.body.error).toMatch(/revoked/i);
    const listed = (await svc.admin.keys.list.query({ userId: tenant.user.id })).find(
      (k) => k.id === created.id,
    );
    expect(listed?.revokedAt).toBe(revoked.revokedAt);
  });

  it('stops a workspace key too, and leaves the other keys working', async () => {
    const created = await svc.admin.keys.create.mutate({
      type: 'workspace',
      workspaceId: tenant.workspace.id,
      name: 'gone too',
    });
    expect((await createWorkspaceWith(created.key)).status).toBe(403);
    await svc.admin.keys.revoke.mutate({ id: created.id });
    expect((await createWorkspaceWith(created.key)).status).toBe(401);
    expect((await createWorkspaceWith(tenant.key)).status).toBe(200);
  });

  it('is idempotent: revoking twice keeps the first revocation time', async () => {
    const created = await svc.admin.keys.create.mutate({
      type: 'personal',
      userId: tenant.user.id,
      name: 'twice',
    });
    const first = await svc.admin.keys.revoke.mutate({ id: created.id });
    const second = await svc.admin.keys.revoke.mutate({ id: created.id });
    expect(second.revokedAt).toBe(first.revokedAt);
    expect((await createWorkspaceWith(created.key)).status).toBe(401);
  });

  it('refuses an unknown id with NOT_FOUND and a malformed one with BAD_REQUEST', async () => {
    expect(await adminError(svc.admin.keys.revoke.mutate({ id: NO_SUCH_ID }))).toMatchObject({
      code: 'NOT_FOUND',
      httpStatus: 404,
    });
    const bad = await adminError(svc.admin.keys.revoke.mutate({ id: 'sk-service-whatever' }));
    expect(bad.code).toBe('BAD_REQUEST');
    expect(bad.details?.[0]?.path).toEqual(['id']);
  });

  it('revokes the key of a user who has left every organization', async () => {
    const t = await createTenant(svc.admin);
    const user = await svc.admin.users.create.mutate({ name: 'Leaver', email: 'leaver@example.com' });
    await svc.admin.members.add.mutate({ orgId: t.org.id, userId: user.id, role: 'member' });
    const created = await svc.admin.keys.create.mutate({ type: 'personal', userId: user.id, name: 'k' });
    await svc.admin.members.remove.mutate({ orgId: t.org.id, userId: user.id });
    expect((await createWorkspaceWith(created.key)).status).toBe(403);
    await svc.admin.keys.revoke.mutate({ id: created.id });
    expect((await createWorkspaceWith(created.key)).status).toBe(401);
  });
});
