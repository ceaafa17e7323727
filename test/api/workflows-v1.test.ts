// /api/v1/workflows through the public API: each endpoint, its unhappy paths (wrong key kind,
// read-only permission, other workspace, bad cursor, invalid definition, rollback to a missing
// version), its audit entries, and the round trip create → deploy → execute → update → deploy →
// rollback → execute (version 1 again) → export → import elsewhere → execute there.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addPerson,
  createTenant,
  createWorkspace,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';

let svc: TestService;
let tenant: Tenant;

beforeAll(async () => {
  svc = await startTestService({}, { runner: true });
  tenant = await createTenant(svc.admin, { plan: 'enterprise' });
  await svc.admin.quotas.set.mutate({
    orgId: tenant.org.id,
    api: { requestsPerMinute: 100_000, maxBurst: 200_000 },
  });
}, 60_000);
afterAll(() => svc?.close());

const says = (text: string) => ({
  inputs: { name: { type: 'string', required: true } },
  blocks: [
    { id: 'greet', type: 'function', code: `return { message: ${JSON.stringify(text)} + inputs.name }` },
    { id: 'done', type: 'response', data: { message: '<greet.message>' } },
  ],
  edges: [{ from: 'greet', to: 'done' }],
});

const create = (key: string, body: unknown) => svc.call('POST', '/api/v1/workflows', { key, body });
const auditActions = async (id: string) =>
  (
    await svc.db.query<{ action: string }>(
      'select action from audit_logs where resource_id = $1 order by created_at, action',
      [id],
    )
  ).map((r) => r.action);
const countWorkflows = async () =>
  Number((await svc.db.query<{ n: string }>('select count(*) as n from workflows'))[0]?.n);

async function yamlRequest(key: string, path: string, text: string) {
  const res = await svc.app.request(`http://api.test${path}`, {
    method: 'POST',
    headers: { 'X-API-Key': key, 'Content-Type': 'application/yaml' },
    body: text,
  });
  return { status: res.status, body: await res.json() };
}

