// The MCP endpoint /api/mcp/{workspaceId} through the official SDK client over a real port: the
// handshake, one tool per deployed workflow of that workspace only, calls that run the workflow on
// the real runner (and leave an execution log), tool errors for failed runs, bad inputs, missing
// permission and rate limits, and plain JSON errors for keys and workspaces that do not fit.
import { Client } from '@modelcontextprotocol/sdk/client';
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.d.ts"
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CallToolResult, ErrorCode, McpError } from '../../api/routes/mcp/sdk.ts';
import { TOOL_NAME, toolNames } from '../../api/routes/mcp/tools.ts';
import { type Listening, listen } from '../../http/serve.ts';
import {
  addPerson,
  createTenant,
  createWorkspace,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';
import { deployWorkflow } from '../helpers/workflows.ts';

let svc: TestService;
let server: Listening;
let tenant: Tenant;
const ids: Record<string, string> = {};
// Frozen: a bucket emptied by a test stays empty (no refill while the test runs).
const clock = () => new Date('2026-03-10T12:00:00.000Z');

const GREET = {
  inputs: {
    name: { type: 'string', required: true, description: 'Who to greet' },
    n: { type: 'number', default: 2 },
    tags: { type: 'array' },
    extra: { type: 'any', description: 'Anything at all' },
  },
  blocks: [
    { id: 'greet', type: 'function', code: 'return { message: `Hello, ${inputs.name}!`, n: inputs.n }' },
    { id: 'done', type: 'response', data: { message: '<greet.message>', n: '<greet.n>' } },
  ],
  edges: [{ from: 'greet', to: 'done' }],
};
const BOOM = { blocks: [{ id: 'boom', type: 'function', code: 'throw new Error("kaput")' }] };
const reply = (data: unknown) => ({ blocks: [{ id: 'r', type: 'response', data }] });

async function createWorkflow(workspaceId: string, name: string, definition: unknown, description?: string) {
  const wf = await svc.admin.workflows.create.mutate({
    workspaceId,
    name,
    definition,
    ...(description ? { description } : {}),
  });
  return wf.id as string;
}

beforeAll(async () => {
  svc = await startTestService({}, { runner: true, clock });
  server = await listen(svc.app, 0, '127.0.0.1');
  tenant = await createTenant(svc.admin);
  const ws = tenant.workspace.id;
  ids.greet = await createWorkflow(ws, 'Greet person', GREET, 'Says hello to someone');
  await svc.admin.workflows.deploy.mutate({ id: ids.greet });
  // Same name: the older one keeps the plain slug.
  ids.greetAgain = await deployWorkflow(svc.admin, ws, reply('again'), 'Greet person');
  ids.boom = await deployWorkflow(svc.admin, ws, BOOM, 'Boom!');
  ids.text = await deployWorkflow(svc.admin, ws, reply('plain text'), 'Text');
  ids.draft = await createWorkflow(ws, 'Draft only', reply('draft'));
  ids.retired = await deployWorkflow(svc.admin, ws, reply('retired'), 'Retired');
  await svc.admin.workflows.undeploy.mutate({ id: ids.retired });
  // Deployed elsewhere: another workspace of the same owner, and another tenant.
  const sibling = await createWorkspace(svc.admin, tenant);
  await deployWorkflow(svc.admin, sibling, reply('sibling'), 'Sibling tool');
  const other = await createTenant(svc.admin);
  await deployWorkflow(svc.admin, other.workspace.id, reply('other'), 'Other tenant tool');
  ids.otherWorkspace = other.workspace.id;
});
afterAll(async () => {
  await server?.close();
  await svc?.close();
});

const endpoint = (workspaceId: string) => `${server.url}/api/mcp/${workspaceId}`;

/** An SDK client connected (initialized) to a workspace's MCP endpoint with a key. */
async function connect(key: string, workspaceId = tenant.workspace.id) {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(endpoint(workspaceId)), {
    requestInit: { headers: { 'X-API-Key': key } },
  });
  await client.connect(transport);
  return { client, transport };
}

const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;
const textOf = (result: CallToolResult) => (result.content[0] as { type: 'text'; text: string }).text;

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
};

