// Keys with scopes, through the public API: a key limited to scopes reaches the routes needing one
// of them (a :write scope grants its :read), and every other route answers 403 naming the scope it
// needs, changing nothing; a key with no scopes keeps its full reach. Every documented operation
// declares its scope (the isolation suite probes each against a key without it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../api/openapi/document.ts';
import { SCOPES, type Scope } from '../../db/key-scopes.ts';
import {
  adminError,
  type CallOptions,
  createTenant,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';
import { deployWorkflow } from '../helpers/workflows.ts';

const NO_SUCH_ID = '00000000-0000-4000-8000-000000000000';

let svc: TestService;
let tenant: Tenant;
let workflowId: string;

beforeAll(async () => {
  svc = await startTestService();
  tenant = await createTenant(svc.admin, { plan: 'enterprise' });
  workflowId = await deployWorkflow(svc.admin, tenant.workspace.id, {
    inputs: {},
    blocks: [{ id: 'r', type: 'response', data: { ok: true } }],
  });
});
afterAll(() => svc?.close());

const keyWith = async (scopes: Scope[], type: 'personal' | 'workspace' = 'personal') =>
  (
    await svc.admin.keys.create.mutate(
      type === 'personal'
        ? { type, userId: tenant.user.id, name: `scoped ${scopes.join(' ')}`, scopes }
        : { type, workspaceId: tenant.workspace.id, name: `scoped ${scopes.join(' ')}`, scopes },
    )
  ).key;

type Call = [method: string, path: string, options?: Omit<CallOptions, 'key'>];

const ws = () => ({ workspaceId: tenant.workspace.id });

/** One call per scope that needs it (and, once past the scope, answers without a 403). */
const NEEDING: Partial<Record<Scope, () => Call>> = {
  'workflows:execute': () => ['POST', `/api/workflows/${workflowId}/execute`, { body: { async: true } }],
  'tables:read': () => ['GET', '/api/v1/tables', { query: ws() }],
  'tables:write': () => [
    'POST',
    '/api/v1/tables',
    { body: { ...ws(), name: `t${Math.random().toString(36).slice(2, 8)}`, schema: { columns: [] } } },
  ],
  'files:read': () => ['GET', '/api/v1/files', { query: ws() }],
  'files:write': () => ['DELETE', `/api/v1/files/${NO_SUCH_ID}`, { query: ws() }],
  'knowledge:read': () => ['GET', '/api/v1/knowledge', { query: ws() }],
  'knowledge:write': () => ['PUT', `/api/v1/knowledge/${NO_SUCH_ID}`, { body: { ...ws(), name: 'kb' } }],
  'logs:read': () => ['GET', '/api/v1/logs', { query: ws() }],
  'audit:read': () => ['GET', '/api/v1/audit-logs', { query: ws() }],
  'workspaces:write': () => [
    'POST',
    '/api/v1/workspaces',
    { body: { name: 'w', skipDefaultWorkflow: true } },
  ],
};

/** The table count of the workspace: what a refused create must leave as it was. */
async function tableCount() {
  const [row] = await svc.db.query<{ n: number }>(
    'select count(*)::int as n from user_tables where workspace_id = $1',
    [tenant.workspace.id],
  );
  return row?.n;
}

describe('a key limited to scopes', () => {
  for (const scope of SCOPES) {
    it(`${scope}: reaches a route needing it, and is refused one that does not, naming the scope`, async () => {
      const key = await keyWith([scope]);
      const needing = NEEDING[scope];
      if (needing) {
        const [method, path, options] = needing();
        const res = await svc.call(method, path, { ...options, key });
        expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(500);
        expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).not.toBe(403);
        expect(res.status).not.toBe(401);
      }
      // Another scope's route: the table creation (tables:write), or for the table scopes the logs.
      const other: Call = scope.startsWith('tables:')
        ? ['GET', '/api/v1/logs', { query: ws() }]
        : (NEEDING['tables:write'] as () => Call)();
      const before = await tableCount();
      const refused = await svc.call(other[0], other[1], { ...other[2], key });
      const needs = scope.startsWith('tables:') ? 'logs:read' : 'tables:write';
      expect(refused.status, JSON.stringify(refused.body)).toBe(403);
      expect(refused.body).toEqual({ error: expect.stringContaining(needs) });
      expect(await tableCount()).toBe(before);
    });
  }

  it('a :write scope grants its :read, never another resource or execution', async () => {
    const key = await keyWith(['tables:write', 'files:write']);
    for (const [method, path, options] of [
      (NEEDING['tables:read'] as () => Call)(),
      (NEEDING['files:read'] as () => Call)(),
    ])
      expect((await svc.call(method, path, { ...options, key })).status).toBe(200);
    for (const needed of ['knowledge:read', 'logs:read', 'workflows:execute'] as const) {
      const [method, path, options] = (NEEDING[needed] as () => Call)();
      const res = await svc.call(method, path, { ...options, key });
      expect(res.status).toBe(403);
      expect(res.body.error).toContain(needed);
    }
  });

  it('a read scope does not grant its write, and the refused write changes nothing', async () => {
    const key = await keyWith(['tables:read', 'workflows:read']);
    const before = await tableCount();
    const [method, path, options] = (NEEDING['tables:write'] as () => Call)();
    const res = await svc.call(method, path, {
      ...options,
      key,
      headers: { 'Idempotency-Key': `scope-${Math.random()}` },
    });
    expect(res.status).toBe(403);
    expect(res.body.error).toContain('tables:write');
    expect(await tableCount()).toBe(before);
    // workflows:read is not workflows:execute: no run, no job.
    const [row] = await svc.db.query<{ n: number }>(
      'select count(*)::int as n from executions where workflow_id = $1',
      [workflowId],
    );
    const run = await svc.call('POST', `/api/workflows/${workflowId}/execute`, {
      key,
      body: { async: true },
    });
    expect(run.status).toBe(403);
    expect(run.body.error).toContain('workflows:execute');
    const [after] = await svc.db.query<{ n: number }>(
      'select count(*)::int as n from executions where workflow_id = $1',
      [workflowId],
    );
    expect(after?.n).toBe(row?.n);
  });

  it('workflows:execute runs, polls its job and cancels; it reads no logs', async () => {
    const key = await keyWith(['workflows:execute'], 'workspace');
    const run = await svc.call('POST', `/api/workflows/${workflowId}/execute`, {
      key,
      body: { async: true },
    });
    expect(run.status, JSON.stringify(run.body)).toBe(202);
    const jobId = run.body.taskId as string;
    expect((await svc.call('GET', `/api/jobs/${jobId}`, { key })).status).toBe(200);
    const cancel = await svc.call('POST', `/api/workflows/${workflowId}/executions/${jobId}/cancel`, { key });
    expect(cancel.status, JSON.stringify(cancel.body)).toBeLessThan(300);
    const logs = await svc.call('GET', '/api/v1/logs', { key, query: ws() });
    expect(logs.status).toBe(403);
    expect(logs.body.error).toContain('logs:read');
  });

  it('any scoped key reads its own usage limits (no scope needed)', async () => {
    const key = await keyWith(['files:read']);
    expect((await svc.call('GET', '/api/users/me/usage-limits', { key })).status).toBe(200);
  });

  it('a key with no scopes keeps its full reach', async () => {
    for (const needing of Object.values(NEEDING)) {
      const [method, path, options] = needing();
      const res = await svc.call(method, path, { ...options, key: tenant.key });
      expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).not.toBe(403);
      expect(res.status).toBeLessThan(500);
    }
  });

  it('scopes do not widen a key: a scoped key of another organization still gets no farther', async () => {
    const other = await createTenant(svc.admin);
    const { key } = await svc.admin.keys.create.mutate({
      type: 'personal',
      userId: other.user.id,
      name: 'outsider',
      scopes: ['tables:read'],
    });
    const res = await svc.call('GET', '/api/v1/tables', { key, query: ws() });
    expect([403, 404]).toContain(res.status);
    expect(res.body.error).not.toContain('tables:read');
  });
});

