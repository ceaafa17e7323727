// Admin plane: inbound webhooks. create shows the URL's token once; list shows masked URLs and
// never a token or secret; delete and rotateToken take effect at once; a workflow of another
// workspace, bad inputs and a missing admin token are refused; each change is audited.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminClient } from '../../admin/client.ts';
import {
  adminError,
  createTenant,
  createWorkspace,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';
import { deployWorkflow } from '../helpers/workflows.ts';

const NO_SUCH_ID = '00000000-0000-4000-8000-000000000000';
const SECRET = 'a-signing-secret-of-some-length';
const ECHO = { blocks: [{ id: 'r', type: 'response', data: { ok: true } }], edges: [] };

let svc: TestService;
let tenant: Tenant;
let workflowId: string;

beforeAll(async () => {
  svc = await startTestService();
  tenant = await createTenant(svc.admin);
  workflowId = await deployWorkflow(svc.admin, tenant.workspace.id, ECHO);
});
afterAll(() => svc.close());

const auditOf = async (webhookId: string) =>
  (
    await svc.db.query<{ action: string; actor_name: string; workspace_id: string; metadata: unknown }>(
      `select action, actor_name, workspace_id, metadata from audit_logs where resource_type = 'webhook'
        and resource_id = $1 order by created_at, id`,
      [webhookId],
    )
  ).map((r) => ({ ...r, metadata: typeof r.metadata === 'string' ? JSON.parse(r.metadata) : r.metadata }));

describe('webhooks.create', () => {
  it('answers the URL with its token once; async and unsigned by default', async () => {
    const hook = await svc.admin.webhooks.create.mutate({ workflowId });
    expect(hook).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      workspaceId: tenant.workspace.id,
      workflowId,
      mode: 'async',
      signed: false,
      token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      url: `/api/webhooks/${hook.token}`,
      maskedUrl: `/api/webhooks/••••${hook.token.slice(-4)}`,
      createdAt: expect.any(String),
      tokenRotatedAt: null,
    });
    expect(await auditOf(hook.id)).toEqual([
      {
        action: 'webhook.created',
        actor_name: 'admin plane',
        workspace_id: tenant.workspace.id,
        metadata: { workflowId, mode: 'async', signed: false },
      },
    ]);
  });

  it('makes a sync, signed webhook; each webhook gets its own token', async () => {
    const a = await svc.admin.webhooks.create.mutate({ workflowId, mode: 'sync', secret: SECRET });
    const b = await svc.admin.webhooks.create.mutate({ workflowId, mode: 'sync', secret: SECRET });
    expect(a).toMatchObject({ mode: 'sync', signed: true });
    expect(a.token).not.toBe(b.token);
    expect(JSON.stringify(a)).not.toContain(SECRET);
    expect((await auditOf(a.id))[0]?.metadata).toEqual({ workflowId, mode: 'sync', signed: true });
  });

  it('takes a workflow that is not deployed yet (calls answer 400 until it is)', async () => {
    const draft = await svc.admin.workflows.create.mutate({
      workspaceId: tenant.workspace.id,
      name: 'draft',
      definition: ECHO,
    });
    await expect(svc.admin.webhooks.create.mutate({ workflowId: draft.id })).resolves.toMatchObject({
      workflowId: draft.id,
    });
  });

  it("refuses another workspace's workflow, and an unknown one, with NOT_FOUND", async () => {
    const otherWorkspace = await createWorkspace(svc.admin, tenant);
    const err = await adminError(
      svc.admin.webhooks.create.mutate({ workflowId, workspaceId: otherWorkspace }),
    );
    expect(err).toMatchObject({ code: 'NOT_FOUND', httpStatus: 404, message: 'Workflow not found' });
    const stranger = await createTenant(svc.admin);
    expect(
      await adminError(svc.admin.webhooks.create.mutate({ workflowId, workspaceId: stranger.workspace.id })),
    ).toMatchObject({ code: 'NOT_FOUND' });
    expect(await adminError(svc.admin.webhooks.create.mutate({ workflowId: NO_SUCH_ID }))).toMatchObject({
      code: 'NOT_FOUND',
      message: 'Workflow not found',
    });
    // Its own workspace named: accepted.
    await expect(
      svc.admin.webhooks.create.mutate({ workflowId, workspaceId: tenant.workspace.id }),
    ).resolves.toMatchObject({ workflowId });
    expect(await svc.admin.webhooks.list.query({ workspaceId: otherWorkspace })).toEqual([]);
  });

  it('refuses bad inputs with BAD_REQUEST and the field issues, creating nothing', async () => {
    const before = (await svc.admin.webhooks.list.query({ workflowId })).length;
    const cases: [unknown, string][] = [
      [{ workflowId: 'nope' }, 'workflowId'],
      [{ workflowId, secret: 'short' }, 'secret'],
      [{ workflowId, secret: 'x'.repeat(1025) }, 'secret'],
      [{ workflowId, mode: 'later' }, 'mode'],
      [{ workflowId, workspaceId: 'x' }, 'workspaceId'],
      [{}, 'workflowId'],
    ];
    for (const [input, field] of cases) {
      const err = await adminError(
        svc.admin.webhooks.create.mutate(input as Parameters<typeof svc.admin.webhooks.create.mutate>[0]),
      );
      expect(err.code, JSON.stringify(input)).toBe('BAD_REQUEST');
      expect(err.details?.map((d) => d.path[0])).toContain(field);
    }
    const short = await adminError(svc.admin.webhooks.create.mutate({ workflowId, secret: 'short' }));
    expect(short.details?.[0]?.message).toBe('Use a secret of at least 16 characters');
    expect((await svc.admin.webhooks.list.query({ workflowId })).length).toBe(before);
  });
});