/** A raw POST of JSON-RPC, for the answers the SDK client would not show as they are. */
async function post(workspaceId: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(endpoint(workspaceId), {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

const executionCount = async () =>
  Number(
    (
      await svc.db.query<{ n: string }>('select count(*) as n from executions where workspace_id = $1', [
        tenant.workspace.id,
      ])
    )[0]?.n,
  );

describe('handshake', () => {
  it('initializes a stateless server named after the workspace, with tools', async () => {
    const { client, transport } = await connect(tenant.key);
    expect(client.getServerVersion()).toMatchObject({ name: 'workflow-service', title: 'Main workflows' });
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    expect(client.getInstructions()).toContain('"Main"');
    // No session: any API process can answer the next request.
    expect(transport.sessionId).toBeUndefined();
    await client.close();
  });

  it('answers initialize over plain HTTP with JSON and no session id (curl works)', async () => {
    const res = await post(tenant.workspace.id, INITIALIZE, { 'X-API-Key': tenant.key });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(res.body).toMatchObject({
      jsonrpc: '2.0',
      id: 1,
      result: { serverInfo: { name: 'workflow-service' } },
    });
    const list = await post(
      tenant.workspace.id,
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { 'X-API-Key': tenant.key, 'MCP-Protocol-Version': '2025-06-18' },
    );
    expect(list.status).toBe(200);
    expect(list.body.result.tools.map((t: { name: string }) => t.name)).toContain('greet-person');
  });

  it('answers GET and DELETE with 405 and a JSON-RPC error: there is no stream and no session', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(endpoint(tenant.workspace.id), {
        method,
        headers: { 'X-API-Key': tenant.key, Accept: 'text/event-stream' },
      });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 }, id: null });
    }
  });
});

describe('tools/list', () => {
  it('lists exactly the deployed workflows of this workspace, oldest first', async () => {
    const { client } = await connect(tenant.key);
    const { tools } = await client.listTools();
    const suffix = ids.greetAgain?.replaceAll('-', '').slice(0, 8);
    expect(tools.map((t) => t.name)).toEqual(['greet-person', `greet-person-${suffix}`, 'boom', 'text']);
    for (const t of tools) expect(t.name).toMatch(TOOL_NAME);
    await client.close();
  });

  it('describes each tool and builds its input schema from the declared inputs', async () => {
    const { client } = await connect(tenant.key);
    const { tools } = await client.listTools();
    const greet = tools.find((t) => t.name === 'greet-person');
    expect(greet).toMatchObject({ title: 'Greet person', description: 'Says hello to someone' });
    expect(greet?.inputSchema).toEqual({
      type: 'object',
      properties: {
        name: { type: 'string', description: 'Who to greet' },
        n: { type: 'number', default: 2 },
        tags: { type: 'array' },
        extra: { description: 'Anything at all' },
      },
      required: ['name'],
    });
    const boom = tools.find((t) => t.name === 'boom');
    expect(boom?.description).toBe('Runs the workflow "Boom!" and returns its output.');
    expect(boom?.inputSchema).toEqual({ type: 'object', properties: {} });
    await client.close();
  });

  it('gives another workspace its own tools only', async () => {
    const other = await createTenant(svc.admin);
    const { client } = await connect(other.key, other.workspace.id);
    expect((await client.listTools()).tools).toEqual([]);
    await client.close();
  });
});

