// Admin plane: completion callbacks. Each workspace's signing secret is made on first read, the same
// on every read after (however many readers race for it), sealed at rest, and replaced by rotation;
// an execution's delivery attempts are listed. Deliveries themselves: test/e2e/callbacks.test.ts.
import { createDecipheriv } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminError,
  createTenant,
  createWorkspace,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';
import { deployWorkflow } from '../helpers/workflows.ts';

const SECRET_FORMAT = /^cbsec_[A-Za-z0-9_-]{43}$/;
const NO_SUCH_ID = '00000000-0000-4000-8000-000000000000';

let svc: TestService;
let tenant: Tenant;

beforeAll(async () => {
  svc = await startTestService();
  tenant = await createTenant(svc.admin);
});
afterAll(() => svc.close());

/** Opens AES-256-GCM as stored: iv (12 bytes) ‖ tag (16 bytes) ‖ data. */
function decrypt(key: Buffer, sealed: Buffer): string {
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12));
  decipher.setAuthTag(sealed.subarray(12, 28));
  return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString('utf8');
}

async function storedSecrets(workspaceId: string) {
  return svc.db.query<{ secret_ciphertext: Uint8Array }>(
    'select secret_ciphertext from workspace_callback_secrets where workspace_id = $1',
    [workspaceId],
  );
}

describe('callbacks.secret', () => {
  it('makes the secret on first read and shows the same one after, sealed at rest', async () => {
    const workspaceId = await createWorkspace(svc.admin, tenant);
    expect(await storedSecrets(workspaceId)).toHaveLength(0);
    const first = await svc.admin.callbacks.secret.query({ workspaceId });
    expect(first).toEqual({
      workspaceId,
      secret: expect.stringMatching(SECRET_FORMAT),
      createdAt: expect.any(String),
      rotatedAt: null,
    });
    expect(await svc.admin.callbacks.secret.query({ workspaceId })).toEqual(first);

    const [row] = await storedSecrets(workspaceId);
    const sealed = Buffer.from(row?.secret_ciphertext ?? []);
    expect(sealed.includes(Buffer.from(first.secret))).toBe(false);
    expect(decrypt(svc.encryptionKey, sealed)).toBe(first.secret);
  });

  it('gives racing first readers one and the same secret', async () => {
    const workspaceId = await createWorkspace(svc.admin, tenant);
    const reads = await Promise.all(
      Array.from({ length: 6 }, () => svc.admin.callbacks.secret.query({ workspaceId })),
    );
    expect(new Set(reads.map((r) => r.secret)).size).toBe(1);
    expect(await storedSecrets(workspaceId)).toHaveLength(1);
  });

  it('gives each workspace its own secret', async () => {
    const a = await svc.admin.callbacks.secret.query({
      workspaceId: await createWorkspace(svc.admin, tenant),
    });
    const b = await svc.admin.callbacks.secret.query({
      workspaceId: await createWorkspace(svc.admin, tenant),
    });
    expect(a.secret).not.toBe(b.secret);
  });

  it('answers NOT_FOUND for an unknown workspace, and makes nothing', async () => {
    const err = await adminError(svc.admin.callbacks.secret.query({ workspaceId: NO_SUCH_ID }));
    expect(err).toMatchObject({ code: 'NOT_FOUND', httpStatus: 404, message: 'Workspace not found' });
    expect(await storedSecrets(NO_SUCH_ID)).toHaveLength(0);
  });

  it('answers BAD_REQUEST naming the field for an id that is not a UUID', async () => {
    const err = await adminError(svc.admin.callbacks.secret.query({ workspaceId: 'nope' }));
    expect(err).toMatchObject({ code: 'BAD_REQUEST', httpStatus: 400 });
    expect(err.details).toEqual([expect.objectContaining({ path: ['workspaceId'] })]);
  });
});

describe('callbacks.rotateSecret', () => {
  it('replaces the secret, which reads show from then on, and audits it', async () => {
    const workspaceId = await createWorkspace(svc.admin, tenant);
    const before = await svc.admin.callbacks.secret.query({ workspaceId });
    const rotated = await svc.admin.callbacks.rotateSecret.mutate({ workspaceId });
    expect(rotated).toEqual({
      workspaceId,
      secret: expect.stringMatching(SECRET_FORMAT),
      createdAt: before.createdAt,
      rotatedAt: expect.any(String),
    });
    expect(rotated.secret).not.toBe(before.secret);
    expect(await svc.admin.callbacks.secret.query({ workspaceId })).toEqual(rotated);
    const audits = await svc.db.query<{ action: string; actor_name: string }>(
      `select action, actor_name from audit_logs where workspace_id = $1 and action like 'callback%'`,
      [workspaceId],
    );
    expect(audits).toEqual([{ action: 'callback_secret.rotated', actor_name: 'admin plane' }]);
  });

  it('makes a secret for a workspace that had none', async () => {
    const workspaceId = await createWorkspace(svc.admin, tenant);
    const rotated = await svc.admin.callbacks.rotateSecret.mutate({ workspaceId });
    expect(rotated.secret).toMatch(SECRET_FORMAT);
    expect(await svc.admin.callbacks.secret.query({ workspaceId })).toEqual(rotated);
  });

  it('answers NOT_FOUND for an unknown workspace', async () => {
    const err = await adminError(svc.admin.callbacks.rotateSecret.mutate({ workspaceId: NO_SUCH_ID }));
    expect(err).toMatchObject({ code: 'NOT_FOUND', message: 'Workspace not found' });
  });
});

describe('callbacks.deliveries', () => {
  it('lists no attempts for an execution without a callback', async () => {
    const workflowId = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [{ id: 'r', type: 'response', data: 1 }],
    });
    // No runner in this file: the execution stays queued, which is all this needs.
    const res = await svc.call('POST', `/api/workflows/${workflowId}/execute`, {
      key: tenant.key,
      body: { async: true },
    });
    expect(res.status).toBe(202);
    expect(await svc.admin.callbacks.deliveries.query({ executionId: res.body.taskId })).toEqual({
      executionId: res.body.taskId,
      workspaceId: tenant.workspace.id,
      callbackUrl: null,
      status: null,
      attempts: [],
    });
  });

  it('shows a queued execution callback as pending, with no attempt yet', async () => {
    const workflowId = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [{ id: 'r', type: 'response', data: 1 }],
    });
    const callbackUrl = 'https://example.com/hooks/done?token=t0k3n';
    const res = await svc.call('POST', `/api/workflows/${workflowId}/execute`, {
      key: tenant.key,
      body: { async: true, callbackUrl },
    });
    expect(res.status).toBe(202);
    expect(await svc.admin.callbacks.deliveries.query({ executionId: res.body.taskId })).toMatchObject({
      callbackUrl,
      status: 'pending',
      attempts: [],
    });
  });

  it('answers NOT_FOUND for an unknown execution and BAD_REQUEST for a malformed id', async () => {
    expect(await adminError(svc.admin.callbacks.deliveries.query({ executionId: NO_SUCH_ID }))).toMatchObject(
      {
        code: 'NOT_FOUND',
        message: 'Execution not found',
      },
    );
    expect(await adminError(svc.admin.callbacks.deliveries.query({ executionId: '42' }))).toMatchObject({
      code: 'BAD_REQUEST',
    });
  });
});
