// Workflow definitions through the admin plane: every malformed definition is refused at create and
// deploy with the path of the problem; deployments snapshot immutable versions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_TOKEN,
  adminError,
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

const GREETING = {
  inputs: { name: { type: 'string', required: true }, n: { type: 'number', default: 2 } },
  blocks: [
    { id: 'greet', type: 'function', code: 'return { message: `Hello, ${inputs.name}!` }' },
    {
      id: 'check',
      type: 'condition',
      branches: [{ id: 'long', if: '<greet.message>.length > 12' }, { id: 'short' }],
    },
    { id: 'done', type: 'response', data: { message: '<greet.message>', size: '<check.selected>' } },
  ],
  edges: [
    { from: 'greet', to: 'check' },
    { from: 'check', to: 'done', branch: 'long' },
    { from: 'check', to: 'done', branch: 'short' },
  ],
};

const create = (definition: unknown) =>
  svc.admin.workflows.create.mutate({ workspaceId: tenant.workspace.id, name: 'wf', definition });

async function refusal(definition: unknown) {
  const failure = await adminError(create(definition));
  expect(failure.code).toBe('BAD_REQUEST');
  return failure.details ?? [];
}

const paths = (details: { path: (string | number)[] }[]) => details.map((d) => d.path.join('.'));