describe('tools/call', () => {
  it('runs the deployed workflow and answers its output as text and structured content', async () => {
    const { client } = await connect(tenant.key);
    const result = await call(client, 'greet-person', { name: 'Ada' });
    expect(result.isError).toBeFalsy();
    expect(JSON.parse(textOf(result))).toEqual({ message: 'Hello, Ada!', n: 2 });
    expect(result.structuredContent).toEqual({ message: 'Hello, Ada!', n: 2 });

    // The run is an ordinary execution: its log entry names the MCP trigger.
    const executionId = result._meta?.executionId as string;
    expect(executionId).toMatch(/^[0-9a-f-]{36}$/);
    const logs = await svc.call('GET', '/api/v1/logs', {
      key: tenant.key,
      query: { workspaceId: tenant.workspace.id, executionId },
    });
    expect(logs.status).toBe(200);
    expect(logs.body.data).toEqual([
      expect.objectContaining({ executionId, workflowId: ids.greet, level: 'info', trigger: 'mcp' }),
    ]);
    await client.close();
  });

  it('runs the disambiguated tool as its own workflow', async () => {
    const { client } = await connect(tenant.key);
    const suffix = ids.greetAgain?.replaceAll('-', '').slice(0, 8);
    const result = await call(client, `greet-person-${suffix}`);
    expect(JSON.parse(textOf(result))).toBe('again');
    await client.close();
  });

  it('answers an output that is not an object as JSON text without structured content', async () => {
    const { client } = await connect(tenant.key);
    const result = await call(client, 'text');
    expect(textOf(result)).toBe('"plain text"');
    expect(result.structuredContent).toBeUndefined();
    await client.close();
  });

  it('answers a failed run as a tool error with the error text', async () => {
    const { client } = await connect(tenant.key);
    const result = await call(client, 'boom');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/Block "boom" failed: .*kaput/);
    const logs = await svc.call('GET', '/api/v1/logs', {
      key: tenant.key,
      query: { workspaceId: tenant.workspace.id, executionId: result._meta?.executionId as string },
    });
    expect(logs.body.data).toEqual([expect.objectContaining({ level: 'error', trigger: 'mcp' })]);
    await client.close();
  });

  it('answers invalid inputs as a tool error naming each field, and runs nothing', async () => {
    const { client } = await connect(tenant.key);
    const before = await executionCount();
    const result = await call(client, 'greet-person', { n: 'three' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('Invalid workflow inputs');
    expect(textOf(result)).toContain('inputs.name: Required input "name" is missing');
    expect(textOf(result)).toContain('inputs.n: Expected number, received string');
    const { error, details } = result.structuredContent as { error: string; details: unknown[] };
    expect(error).toBe('Invalid workflow inputs');
    expect(details).toHaveLength(2);
    expect(details).toEqual(
      expect.arrayContaining([
        { code: 'invalid_type', path: ['inputs', 'name'], message: 'Required input "name" is missing' },
        { code: 'invalid_type', path: ['inputs', 'n'], message: 'Expected number, received string' },
      ]),
    );
    expect(await executionCount()).toBe(before);
    await client.close();
  });

  it('refuses an unknown tool, a draft and an undeployed workflow with an MCP error', async () => {
    const { client } = await connect(tenant.key);
    for (const name of ['no-such-tool', 'draft-only', 'retired', 'sibling-tool', 'other-tenant-tool']) {
      const err = await client.callTool({ name, arguments: {} }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(McpError);
      expect((err as McpError).code).toBe(ErrorCode.InvalidParams);
      expect((err as McpError).message).toContain(`Unknown tool: ${name}`);
    }
    await client.close();
  });

  it('answers a read-only member: lists the tools, and a call is a tool error naming the permission', async () => {
    const reader = await addPerson(svc.admin, tenant, { permission: 'read' });
    const { client } = await connect(reader.key);
    expect((await client.listTools()).tools.length).toBe(4);
    const before = await executionCount();
    const result = await call(client, 'greet-person', { name: 'Ada' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('This action needs write permission on the workspace');
    expect(await executionCount()).toBe(before);
    await client.close();
  });

  it('works with a workspace key of that workspace', async () => {
    const { key } = await svc.admin.keys.create.mutate({
      type: 'workspace',
      workspaceId: tenant.workspace.id,
      name: 'mcp key',
    });
    const { client } = await connect(key);
    const result = await call(client, 'greet-person', { name: 'Key' });
    expect(result.structuredContent).toEqual({ message: 'Hello, Key!', n: 2 });
    await client.close();
  });

  it('answers an empty bucket as a tool error saying so, and runs nothing', async () => {
    const limited = await createTenant(svc.admin);
    await deployWorkflow(svc.admin, limited.workspace.id, reply({ ok: true }), 'Echo');
    await svc.admin.quotas.set.mutate({ orgId: limited.org.id, sync: { requestsPerMinute: 1, maxBurst: 1 } });
    const { client } = await connect(limited.key, limited.workspace.id);
    expect((await call(client, 'echo')).structuredContent).toEqual({ ok: true });
    const refused = await call(client, 'echo');
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(
      /^Rate limit exceeded for sync executions: 1 per minute .*retry in \d+ s$/,
    );
    const runs = await svc.db.query('select id from executions where workspace_id = $1', [
      limited.workspace.id,
    ]);
    expect(runs).toHaveLength(1);
    await client.close();
  });
});

describe('tool names', () => {
  const hex8 = (id: string) => id.replaceAll('-', '').slice(0, 8);

  it('slugs the name, and suffixes a later namesake with its id (then its whole id)', () => {
    const [a, b, c] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    const names = toolNames([
      { id: a, name: 'Report' },
      { id: b, name: 'report' },
      // Named exactly like b's tool: it must not take it.
      { id: c, name: `report-${hex8(b)}` },
    ]);
    expect(names).toEqual(['report', `report-${hex8(b)}`, `report-${hex8(b)}-${hex8(c)}`]);
  });

  it('names a workflow without letters or digits "workflow", and caps long names at 64', () => {
    const long = 'An extremely long workflow name '.repeat(8);
    const names = toolNames([
      { id: crypto.randomUUID(), name: '日本語' },
      { id: crypto.randomUUID(), name: long },
      { id: crypto.randomUUID(), name: long },
    ]);
    expect(names[0]).toBe('workflow');
    for (const n of names) expect(n).toMatch(TOOL_NAME);
    expect(new Set(names).size).toBe(3);
  });

  it('always gives valid, distinct names, the same ones for the same workflows', () => {
    const workflow = fc.record({
      id: fc.uuid(),
      name: fc.oneof(fc.string({ maxLength: 80 }), fc.constantFrom('a', 'A', 'a-1', 'Report', 'report', '')),
    });
    fc.assert(
      fc.property(fc.uniqueArray(workflow, { selector: (w) => w.id, maxLength: 30 }), (workflows) => {
        const names = toolNames(workflows);
        expect(new Set(names).size).toBe(workflows.length);
        for (const n of names) expect(n).toMatch(TOOL_NAME);
        expect(toolNames(workflows)).toEqual(names);
      }),
    );
  });
});

describe('keys and workspaces', () => {
  it('answers a missing or wrong key with 401 {error}, before anything else', async () => {
    const missing = await post(tenant.workspace.id, INITIALIZE);
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({ error: 'Missing API key: send it in the X-API-Key header' });
    const wrong = await post(tenant.workspace.id, INITIALIZE, { 'X-API-Key': 'sk-service-nope' });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ error: 'Invalid or revoked API key' });
    // The SDK client fails to connect, and says why.
    await expect(connect('sk-service-nope')).rejects.toMatchObject({
      code: 401,
      message: expect.stringContaining('Invalid or revoked API key'),
    });
  });

  it("answers another tenant's workspace and an unknown one alike: 404, nothing leaked", async () => {
    const other = await post(ids.otherWorkspace as string, INITIALIZE, { 'X-API-Key': tenant.key });
    const unknown = await post(crypto.randomUUID(), INITIALIZE, { 'X-API-Key': tenant.key });
    expect(other.status).toBe(404);
    expect(other.body).toEqual({ error: 'Workspace not found' });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(other.body);
  });

  it("answers a workspace key used on another workspace with 404, even its owner's", async () => {
    const { key } = await svc.admin.keys.create.mutate({
      type: 'workspace',
      workspaceId: tenant.workspace.id,
      name: 'scoped',
    });
    const sibling = await createWorkspace(svc.admin, tenant);
    const res = await post(sibling, INITIALIZE, { 'X-API-Key': key });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Workspace not found' });
  });

  it('answers a personal key where the workspace refuses personal keys with 403', async () => {
    const ws = await createWorkspace(svc.admin, tenant);
    await svc.admin.workspaces.update.mutate({ workspaceId: ws, allowPersonalApiKeys: false });
    const res = await post(ws, INITIALIZE, { 'X-API-Key': tenant.key });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      error: 'Personal API keys are disabled in this workspace; use a workspace key',
    });
  });

  it('lists the tools of an archived workspace, and a call is a tool error saying it is archived', async () => {
    const ws = await createWorkspace(svc.admin, tenant);
    await deployWorkflow(svc.admin, ws, reply('archived'), 'Archived tool');
    await svc.admin.workspaces.archive.mutate({ workspaceId: ws });
    const { client } = await connect(tenant.key, ws);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['archived-tool']);
    const result = await call(client, 'archived-tool');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('The workspace is archived');
    await client.close();
  });

  it('answers a workspace id that is not a UUID with 400 and details', async () => {
    const res = await post('not-a-uuid', INITIALIZE, { 'X-API-Key': tenant.key });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'Invalid request',
      details: [{ code: 'invalid_format', path: ['workspaceId'], message: 'Must be a UUID' }],
    });
  });

  it('answers malformed JSON with a JSON-RPC parse error, not a 500', async () => {
    const res = await fetch(endpoint(tenant.workspace.id), {
      method: 'POST',
      headers: {
        'X-API-Key': tenant.key,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: '{"jsonrpc": ',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
  });
});