describe('create, get, list, update', () => {
  it('creates from JSON and from YAML, and gets the draft with its inputs', async () => {
    const ws = await createWorkspace(svc.admin, tenant);
    const json = await create(tenant.key, { workspaceId: ws, name: 'Greet', definition: says('Hi ') });
    expect(json.status).toBe(201);
    expect(json.body.data).toMatchObject({ name: 'Greet', isDeployed: false, deployment: null });
    const yaml = await yamlRequest(
      tenant.key,
      '/api/v1/workflows',
      `workspaceId: ${ws}\nname: From YAML\ndescription: piped\ndefinition:\n  inputs: {}\n  blocks:\n    - { id: done, type: response, data: { ok: true } }\n  edges: []\n`,
    );
    expect(yaml.status).toBe(201);
    expect(yaml.body.data).toMatchObject({ name: 'From YAML', description: 'piped' });
    const got = await svc.call('GET', `/api/v1/workflows/${json.body.data.id}`, { key: tenant.key });
    expect(got.status).toBe(200);
    expect(got.body.data.inputs).toEqual({ name: { type: 'string', required: true } });
    expect(got.body.data.definition.blocks).toHaveLength(2);
    expect(await auditActions(json.body.data.id)).toEqual(['workflow.created']);
  });

  it('refuses bad input with a 400 naming the path, and changes nothing', async () => {
    const ws = await createWorkspace(svc.admin, tenant);
    const before = await countWorkflows();
    const bad = await create(tenant.key, {
      workspaceId: ws,
      name: 'Bad',
      definition: { inputs: {}, blocks: [{ id: 'a', type: 'nope' }], edges: [] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('Invalid workflow definition');
    expect(bad.body.details[0].path.slice(0, 3)).toEqual(['definition', 'blocks', 0]);
    const noName = await create(tenant.key, { workspaceId: ws, definition: says('x') });
    expect(noName.status).toBe(400);
    expect(noName.body.details[0].path).toEqual(['name']);
    const badYaml = await yamlRequest(tenant.key, '/api/v1/workflows', 'name: [unclosed\n');
    expect(badYaml.status).toBe(400);
    expect(badYaml.body.error).toMatch(/^Malformed YAML body/);
    expect(await countWorkflows()).toBe(before);
    const id = (await create(tenant.key, { workspaceId: ws, name: 'Ok', definition: says('x') })).body.data
      .id;
    const badUpdate = await svc.call('PUT', `/api/v1/workflows/${id}`, {
      key: tenant.key,
      body: { definition: { inputs: {}, blocks: [], edges: [{ from: 'a', to: 'b' }] } },
    });
    expect(badUpdate.status).toBe(400);
    expect(badUpdate.body.details[0].path[0]).toBe('definition');
    expect((await svc.call('PUT', `/api/v1/workflows/${id}`, { key: tenant.key, body: {} })).status).toBe(
      400,
    );
    expect(
      (await svc.call('GET', '/api/v1/workflows/not-a-uuid', { key: tenant.key })).body.details[0].path,
    ).toEqual(['workflowId']);
    const renamed = await svc.call('PUT', `/api/v1/workflows/${id}`, {
      key: tenant.key,
      body: { name: 'Renamed' },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data.name).toBe('Renamed');
    expect(await auditActions(id)).toEqual(['workflow.created', 'workflow.updated']);
  });

  it('lists with cursor pages, deployedOnly, and refuses a bad cursor', async () => {
    const ws = await createWorkspace(svc.admin, tenant);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(
        (await create(tenant.key, { workspaceId: ws, name: `w${i}`, definition: says('x') })).body.data.id,
      );
    await svc.call('POST', `/api/v1/workflows/${ids[3]}/deploy`, { key: tenant.key });
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const res = await svc.call('GET', '/api/v1/workflows', {
        key: tenant.key,
        query: { workspaceId: ws, limit: 2, cursor },
      });
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((w: { id: string }) => w.id));
      cursor = res.body.nextCursor;
      if (!cursor) break;
    }
    expect(seen).toEqual(ids);
    const deployed = await svc.call('GET', '/api/v1/workflows', {
      key: tenant.key,
      query: { workspaceId: ws, deployedOnly: true },
    });
    expect(deployed.body.data.map((w: { id: string }) => w.id)).toEqual([ids[3]]);
    expect(deployed.body.nextCursor).toBeUndefined();
    for (const bad of ['nope', Buffer.from('{"t":"x","id":"y"}').toString('base64url')]) {
      const res = await svc.call('GET', '/api/v1/workflows', {
        key: tenant.key,
        query: { workspaceId: ws, cursor: bad },
      });
      expect(res.status).toBe(400);
      expect(res.body.details[0].path).toEqual(['cursor']);
    }
    const tooMany = await svc.call('GET', '/api/v1/workflows', {
      key: tenant.key,
      query: { workspaceId: ws, limit: 101 },
    });
    expect(tooMany.status).toBe(400);
  });
});

describe('who may', () => {
  it('read keys read, write needs write; other workspaces and disabled personal keys are refused', async () => {
    const ws = tenant.workspace.id;
    const id = (await create(tenant.key, { workspaceId: ws, name: 'Guarded', definition: says('x') })).body
      .data.id;
    const reader = await addPerson(svc.admin, tenant, { permission: 'read' });
    expect((await svc.call('GET', `/api/v1/workflows/${id}`, { key: reader.key })).status).toBe(200);
    expect((await svc.call('GET', `/api/v1/workflows/${id}/versions`, { key: reader.key })).status).toBe(200);
    const before = await countWorkflows();
    for (const res of [
      await create(reader.key, { workspaceId: ws, name: 'No', definition: says('x') }),
      await svc.call('PUT', `/api/v1/workflows/${id}`, { key: reader.key, body: { name: 'No' } }),
      await svc.call('POST', `/api/v1/workflows/${id}/deploy`, { key: reader.key }),
      await svc.call('DELETE', `/api/v1/workflows/${id}/deploy`, { key: reader.key }),
      await svc.call('POST', `/api/v1/workflows/${id}/rollback`, { key: reader.key, body: { version: 1 } }),
      await svc.call('POST', '/api/v1/workflows/import', {
        key: reader.key,
        body: { workspaceId: ws, workflow: says('x') },
      }),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.error).toBe('This action needs write permission on the workspace');
    }
    expect(await countWorkflows()).toBe(before);
    expect((await svc.call('GET', `/api/v1/workflows/${id}`, { key: tenant.key })).body.data).toMatchObject({
      name: 'Guarded',
      isDeployed: false,
    });

    // A workspace key writes in its own workspace only; elsewhere the workflow is not found.
    const own = await svc.admin.keys.create.mutate({ type: 'workspace', workspaceId: ws, name: 'ci' });
    expect((await svc.call('POST', `/api/v1/workflows/${id}/deploy`, { key: own.key })).status).toBe(200);
    const otherWs = await createWorkspace(svc.admin, tenant);
    const other = await svc.admin.keys.create.mutate({
      type: 'workspace',
      workspaceId: otherWs,
      name: 'other',
    });
    expect((await svc.call('GET', `/api/v1/workflows/${id}`, { key: other.key })).status).toBe(404);
    expect((await svc.call('POST', `/api/v1/workflows/${id}/deploy`, { key: other.key })).status).toBe(404);
    const list = await svc.call('GET', '/api/v1/workflows', { key: other.key, query: { workspaceId: ws } });
    expect(list.status).toBe(403);
    expect(list.body.error).toBe('This workspace key belongs to another workspace');
    const stranger = await createTenant(svc.admin);
    expect((await svc.call('GET', `/api/v1/workflows/${id}`, { key: stranger.key })).status).toBe(404);
    expect((await create(stranger.key, { workspaceId: ws, name: 'In', definition: says('x') })).status).toBe(
      403,
    );

    await svc.admin.workspaces.update.mutate({ workspaceId: ws, allowPersonalApiKeys: false });
    try {
      const refused = await svc.call('GET', `/api/v1/workflows/${id}`, { key: tenant.key });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toBe(
        'Personal API keys are disabled in this workspace; use a workspace key',
      );
      expect((await svc.call('GET', `/api/v1/workflows/${id}`, { key: own.key })).status).toBe(200);
    } finally {
      await svc.admin.workspaces.update.mutate({ workspaceId: ws, allowPersonalApiKeys: true });
    }
    expect((await svc.call('GET', `/api/v1/workflows/${id}`)).status).toBe(401);
  });
});

describe('deployments', () => {
  it('undeploy, rollback to a missing version, versions, export of a missing version', async () => {
    const ws = await createWorkspace(svc.admin, tenant);
    const id = (await create(tenant.key, { workspaceId: ws, name: 'D', definition: says('x') })).body.data.id;
    const k = { key: tenant.key };
    expect((await svc.call('DELETE', `/api/v1/workflows/${id}/deploy`, k)).status).toBe(409);
    const first = await svc.call('POST', `/api/v1/workflows/${id}/deploy`, k);
    expect(first.body.data).toMatchObject({ id, isDeployed: true, version: 1 });
    const missing = await svc.call('POST', `/api/v1/workflows/${id}/rollback`, {
      ...k,
      body: { version: 7 },
    });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('Version 7 of this workflow not found');
    expect(
      (await svc.call('POST', `/api/v1/workflows/${id}/rollback`, { ...k, body: { version: 0 } })).status,
    ).toBe(400);
    expect(
      (await svc.call('GET', `/api/v1/workflows/${id}/export`, { ...k, query: { version: 7 } })).status,
    ).toBe(404);
    const off = await svc.call('DELETE', `/api/v1/workflows/${id}/deploy`, k);
    expect(off.body.data).toEqual({ id, isDeployed: false, deployedAt: null });
    const versions = await svc.call('GET', `/api/v1/workflows/${id}/versions`, k);
    expect(versions.body.data).toMatchObject([{ version: 1, deployed: false }]);
    const execute = await svc.call('POST', `/api/workflows/${id}/execute`, {
      ...k,
      body: { inputs: { name: 'A' } },
    });
    expect(execute.status).toBeGreaterThanOrEqual(400);
    expect(await auditActions(id)).toEqual(['workflow.created', 'workflow.deployed', 'workflow.undeployed']);
  });

  it('delete archives: admin only, undeployed at once, gone from the routes, executions refused', async () => {
    const ws = tenant.workspace.id;
    const id = (await create(tenant.key, { workspaceId: ws, name: 'Doomed', definition: says('x') })).body
      .data.id;
    expect((await svc.call('POST', `/api/v1/workflows/${id}/deploy`, { key: tenant.key })).status).toBe(200);
    const writer = await addPerson(svc.admin, tenant, { permission: 'write' });
    const wsKey = await svc.admin.keys.create.mutate({ type: 'workspace', workspaceId: ws, name: 'ci' });
    for (const key of [writer.key, wsKey.key]) {
      const refused = await svc.call('DELETE', `/api/v1/workflows/${id}`, { key });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toBe('This action needs admin permission on the workspace');
    }
    const done = await svc.call('DELETE', `/api/v1/workflows/${id}`, { key: tenant.key });
    expect(done.status).toBe(200);
    expect(done.body.data).toMatchObject({ id, archived: true });
    expect((await svc.call('GET', `/api/v1/workflows/${id}`, { key: tenant.key })).status).toBe(404);
    expect((await svc.call('DELETE', `/api/v1/workflows/${id}`, { key: tenant.key })).status).toBe(404);
    expect((await svc.call('POST', `/api/v1/workflows/${id}/deploy`, { key: tenant.key })).status).toBe(404);
    await expect(svc.admin.workflows.deploy.mutate({ id })).rejects.toThrow(/not found/);
    const list = await svc.call('GET', '/api/v1/workflows', {
      key: tenant.key,
      query: { workspaceId: ws, limit: 100 },
    });
    expect(list.body.data.map((w: { id: string }) => w.id)).not.toContain(id);
    const run = await svc.call('POST', `/api/workflows/${id}/execute`, {
      key: tenant.key,
      body: { inputs: { name: 'A' } },
    });
    expect(run.status).toBe(400);
    expect(await auditActions(id)).toContain('workflow.deleted');
  });

  it("the workspace's MCP tools follow deploys, undeploys and deletes at once", async () => {
    const ws = await createWorkspace(svc.admin, tenant);
    const tools = async () => {
      const res = await svc.call('POST', `/api/mcp/${ws}`, {
        key: tenant.key,
        headers: { Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2025-06-18' },
        body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      });
      expect(res.status).toBe(200);
      return res.body.result.tools.map((t: { name: string }) => t.name);
    };
    const id = (await create(tenant.key, { workspaceId: ws, name: 'Mcp follows', definition: says('x') }))
      .body.data.id;
    expect(await tools()).toEqual([]);
    await svc.call('POST', `/api/v1/workflows/${id}/deploy`, { key: tenant.key });
    expect(await tools()).toEqual(['mcp-follows']);
    await svc.call('DELETE', `/api/v1/workflows/${id}/deploy`, { key: tenant.key });
    expect(await tools()).toEqual([]);
    await svc.call('POST', `/api/v1/workflows/${id}/rollback`, { key: tenant.key, body: { version: 1 } });
    expect(await tools()).toEqual(['mcp-follows']);
    await svc.call('DELETE', `/api/v1/workflows/${id}`, { key: tenant.key });
    expect(await tools()).toEqual([]);
  });

  it('round trip: create, deploy, execute, update, deploy, rollback, execute v1, export, import, execute there', async () => {
    const ws = await createWorkspace(svc.admin, tenant);
    const k = { key: tenant.key };
    const run = async (id: string) => {
      const res = await svc.call('POST', `/api/workflows/${id}/execute`, {
        ...k,
        body: { inputs: { name: 'Ada' } },
      });
      expect(res.status).toBe(200);
      return res.body.output.message as string;
    };
    const id = (
      await create(tenant.key, { workspaceId: ws, name: 'Trip', description: 'd', definition: says('v1 ') })
    ).body.data.id;
    expect((await svc.call('POST', `/api/v1/workflows/${id}/deploy`, k)).body.data.version).toBe(1);
    expect(await run(id)).toBe('v1 Ada');
    expect(
      (await svc.call('PUT', `/api/v1/workflows/${id}`, { ...k, body: { definition: says('v2 ') } })).status,
    ).toBe(200);
    expect(await run(id)).toBe('v1 Ada');
    expect((await svc.call('POST', `/api/v1/workflows/${id}/deploy`, k)).body.data.version).toBe(2);
    expect(await run(id)).toBe('v2 Ada');
    const back = await svc.call('POST', `/api/v1/workflows/${id}/rollback`, { ...k, body: { version: 1 } });
    expect(back.body.data).toMatchObject({ version: 1, previousVersion: 2, isDeployed: true });
    expect(await run(id)).toBe('v1 Ada');
    const got = await svc.call('GET', `/api/v1/workflows/${id}`, k);
    expect(got.body.data.deployment.version).toBe(1);
    expect(got.body.data.definition.blocks[0].code).toContain('v2 ');

    const exported = await svc.call('GET', `/api/v1/workflows/${id}/export`, { ...k, query: { version: 1 } });
    expect(exported.body.data).toMatchObject({
      version: '1.0',
      workflow: { id, name: 'Trip' },
      deployedVersion: 1,
    });
    const yaml = await svc.app.request(
      `http://api.test/api/v1/workflows/${id}/export?format=yaml&version=1`,
      {
        headers: { 'X-API-Key': tenant.key },
      },
    );
    expect(yaml.headers.get('content-type')).toMatch(/^application\/yaml/);
    const yamlText = await yaml.text();

    const elsewhere = await createTenant(svc.admin, { plan: 'enterprise' });
    const there = elsewhere.workspace.id;
    const imported = await svc.call('POST', '/api/v1/workflows/import', {
      key: elsewhere.key,
      body: { workspaceId: there, workflow: exported.body.data },
    });
    expect(imported.status).toBe(201);
    expect(imported.body.data).toMatchObject({
      name: 'Trip',
      description: 'd',
      workspaceId: there,
      isDeployed: false,
    });
    const copy = imported.body.data.id;
    expect((await svc.call('POST', `/api/v1/workflows/${copy}/deploy`, { key: elsewhere.key })).status).toBe(
      200,
    );
    const ran = await svc.call('POST', `/api/workflows/${copy}/execute`, {
      key: elsewhere.key,
      body: { inputs: { name: 'Ada' } },
    });
    expect(ran.body.output.message).toBe('v1 Ada');
    expect(await auditActions(copy)).toEqual(
      expect.arrayContaining(['workflow.created', 'workflow.imported', 'workflow.deployed']),
    );

    // The YAML export imports as well, as YAML, wrapped with the workspace.
    const fromYaml = await yamlRequest(
      elsewhere.key,
      '/api/v1/workflows/import',
      `workspaceId: ${there}\nname: From file\nworkflow:\n${yamlText.replace(/^/gm, '  ')}`,
    );
    expect(fromYaml.status).toBe(201);
    expect(fromYaml.body.data.definition.blocks[0].code).toContain('v1 ');
    // A bare definition imports too; an invalid one names its path under `workflow`.
    const bare = await svc.call('POST', '/api/v1/workflows/import', {
      key: elsewhere.key,
      body: { workspaceId: there, workflow: says('bare '), name: 'Bare' },
    });
    expect(bare.body.data.name).toBe('Bare');
    const invalid = await svc.call('POST', '/api/v1/workflows/import', {
      key: elsewhere.key,
      body: { workspaceId: there, workflow: { version: '1.0', definition: { blocks: 3 } } },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.details[0].path.slice(0, 2)).toEqual(['workflow', 'definition']);

    const auditOrder = await auditActions(id);
    expect(auditOrder).toContain('workflow.rolled_back');
    expect(auditOrder.filter((a) => a === 'workflow.deployed')).toHaveLength(2);
  });
});