describe('definition validation', () => {
  it('accepts the format of DESIGN.md', async () => {
    const wf = await create(GREETING);
    expect(wf).toMatchObject({ name: 'wf', workspaceId: tenant.workspace.id, deployedVersion: null });
    expect(wf.definition.blocks).toHaveLength(3);
  });

  it('names an unknown block type', async () => {
    const details = await refusal({ blocks: [{ id: 'a', type: 'teleport' }] });
    expect(paths(details)).toEqual(['definition.blocks.0.type']);
    expect(details[0]?.message).toMatch(/Unknown block type "teleport"/);
  });

  it('names a dangling edge', async () => {
    const details = await refusal({
      blocks: [{ id: 'a', type: 'response', data: 1 }],
      edges: [{ from: 'a', to: 'ghost' }],
    });
    expect(paths(details)).toEqual(['definition.edges.0.to']);
  });

  it('names a cycle', async () => {
    const details = await refusal({
      blocks: [
        { id: 'a', type: 'response', data: 1 },
        { id: 'b', type: 'response', data: 2 },
      ],
      edges: [
        { from: 'a', to: 'b' },
        { from: 'b', to: 'a' },
      ],
    });
    expect(details[0]?.message).toMatch(/Cycle between blocks "a", "b"/);
  });

  it('names a duplicate id, also across nested bodies', async () => {
    const details = await refusal({
      blocks: [
        { id: 'a', type: 'response', data: 1 },
        { id: 'each', type: 'loop', count: 2, blocks: [{ id: 'a', type: 'response', data: 2 }] },
      ],
    });
    expect(paths(details)).toEqual(['definition.blocks.1.blocks.0.id']);
    expect(details[0]?.message).toMatch(/Duplicate block id "a"/);
  });

  it('names a reference to a missing block, and to one that does not run before', async () => {
    const missing = await refusal({ blocks: [{ id: 'a', type: 'response', data: { x: '<nope.value>' } }] });
    expect(paths(missing)).toEqual(['definition.blocks.0.data.x']);
    expect(missing[0]?.message).toMatch(/missing block "nope"/);
    const unordered = await refusal({
      blocks: [
        { id: 'a', type: 'response', data: '<b.value>' },
        { id: 'b', type: 'response', data: 1 },
      ],
    });
    expect(unordered[0]?.message).toMatch(/does not run before/);
  });

  it('refuses loop variables outside a loop and accepts them inside', async () => {
    const details = await refusal({ blocks: [{ id: 'a', type: 'response', data: '<loop.item>' }] });
    expect(details[0]?.message).toMatch(/only available inside a loop/);
    await create({
      blocks: [
        {
          id: 'each',
          type: 'loop',
          forEach: [1, 2],
          blocks: [{ id: 'a', type: 'response', data: '<loop.item>' }],
        },
      ],
    });
  });

  it('names an edge to a branch the condition does not have', async () => {
    const details = await refusal({
      blocks: [
        { id: 'c', type: 'condition', branches: [{ id: 'yes', if: 'true' }] },
        { id: 'r', type: 'response', data: 1 },
      ],
      edges: [{ from: 'c', to: 'r', branch: 'maybe' }],
    });
    expect(paths(details)).toEqual(['definition.edges.0.branch']);
  });

  it("names a block's own config errors, but leaves a field written as a reference for run time", async () => {
    const details = await refusal({
      blocks: [
        { id: 'f', type: 'function' },
        { id: 'w', type: 'wait', ms: 'soon' },
      ],
    });
    expect(paths(details).sort()).toEqual(['definition.blocks.0.code', 'definition.blocks.1.ms']);
    await create({
      inputs: { ms: { type: 'number' } },
      blocks: [{ id: 'w', type: 'wait', ms: '<start.ms>' }],
    });
  });

  it('refuses reserved ids, bad ids, empty workflows and non-objects', async () => {
    expect(paths(await refusal({ blocks: [{ id: 'start', type: 'response', data: 1 }] }))).toEqual([
      'definition.blocks.0.id',
    ]);
    expect(paths(await refusal({ blocks: [{ id: '9lives', type: 'response', data: 1 }] }))).toEqual([
      'definition.blocks.0.id',
    ]);
    expect(paths(await refusal({ blocks: [] }))).toEqual(['definition.blocks']);
    expect((await refusal('not a workflow')).length).toBeGreaterThan(0);
  });

  it('checks the definition on update as on create, and changes nothing when refused', async () => {
    const wf = await create(GREETING);
    const failure = await adminError(
      svc.admin.workflows.update.mutate({ id: wf.id, definition: { blocks: [{ id: 'x', type: 'nope' }] } }),
    );
    expect(failure.code).toBe('BAD_REQUEST');
    expect((await svc.admin.workflows.get.query({ id: wf.id })).definition).toEqual(wf.definition);
  });

  it('sends the problems of a refused update to the client at their paths, in error.data.details', async () => {
    const wf = await create(GREETING);
    const definition = {
      blocks: [
        { id: 'a', type: 'teleport' },
        { id: 'b', type: 'response', data: 1 },
      ],
      edges: [{ from: 'b', to: 'nowhere' }],
    };
    const failure = await adminError(svc.admin.workflows.update.mutate({ id: wf.id, definition }));
    expect(failure).toMatchObject({ code: 'BAD_REQUEST', message: 'Invalid workflow definition' });
    expect(paths(failure.details ?? []).sort()).toEqual([
      'definition.blocks.0.type',
      'definition.edges.0.to',
    ]);
    // The wire as a console without the typed client reads it: {error: {message, data: {details}}}.
    const res = await svc.adminApp.request('http://admin.test/trpc/workflows.update', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
      body: JSON.stringify({
        id: wf.id,
        definition: { blocks: definition.blocks.slice(1), edges: definition.edges },
      }),
    });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.error.message).toBe('Invalid workflow definition');
    expect(body.error.data).toMatchObject({ code: 'BAD_REQUEST', httpStatus: 400 });
    expect(body.error.data.details).toEqual([
      {
        code: expect.any(String),
        path: ['definition', 'edges', 0, 'to'],
        message: expect.stringMatching(/nowhere/),
      },
    ]);
    expect((await svc.admin.workflows.get.query({ id: wf.id })).definition).toEqual(wf.definition);
  });
});