describe('webhooks.list', () => {
  it('lists by workspace or by workflow, masked, never with a token or secret', async () => {
    const ws = await createWorkspace(svc.admin, tenant);
    const wfA = await deployWorkflow(svc.admin, ws, ECHO, 'a');
    const wfB = await deployWorkflow(svc.admin, ws, ECHO, 'b');
    const a = await svc.admin.webhooks.create.mutate({ workflowId: wfA, secret: SECRET });
    const b = await svc.admin.webhooks.create.mutate({ workflowId: wfB, mode: 'sync' });
    const byWorkspace = await svc.admin.webhooks.list.query({ workspaceId: ws });
    expect(byWorkspace.map((h) => h.id)).toEqual([a.id, b.id]);
    expect(byWorkspace[0]).toEqual({
      id: a.id,
      workspaceId: ws,
      workflowId: wfA,
      mode: 'async',
      signed: true,
      maskedUrl: a.maskedUrl,
      createdAt: a.createdAt,
      tokenRotatedAt: null,
    });
    const text = JSON.stringify(byWorkspace);
    for (const hidden of [a.token, b.token, SECRET]) expect(text).not.toContain(hidden);
    expect((await svc.admin.webhooks.list.query({ workflowId: wfB })).map((h) => h.id)).toEqual([b.id]);
    expect(await svc.admin.webhooks.list.query({ workspaceId: ws, workflowId: wfA })).toHaveLength(1);
    expect(
      await svc.admin.webhooks.list.query({ workspaceId: tenant.workspace.id, workflowId: wfA }),
    ).toEqual([]);
  });

  it('needs a workspace or a workflow to list', async () => {
    const err = await adminError(svc.admin.webhooks.list.query({}));
    expect(err).toMatchObject({ code: 'BAD_REQUEST' });
    expect(err.details?.[0]?.message).toBe('Give workspaceId or workflowId');
  });
});

describe('webhooks.delete and rotateToken', () => {
  it('deletes a webhook, audited; a second delete is NOT_FOUND', async () => {
    const hook = await svc.admin.webhooks.create.mutate({ workflowId });
    await expect(svc.admin.webhooks.delete.mutate({ id: hook.id })).resolves.toEqual({ deleted: true });
    expect((await svc.admin.webhooks.list.query({ workflowId })).map((h) => h.id)).not.toContain(hook.id);
    expect(await adminError(svc.admin.webhooks.delete.mutate({ id: hook.id }))).toMatchObject({
      code: 'NOT_FOUND',
      message: 'Webhook not found',
    });
    expect((await auditOf(hook.id)).map((e) => e.action)).toEqual(['webhook.created', 'webhook.deleted']);
  });

  it('rotates the token: a new one shown once, the settings kept, audited', async () => {
    const hook = await svc.admin.webhooks.create.mutate({ workflowId, mode: 'sync', secret: SECRET });
    const rotated = await svc.admin.webhooks.rotateToken.mutate({ id: hook.id });
    expect(rotated).toMatchObject({ id: hook.id, mode: 'sync', signed: true, workflowId });
    expect(rotated.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(rotated.token).not.toBe(hook.token);
    expect(rotated.url).toBe(`/api/webhooks/${rotated.token}`);
    expect(rotated.tokenRotatedAt).toEqual(expect.any(String));
    expect((await auditOf(hook.id)).map((e) => e.action)).toEqual([
      'webhook.created',
      'webhook.token_rotated',
    ]);
    expect(await adminError(svc.admin.webhooks.rotateToken.mutate({ id: NO_SUCH_ID }))).toMatchObject({
      code: 'NOT_FOUND',
    });
  });

  it('goes with its workflow: a deleted workflow takes its webhooks along', async () => {
    const ws = await createWorkspace(svc.admin, tenant);
    const wf = await deployWorkflow(svc.admin, ws, ECHO);
    const hook = await svc.admin.webhooks.create.mutate({ workflowId: wf });
    await svc.db.query('delete from workflows where id = $1', [wf]);
    expect(await svc.admin.webhooks.list.query({ workspaceId: ws })).toEqual([]);
    expect(await adminError(svc.admin.webhooks.delete.mutate({ id: hook.id }))).toMatchObject({
      code: 'NOT_FOUND',
    });
  });
});

describe('the admin token', () => {
  it('is required for every webhook procedure', async () => {
    const anonymous = createAdminClient({
      url: 'http://admin.test/trpc',
      token: 'not-the-admin-token',
      fetch: (input, init) => Promise.resolve(svc.adminApp.request(new Request(input, init))),
    });
    const hook = await svc.admin.webhooks.create.mutate({ workflowId });
    const calls = [
      anonymous.webhooks.create.mutate({ workflowId }),
      anonymous.webhooks.list.query({ workflowId }),
      anonymous.webhooks.delete.mutate({ id: hook.id }),
      anonymous.webhooks.rotateToken.mutate({ id: hook.id }),
    ];
    for (const call of calls) expect(await adminError(call)).toMatchObject({ code: 'UNAUTHORIZED' });
    // Nothing changed: the webhook is there, with its first token.
    const [listed] = (await svc.admin.webhooks.list.query({ workflowId })).filter((h) => h.id === hook.id);
    expect(listed).toMatchObject({ maskedUrl: hook.maskedUrl, tokenRotatedAt: null });
  });
});