describe('keys.create and keys.list with scopes', () => {
  it('stores the scopes (deduplicated), lists them, and lists [] for an unlimited key', async () => {
    const created = await svc.admin.keys.create.mutate({
      type: 'workspace',
      workspaceId: tenant.workspace.id,
      name: 'ci',
      scopes: ['workflows:execute', 'logs:read', 'logs:read'],
    });
    expect(created.scopes).toEqual(['workflows:execute', 'logs:read']);
    const listed = await svc.admin.keys.list.query({ workspaceId: tenant.workspace.id });
    expect(listed.find((k) => k.id === created.id)?.scopes).toEqual(['workflows:execute', 'logs:read']);
    const mine = await svc.admin.keys.list.query({ userId: tenant.user.id });
    expect(mine.find((k) => k.name === 'owner key')?.scopes).toEqual([]);
  });

  it('refuses an unknown scope with BAD_REQUEST naming it, and creates nothing', async () => {
    const before = (await svc.admin.keys.list.query()).length;
    for (const scopes of [['tables:admin'], ['tables:read', ''], ['TABLES:READ'], 'tables:read']) {
      const failure = await adminError(
        svc.admin.keys.create.mutate({
          type: 'personal',
          userId: tenant.user.id,
          name: 'bad',
          scopes: scopes as never,
        }),
      );
      expect(failure).toMatchObject({ code: 'BAD_REQUEST', httpStatus: 400 });
      expect(failure.details?.[0]?.path[0]).toBe('scopes');
    }
    const unknown = await adminError(
      svc.admin.keys.create.mutate({
        type: 'personal',
        userId: tenant.user.id,
        name: 'bad',
        scopes: ['tables:admin'] as never,
      }),
    );
    expect(unknown.details?.[0]?.message).toContain('tables:admin');
    expect(unknown.details?.[0]?.message).toContain('workflows:execute');
    expect((await svc.admin.keys.list.query()).length).toBe(before);
  });
});

describe('every route declares its scope', () => {
  it('documents each keyed operation with the scope it needs, and its 403', () => {
    // biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is walked as plain JSON
    const doc = openApiDocument(svc.app) as any;
    const unscoped: string[] = [];
    for (const [path, ops] of Object.entries<Record<string, Record<string, unknown>>>(doc.paths))
      for (const [method, op] of Object.entries(ops)) {
        const security = op.security as Record<string, string[]>[] | undefined;
        if (security?.length === 0) continue; // no key at all
        const scopes = security?.flatMap((s) => Object.values(s).flat()) ?? [];
        if (!scopes.length) {
          unscoped.push(`${method.toUpperCase()} ${path}`);
          continue;
        }
        expect(scopes).toHaveLength(1);
        expect(SCOPES).toContain(scopes[0]);
        const refusal = JSON.stringify((op.responses as Record<string, unknown>)['403']);
        expect(refusal, `${method} ${path}`).toContain(scopes[0] as string);
      }
    // The one keyed operation any key may call: its own limits. A new one joins here on purpose.
    expect(unscoped).toEqual(['GET /api/users/me/usage-limits']);
  });
});