describe('deployment', () => {
  it('snapshots immutable versions: a draft edit after deploy does not change the deployed version', async () => {
    const wf = await create(GREETING);
    const first = await svc.admin.workflows.deploy.mutate({ id: wf.id });
    expect(first.version).toBe(1);
    await svc.admin.workflows.update.mutate({
      id: wf.id,
      definition: { blocks: [{ id: 'only', type: 'response', data: 'v2' }] },
    });
    const versions = await svc.admin.workflows.versions.query({ id: wf.id });
    expect(versions).toHaveLength(1);
    expect(versions[0]?.definition.blocks).toHaveLength(3);
    const second = await svc.admin.workflows.deploy.mutate({ id: wf.id });
    expect(second.version).toBe(2);
    expect((await svc.admin.workflows.get.query({ id: wf.id })).deployedVersion).toBe(2);
  });

  it('numbers racing deployments without gaps or duplicates', async () => {
    const wf = await create(GREETING);
    const results = await Promise.all(
      Array.from({ length: 4 }, () => svc.admin.workflows.deploy.mutate({ id: wf.id })),
    );
    expect(results.map((r) => r.version).sort()).toEqual([1, 2, 3, 4]);
  });

  it('undeploys, and refuses to undeploy twice', async () => {
    const wf = await create(GREETING);
    await svc.admin.workflows.deploy.mutate({ id: wf.id });
    expect((await svc.admin.workflows.undeploy.mutate({ id: wf.id })).deployedVersion).toBeNull();
    expect((await adminError(svc.admin.workflows.undeploy.mutate({ id: wf.id }))).code).toBe('CONFLICT');
  });

  it('records workflow.created and workflow.deployed', async () => {
    const wf = await create(GREETING);
    await svc.admin.workflows.deploy.mutate({ id: wf.id });
    const res = await svc.call('GET', '/api/v1/audit-logs', {
      key: tenant.key,
      query: { workspaceId: tenant.workspace.id, resourceId: wf.id },
    });
    expect(res.body.data.map((e: { action: string }) => e.action)).toEqual([
      'workflow.deployed',
      'workflow.created',
    ]);
  });

  it('makes the default workflow of a new workspace a valid, deployable agent workflow', async () => {
    const ws = (
      await svc.call('POST', '/api/v1/workspaces', { key: tenant.key, body: { name: 'With agent' } })
    ).body.data.workspace;
    const [wf] = await svc.admin.workflows.list.query({ workspaceId: ws.id });
    expect(wf?.definition.blocks.map((b) => b.type)).toEqual(['agent', 'response']);
    expect((await svc.admin.workflows.deploy.mutate({ id: wf?.id as string })).version).toBe(1);
  });

  it('answers NOT_FOUND for unknown workflows', async () => {
    const id = crypto.randomUUID();
    // Called one at a time: a rejection must never wait unobserved.
    for (const call of [
      () => svc.admin.workflows.get.query({ id }),
      () => svc.admin.workflows.deploy.mutate({ id }),
      () => svc.admin.workflows.versions.query({ id }),
    ]) {
      expect((await adminError(call())).code).toBe('NOT_FOUND');
    }
  });
});

describe('secrets', () => {
  it('stores values sealed, lists names only, deletes', async () => {
    await svc.admin.secrets.set.mutate({
      workspaceId: tenant.workspace.id,
      name: 'API_TOKEN',
      value: 'very-secret-value',
    });
    const listed = await svc.admin.secrets.list.query({ workspaceId: tenant.workspace.id });
    expect(listed.map((s) => s.name)).toEqual(['API_TOKEN']);
    expect(JSON.stringify(listed)).not.toContain('very-secret-value');
    const [row] = await svc.db.query<{ value_ciphertext: Uint8Array }>(
      'select value_ciphertext from workspace_secrets',
    );
    expect(Buffer.from(row?.value_ciphertext as Uint8Array).toString('latin1')).not.toContain(
      'very-secret-value',
    );
    await svc.admin.secrets.delete.mutate({ workspaceId: tenant.workspace.id, name: 'API_TOKEN' });
    expect(await svc.admin.secrets.list.query({ workspaceId: tenant.workspace.id })).toEqual([]);
    expect(
      (
        await adminError(
          svc.admin.secrets.delete.mutate({ workspaceId: tenant.workspace.id, name: 'API_TOKEN' }),
        )
      ).code,
    ).toBe('NOT_FOUND');
  });

  it('refuses bad names', async () => {
    const failure = await adminError(
      svc.admin.secrets.set.mutate({ workspaceId: tenant.workspace.id, name: '1-bad', value: 'x' }),
    );
    expect(failure.code).toBe('BAD_REQUEST');
  });
});
