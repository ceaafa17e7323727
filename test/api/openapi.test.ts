// The OpenAPI document against the app it describes: every route the app registers is documented
// and every documented operation exists; every example fits its schema (the JSON Schema of the
// document, and the zod schema the route validates with); real answers fit the documented answer
// of their status; /api/openapi.json is a sound OpenAPI 3.1 document and /docs works offline.
import { gunzipSync } from 'node:zlib';
import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { buildRegistry, generateDocument } from '../../api/openapi/document.ts';
import {
  type ApiResponse,
  createTenant,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';
import { deployWorkflow, pollJob } from '../helpers/workflows.ts';

// CommonJS modules: their default export is the module object under some loaders, the class under others.
type AjvClass = typeof Ajv2020Module.default;
const Ajv2020 = ((Ajv2020Module as unknown as { default?: AjvClass }).default ?? Ajv2020Module) as AjvClass;
type AddFormats = typeof addFormatsModule.default;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ??
  addFormatsModule) as AddFormats;

// biome-ignore lint/suspicious/noExplicitAny: the document is walked as plain JSON
type Json = any;

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;
/** Routes that are not the API: the reference page itself and its script; an approval link's HTML page. */
const NOT_API = new Set([
  'GET /docs',
  'GET /docs/scalar.js',
  'GET /approve/{executionId}/{contextId}',
  'POST /approve/{executionId}/{contextId}',
]);

let svc: TestService;
let tenant: Tenant;
let doc: Json;
/** The document with every object schema closed (additionalProperties false where left open by
 * default), so an undocumented field in an answer or example fails validation. */
let strictDoc: Json;
let ajv: InstanceType<AjvClass>;

// Time stands still for the API: rate-limit buckets never refill, so a refused request stays refused.
const NOW = new Date();

beforeAll(async () => {
  svc = await startTestService({}, { runner: true, clock: () => NOW });
  tenant = await createTenant(svc.admin, { plan: 'enterprise' });
  await svc.admin.quotas.set.mutate({
    orgId: tenant.org.id,
    api: { requestsPerMinute: 100_000, maxBurst: 200_000 },
  });
  const res = await svc.app.request('/api/openapi.json');
  doc = await res.json();
  strictDoc = closeObjects(structuredClone(doc));
  ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addFormat('binary', true);
  ajv.addSchema(strictDoc, 'openapi.json');
});
afterAll(() => svc.close());

function closeObjects(node: Json): Json {
  if (Array.isArray(node)) for (const item of node) closeObjects(item);
  else if (node && typeof node === 'object') {
    if (node.type === 'object' && node.properties && node.additionalProperties === undefined) {
      node.additionalProperties = false;
    }
    for (const value of Object.values(node)) closeObjects(value);
  }
  return node;
}

const pointer = (...parts: string[]) =>
  parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

/** Validates a value against the schema at a JSON pointer of the (closed) document. */
function check(schemaPointer: string, value: unknown): string[] {
  const validate = ajv.getSchema(`openapi.json#/${schemaPointer}`);
  if (!validate) throw new Error(`No schema at ${schemaPointer}`);
  return validate(value)
    ? []
    : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
}

interface Operation {
  method: (typeof METHODS)[number];
  path: string;
  op: Json;
}

function operations(): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const method of METHODS) if (item[method]) out.push({ method, path, op: item[method] });
  }
  return out;
}

/** Hono's `:name` (with or without a pattern) as OpenAPI's `{name}`. */
const openApiPath = (honoPath: string) => honoPath.replace(/:([A-Za-z0-9_]+)(\{[^}]*\})?/g, '{$1}');

describe('coverage: the document and the app agree', () => {
  it('documents every route the app registers, with its method and path', () => {
    const documented = new Set(operations().map((o) => `${o.method.toUpperCase()} ${o.path}`));
    const documentedPaths = new Set(operations().map((o) => o.path));
    const missing: string[] = [];
    for (const r of svc.app.routes) {
      // Middleware (app.use) is registered for ALL methods under a wildcard path; it is no endpoint.
      if (r.method === 'ALL' && r.path.includes('*')) continue;
      const path = openApiPath(r.path);
      const key = `${r.method} ${path}`;
      if (NOT_API.has(key)) continue;
      const ok = r.method === 'ALL' ? documentedPaths.has(path) : documented.has(key);
      if (!ok) missing.push(key);
    }
    expect(missing, 'routes without documentation').toEqual([]);
  });

  it('has every documented operation in the app', () => {
    const registered = new Set(
      svc.app.routes.filter((r) => !r.path.includes('*')).map((r) => `${r.method} ${openApiPath(r.path)}`),
    );
    const extra = operations()
      .map((o) => `${o.method.toUpperCase()} ${o.path}`)
      .filter((key) => !registered.has(key) && !registered.has(`ALL ${key.split(' ')[1]}`));
    expect(extra, 'documented operations the app does not serve').toEqual([]);
  });

  it('knows the operations by id, and says what each one answers on error', () => {
    const ops = operations();
    expect(ops.length).toBeGreaterThanOrEqual(33);
    const ids = ops.map((o) => o.op.operationId);
    expect(ids.every((id) => typeof id === 'string')).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { method, path, op } of ops) {
      const where = `${method} ${path}`;
      expect(op.summary, where).toBeTruthy();
      const statuses = Object.keys(op.responses);
      // An answer on success, or (MCP's GET and DELETE, which a stateless server does not serve) a 405.
      expect(
        statuses.some((s) => s.startsWith('2') || s === '405'),
        where,
      ).toBe(true);
      expect(statuses, where).toContain('500');
      const publicOp = Array.isArray(op.security) && op.security.length === 0;
      if (!publicOp) expect(statuses, where).toContain('401');
      // Path parameters: exactly the names in the template.
      const inTemplate = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
      const declared = (op.parameters ?? [])
        .filter((p: Json) => p.in === 'path')
        .map((p: Json) => p.name)
        .sort();
      expect(declared, where).toEqual(inTemplate);
    }
  });

  it('documents the six Idempotency-Key operations with the header, their replays and conflicts', () => {
    const keyed = operations().filter((o) =>
      o.op.parameters?.some((p: Json) => p.name === 'Idempotency-Key'),
    );
    expect(keyed.map((o) => `${o.method} ${o.path}`).sort()).toEqual(
      [
        'post /api/v1/files',
        'post /api/v1/knowledge/{id}/documents',
        'post /api/v1/tables/{tableId}/rows',
        'post /api/v1/tables/{tableId}/rows/import',
        'post /api/v1/workflows/{id}/executions/{executionId}/rerun',
        'post /api/workflows/{id}/execute',
      ].sort(),
    );
    for (const { op } of keyed) {
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['409', '410', '422']));
      expect(op.responses['200'].headers['Idempotent-Replayed']).toBeDefined();
      expect(op.responses['409'].headers['Retry-After']).toBeDefined();
    }
  });
});

describe('examples', () => {
  const routes = () =>
    buildRegistry(svc.app)
      .definitions.filter((d): d is { type: 'route'; route: RouteConfig } => d.type === 'route')
      .map((d) => d.route);

  /** Every example of a media type object, named. */
  const examplesOf = (media: Json): [string, unknown][] => [
    ...(media.example !== undefined ? [['example', media.example] as [string, unknown]] : []),
    ...Object.entries<Json>(media.examples ?? {}).map(([name, e]) => [name, e.value] as [string, unknown]),
  ];

  it('every request body, parameter and response example fits its JSON schema', () => {
    const failures: string[] = [];
    let checked = 0;
    for (const { method, path, op } of operations()) {
      const base = pointer('paths', path, method);
      for (const [i, p] of (op.parameters ?? []).entries()) {
        if (p.schema?.example === undefined) continue;
        checked++;
        // Query and path values arrive as text; their schemas describe the value they stand for.
        for (const e of check(`${base}/parameters/${i}/schema`, p.schema.example))
          failures.push(`${method} ${path} parameter ${p.name}: ${e}`);
      }
      for (const [type, media] of Object.entries<Json>(op.requestBody?.content ?? {})) {
        for (const [name, value] of examplesOf(media)) {
          checked++;
          for (const e of check(`${base}/requestBody/content/${pointer(type)}/schema`, value))
            failures.push(`${method} ${path} request ${name}: ${e}`);
        }
      }
      for (const [status, response] of Object.entries<Json>(op.responses)) {
        for (const [type, media] of Object.entries<Json>(response.content ?? {})) {
          for (const [name, value] of examplesOf(media)) {
            checked++;
            for (const e of check(`${base}/responses/${status}/content/${pointer(type)}/schema`, value))
              failures.push(`${method} ${path} ${status} ${name}: ${e}`);
          }
        }
      }
    }
    for (const [name, header] of Object.entries<Json>(doc.components.headers)) {
      checked++;
      for (const e of check(`${pointer('components', 'headers', name)}/schema`, header.schema.example))
        failures.push(`header ${name}: ${e}`);
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(150);
  });

  it('every JSON answer and request body has an example, and so does every parameter', () => {
    const missing: string[] = [];
    for (const { method, path, op } of operations()) {
      for (const p of op.parameters ?? [])
        if (p.schema?.example === undefined && p.example === undefined)
          missing.push(`${method} ${path} parameter ${p.name}`);
      const bodies = [
        ['request', op.requestBody?.content?.['application/json']],
        ...Object.entries<Json>(op.responses).map(([s, r]) => [s, r.content?.['application/json']]),
      ];
      for (const [what, media] of bodies) {
        if (media && examplesOf(media).length === 0 && path !== '/api/openapi.json')
          missing.push(`${method} ${path} ${what}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('request examples pass the zod schemas the routes validate with', () => {
    const failures: string[] = [];
    let checked = 0;
    const parse = (where: string, schema: z.ZodType | undefined, value: unknown) => {
      if (!schema) return;
      checked++;
      const r = schema.safeParse(value);
      if (!r.success) failures.push(`${where}: ${JSON.stringify(r.error.issues)}`);
    };
    const asText = (v: unknown) => (typeof v === 'string' ? v : String(v));
    for (const route of routes()) {
      const where = `${route.method} ${route.path}`;
      const op = doc.paths[route.path][route.method];
      const examplesIn = (place: string) =>
        Object.fromEntries(
          (op.parameters ?? [])
            .filter((p: Json) => p.in === place && p.schema?.example !== undefined)
            .map((p: Json) => [p.name, place === 'header' ? p.schema.example : asText(p.schema.example)]),
        );
      parse(`${where} path`, route.request?.params as z.ZodType | undefined, examplesIn('path'));
      parse(`${where} query`, route.request?.query as z.ZodType | undefined, examplesIn('query'));
      if (route.request?.headers && !Array.isArray(route.request.headers))
        parse(`${where} headers`, route.request.headers as z.ZodType, examplesIn('header'));
      const media = route.request?.body?.content['application/json'] as { schema?: z.ZodType } | undefined;
      const documented = op.requestBody?.content?.['application/json'];
      if (media?.schema && documented)
        for (const [name, value] of examplesOf(documented))
          parse(`${where} body ${name}`, media.schema, value);
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  });
});

describe('real answers fit the documented ones', () => {
  /** Asserts the answer's status is documented for the operation and its body fits that schema. */
  function expectDocumented(method: string, path: string, res: ApiResponse) {
    const op = doc.paths[path]?.[method.toLowerCase()];
    expect(op, `${method} ${path} is documented`).toBeDefined();
    const response = op.responses[String(res.status)];
    expect(
      response,
      `${method} ${path} documents status ${res.status}: ${JSON.stringify(res.body)}`,
    ).toBeDefined();
    const base = pointer('paths', path, method.toLowerCase(), 'responses', String(res.status));
    if (response.content?.['application/json']) {
      const errors = check(`${base}/content/application~1json/schema`, res.body);
      expect(errors, `${method} ${path} ${res.status}: ${JSON.stringify(res.body).slice(0, 800)}`).toEqual(
        [],
      );
    }
    // Every answer names its request; answers that took or were refused a token show its bucket
    // (billing is on here). Other errors may carry them too, depending on where they were raised.
    expect(response.headers['X-Request-Id'], `${method} ${path} documents X-Request-Id`).toBeDefined();
    expect(res.headers.get('X-Request-Id')).toBeTruthy();
    if (res.status < 300 || res.status === 402 || res.status === 429) {
      for (const name of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']) {
        if (response.headers[name])
          expect(res.headers.get(name), `${method} ${path} ${name}`).toMatch(/^\d+$/);
      }
    }
    if (res.status === 429) expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
  }

  const GREET = {
    inputs: { name: { type: 'string', required: true } },
    blocks: [
      { id: 'greet', type: 'function', code: 'return { message: `Hello, ${inputs.name}!` }' },
      { id: 'done', type: 'response', data: { message: '<greet.message>' } },
    ],
    edges: [{ from: 'greet', to: 'done' }],
  };
  const BOOM = {
    inputs: {},
    blocks: [{ id: 'boom', type: 'function', code: 'throw new Error("boom")' }],
    edges: [],
  };

  it('execute (sync, failed, async), jobs, logs and usage limits', async () => {
    const key = tenant.key;
    const ws = tenant.workspace.id;
    const greet = await deployWorkflow(svc.admin, ws, GREET, 'greet');
    const boom = await deployWorkflow(svc.admin, ws, BOOM, 'boom');
    const execute = (id: string, body: unknown, k: string | undefined = key) =>
      svc.call('POST', `/api/workflows/${id}/execute`, { ...(k ? { key: k } : {}), body });
    const EXECUTE = '/api/workflows/{id}/execute';

    const sync = await execute(greet, { inputs: { name: 'Ada' } });
    expect(sync.status).toBe(200);
    expectDocumented('POST', EXECUTE, sync);
    const failed = await execute(boom, {});
    expect(failed.body.success).toBe(false);
    expectDocumented('POST', EXECUTE, failed);
    const queued = await execute(greet, { inputs: { name: 'Ada' }, async: true });
    expect(queued.status).toBe(202);
    expectDocumented('POST', EXECUTE, queued);
    expectDocumented('GET', '/api/jobs/{jobId}', await pollJob(svc.call, key, queued.body.taskId));
    const queuedBoom = await execute(boom, { async: true });
    expectDocumented('GET', '/api/jobs/{jobId}', await pollJob(svc.call, key, queuedBoom.body.taskId));

    for (const res of [
      await execute(greet, { inputs: { name: 3 } }),
      await execute('not-a-uuid', {}),
      await execute(greet, {}, undefined),
      await execute(greet, {}, 'sk-service-unknown'),
      await execute(ws, {}),
    ]) {
      expect([400, 401, 404]).toContain(res.status);
      expectDocumented('POST', EXECUTE, res);
    }
    expectDocumented('GET', '/api/jobs/{jobId}', await svc.call('GET', `/api/jobs/${ws}`, { key }));
    expectDocumented(
      'GET',
      '/api/users/me/usage-limits',
      await svc.call('GET', '/api/users/me/usage-limits', { key }),
    );
    expectDocumented(
      'GET',
      '/api/users/me/usage-limits',
      await svc.call('GET', '/api/users/me/usage-limits'),
    );

    const basic = await svc.call('GET', '/api/v1/logs', { key, query: { workspaceId: ws, limit: 1 } });
    expect(basic.body.nextCursor).toBeTruthy();
    expectDocumented('GET', '/api/v1/logs', basic);
    expectDocumented(
      'GET',
      '/api/v1/logs',
      await svc.call('GET', '/api/v1/logs', { key, query: { workspaceId: ws, details: 'full' } }),
    );
    expectDocumented(
      'GET',
      '/api/v1/logs',
      await svc.call('GET', '/api/v1/logs', { key, query: { workspaceId: ws, level: 'x' } }),
    );
    expectDocumented(
      'GET',
      '/api/v1/logs/{id}',
      await svc.call('GET', `/api/v1/logs/${basic.body.data[0].id}`, { key }),
    );
    expectDocumented('GET', '/api/v1/logs/{id}', await svc.call('GET', `/api/v1/logs/${ws}`, { key }));
    expectDocumented(
      'GET',
      '/api/v1/audit-logs',
      await svc.call('GET', '/api/v1/audit-logs', { key, query: { workspaceId: ws, limit: 5 } }),
    );
  });

  it('cancel (running, again, finished, unknown, bad id) and the cancelled job', async () => {
    const key = tenant.key;
    const ws = tenant.workspace.id;
    const CANCEL = '/api/workflows/{id}/executions/{executionId}/cancel';
    const spin = await deployWorkflow(svc.admin, ws, {
      blocks: [{ id: 's', type: 'function', code: 'while (true) {}' }],
    });
    const quick = await deployWorkflow(svc.admin, ws, GREET, 'greet for cancel');
    const cancel = (wf: string, id: string) =>
      svc.call('POST', `/api/workflows/${wf}/executions/${id}/cancel`, { key });
    const running = await svc.call('POST', `/api/workflows/${spin}/execute`, { key, body: { async: true } });
    const first = await cancel(spin, running.body.taskId);
    expect(first.status).toBe(200);
    expectDocumented('POST', CANCEL, first);
    expectDocumented('POST', CANCEL, await cancel(spin, running.body.taskId));
    const job = await svc.call('GET', `/api/jobs/${running.body.taskId}`, { key });
    expect(job.body.status).toBe('cancelled');
    expectDocumented('GET', '/api/jobs/{jobId}', job);
    const done = await svc.call('POST', `/api/workflows/${quick}/execute`, {
      key,
      body: { inputs: { name: 'Ada' }, async: true },
    });
    await pollJob(svc.call, key, done.body.taskId);
    for (const [res, status] of [
      [await cancel(quick, done.body.taskId), 409],
      [await cancel(quick, crypto.randomUUID()), 404],
      [await cancel(quick, 'not-a-uuid'), 400],
      [await svc.call('POST', `/api/workflows/${quick}/executions/${done.body.taskId}/cancel`), 401],
    ] as const) {
      expect(res.status).toBe(status);
      expectDocumented('POST', CANCEL, res);
    }
  });

  it('paused executions: the job, the list, a resume and its errors', async () => {
    const key = tenant.key;
    const ws = tenant.workspace.id;
    const RESUME = '/api/resume/{workflowId}/{executionId}/{contextId}';
    const PAUSED = '/api/workflows/{id}/paused';
    const wf = await deployWorkflow(svc.admin, ws, {
      blocks: [
        { id: 'ask', type: 'approval', message: 'Go?', fields: { n: { type: 'number', required: true } } },
      ],
    });
    const started = await svc.call('POST', `/api/workflows/${wf}/execute`, { key, body: { async: true } });
    let job: ApiResponse | undefined;
    for (let i = 0; i < 400 && job?.body.status !== 'paused'; i++) {
      job = await svc.call('GET', `/api/jobs/${started.body.taskId}`, { key });
      if (job.body.status !== 'paused') await new Promise((r) => setTimeout(r, 25));
    }
    expect(job?.body.status).toBe('paused');
    expectDocumented('GET', '/api/jobs/{jobId}', job as ApiResponse);
    expectDocumented('GET', PAUSED, await svc.call('GET', `/api/workflows/${wf}/paused`, { key }));
    expectDocumented(
      'GET',
      PAUSED,
      await svc.call('GET', `/api/workflows/${wf}/paused`, { key, query: { limit: 0 } }),
    );
    expectDocumented(
      'GET',
      PAUSED,
      await svc.call('GET', `/api/workflows/${crypto.randomUUID()}/paused`, { key }),
    );
    const url = job?.body.metadata.pause.resumeUrl as string;
    for (const [res, status] of [
      [await svc.call('POST', url, { key, body: { approved: true, data: { n: 'x' } } }), 400],
      [await svc.call('POST', url, { key, body: {} }), 400],
      [await svc.call('POST', url, { body: { approved: true } }), 401],
      [await svc.call('POST', url, { key, body: { approved: true, data: { n: 1 } } }), 202],
      [await svc.call('POST', url, { key, body: { approved: true, data: { n: 1 } } }), 409],
      [
        await svc.call('POST', `/api/resume/${wf}/${crypto.randomUUID()}/${crypto.randomUUID()}`, {
          key,
          body: { approved: true },
        }),
        404,
      ],
    ] as const) {
      expect(res.status).toBe(status);
      expectDocumented('POST', RESUME, res);
    }
    await pollJob(svc.call, key, started.body.taskId);
  });

  it('tables and rows, with their errors', async () => {
    const key = tenant.key;
    const ws = tenant.workspace.id;
    const T = '/api/v1/tables';
    const created = await svc.call('POST', T, {
      key,
      body: {
        workspaceId: ws,
        name: 'contacts',
        schema: {
          columns: [
            { name: 'email', type: 'string', required: true, unique: true },
            { name: 'visits', type: 'number' },
          ],
        },
      },
    });
    expectDocumented('POST', T, created);
    const tableId = created.body.data.table.id;
    expectDocumented(
      'POST',
      T,
      await svc.call('POST', T, {
        key,
        body: { workspaceId: ws, name: 'contacts', schema: { columns: [{ name: 'a', type: 'string' }] } },
      }),
    );
    expectDocumented(
      'POST',
      T,
      await svc.call('POST', T, { key, body: { workspaceId: ws, name: 'x', schema: { columns: [] } } }),
    );
    expectDocumented('GET', T, await svc.call('GET', T, { key, query: { workspaceId: ws } }));
    expectDocumented('GET', T, await svc.call('GET', T, { key, query: { workspaceId: 'nope' } }));
    expectDocumented('GET', T, await svc.call('GET', T, { query: { workspaceId: ws } }));
    const other = await createTenant(svc.admin);
    expectDocumented('GET', T, await svc.call('GET', T, { key: other.key, query: { workspaceId: ws } }));
    expectDocumented(
      'GET',
      `${T}/{tableId}`,
      await svc.call('GET', `${T}/${tableId}`, { key, query: { workspaceId: ws } }),
    );
    expectDocumented(
      'GET',
      `${T}/{tableId}`,
      await svc.call('GET', `${T}/${ws}`, { key, query: { workspaceId: ws } }),
    );
    const ROWS = `${T}/{tableId}/rows`;
    const rows = `${T}/${tableId}/rows`;
    const one = await svc.call('POST', rows, {
      key,
      body: { workspaceId: ws, data: { email: 'ada@example.com', visits: 1 } },
    });
    expectDocumented('POST', ROWS, one);
    expectDocumented(
      'POST',
      ROWS,
      await svc.call('POST', rows, {
        key,
        body: { workspaceId: ws, rows: [{ email: 'b@example.com' }, { email: 'c@example.com' }] },
      }),
    );
    expectDocumented(
      'POST',
      ROWS,
      await svc.call('POST', rows, { key, body: { workspaceId: ws, data: { email: 'ada@example.com' } } }),
    );
    expectDocumented(
      'GET',
      ROWS,
      await svc.call('GET', rows, {
        key,
        query: { workspaceId: ws, filter: '{"visits":{"gte":1}}', limit: 2 },
      }),
    );
    expectDocumented(
      'PUT',
      ROWS,
      await svc.call('PUT', rows, {
        key,
        body: { workspaceId: ws, filter: { visits: { lt: 3 } }, data: { visits: 3 } },
      }),
    );
    expectDocumented(
      'POST',
      `${ROWS}/upsert`,
      await svc.call('POST', `${rows}/upsert`, {
        key,
        body: { workspaceId: ws, data: { email: 'ada@example.com', visits: 9 } },
      }),
    );
    expectDocumented(
      'GET',
      `${ROWS}/{rowId}`,
      await svc.call('GET', `${rows}/${one.body.data.row.id}`, { key, query: { workspaceId: ws } }),
    );
    expectDocumented(
      'DELETE',
      ROWS,
      await svc.call('DELETE', rows, { key, body: { workspaceId: ws, rowIds: [one.body.data.row.id] } }),
    );
    expectDocumented(
      'DELETE',
      `${T}/{tableId}/columns`,
      await svc.call('DELETE', `${T}/${tableId}/columns`, {
        key,
        body: { workspaceId: ws, columnName: 'visits' },
      }),
    );
    expectDocumented(
      'DELETE',
      `${T}/{tableId}/columns`,
      await svc.call('DELETE', `${T}/${tableId}/columns`, {
        key,
        body: { workspaceId: ws, columnName: 'email' },
      }),
    );
    expectDocumented(
      'DELETE',
      `${T}/{tableId}`,
      await svc.call('DELETE', `${T}/${tableId}`, { key, body: { workspaceId: ws } }),
    );
  });

  it('table columns: added and changed, with their errors', async () => {
    const key = tenant.key;
    const ws = tenant.workspace.id;
    const created = await svc.call('POST', '/api/v1/tables', {
      key,
      body: { workspaceId: ws, name: 'columns', schema: { columns: [{ name: 'v', type: 'string' }] } },
    });
    const tableId = created.body.data.table.id;
    const P = '/api/v1/tables/{tableId}/columns';
    const path = `/api/v1/tables/${tableId}/columns`;
    await svc.call('POST', `/api/v1/tables/${tableId}/rows`, {
      key,
      body: { workspaceId: ws, rows: [{ v: '1' }, { v: 'many' }, { v: '1' }] },
    });
    const add = (body: Record<string, unknown>) =>
      svc.call('POST', path, { key, body: { workspaceId: ws, ...body } });
    const change = (columnName: string, updates: Record<string, unknown>) =>
      svc.call('PATCH', path, { key, body: { workspaceId: ws, columnName, updates } });
    expectDocumented(
      'POST',
      P,
      await add({ column: { name: 's', type: 'select', options: ['a', 'b'] }, default: 'a' }),
    );
    expectDocumented('POST', P, await add({ column: { name: 's', type: 'string' } }));
    expectDocumented('POST', P, await add({ column: { name: 'r', type: 'string', required: true } }));
    expectDocumented('POST', P, await add({ column: { name: 'x', type: 'select' } }));
    expectDocumented('PATCH', P, await change('s', { options: ['a', 'b', 'c'], required: true }));
    expectDocumented('PATCH', P, await change('v', { type: 'number' }));
    expectDocumented('PATCH', P, await change('v', { unique: true }));
    expectDocumented('PATCH', P, await change('s', { options: ['b'] }));
    expectDocumented('PATCH', P, await change('v', { name: 's' }));
    expectDocumented('PATCH', P, await change('nope', { name: 'w' }));
    expectDocumented('PATCH', P, await change('v', {}));
  });

  it('table import (CSV) and export, with their errors', async () => {
    const key = tenant.key;
    const ws = tenant.workspace.id;
    const created = await svc.call('POST', '/api/v1/tables', {
      key,
      body: {
        workspaceId: ws,
        name: 'transfers',
        schema: { columns: [{ name: 'n', type: 'number', unique: true }] },
      },
    });
    const tableId = created.body.data.table.id;
    const IMPORT = '/api/v1/tables/{tableId}/rows/import';
    const importCsv = async (fields: Record<string, string>, csv: string) => {
      const form = new FormData();
      for (const [k, v] of Object.entries(fields)) form.set(k, v);
      form.set('file', new Blob([csv], { type: 'text/csv' }), 'n.csv');
      const res = await svc.app.request(`/api/v1/tables/${tableId}/rows/import`, {
        method: 'POST',
        body: form,
        headers: { 'X-API-Key': key },
      });
      return { status: res.status, headers: res.headers, body: await res.json() };
    };
    expectDocumented(
      'POST',
      IMPORT,
      await importCsv({ workspaceId: ws, mode: 'skip' }, 'n\r\n1\r\nx\r\n1\r\n'),
    );
    expectDocumented('POST', IMPORT, await importCsv({ workspaceId: ws }, 'n\r\n2\r\nx\r\n'));
    expectDocumented('POST', IMPORT, await importCsv({ workspaceId: ws }, 'phone\r\n1\r\n'));
    expectDocumented('POST', IMPORT, await importCsv({ workspaceId: ws, mode: 'some' }, 'n\r\n'));
    expectDocumented('POST', IMPORT, await importCsv({ workspaceId: crypto.randomUUID() }, 'n\r\n'));
    const EXPORT = '/api/v1/tables/{tableId}/rows/export';
    const exported = async (query: string) => {
      const res = await svc.app.request(`/api/v1/tables/${tableId}/rows/export?workspaceId=${ws}${query}`, {
        headers: { 'X-API-Key': key },
      });
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: res.ok ? text : JSON.parse(text) };
    };
    const csv = await exported('');
    expectDocumented('GET', EXPORT, csv);
    expect(csv.body).toBe('n\r\n1\r\n');
    expect(doc.paths[EXPORT].get.responses['200'].content['text/csv']).toBeDefined();
    expect(doc.paths[EXPORT].get.responses['200'].content['application/x-ndjson']).toBeDefined();
    expectDocumented('GET', EXPORT, await exported('&format=jsonl'));
    expectDocumented('GET', EXPORT, await exported('&format=xml'));
    expectDocumented('GET', EXPORT, await exported('&filter=%7B%22phone%22%3A1%7D'));
  });

  it('files, docs, knowledge, workspaces', async () => {
    const key = tenant.key;
    const ws = tenant.workspace.id;
    const upload = async (path: string, name: string, type: string) => {
      const form = new FormData();
      form.set('workspaceId', ws);
      form.set('file', new Blob(['# Leave\n\nParental leave is 16 weeks.'], { type }), name);
      const res = await svc.app.request(path, { method: 'POST', body: form, headers: { 'X-API-Key': key } });
      return { status: res.status, headers: res.headers, body: await res.json() };
    };
    const file = await upload('/api/v1/files', 'notes.md', 'text/markdown');
    expectDocumented('POST', '/api/v1/files', file);
    expectDocumented('POST', '/api/v1/files', await upload('/api/v1/files', 'notes.md', 'text/markdown'));
    expectDocumented(
      'GET',
      '/api/v1/files',
      await svc.call('GET', '/api/v1/files', { key, query: { workspaceId: ws } }),
    );
    expectDocumented(
      'GET',
      '/api/v1/docs',
      await svc.call('GET', '/api/v1/docs', { key, query: { workspaceId: ws, scope: 'all' } }),
    );
    expectDocumented(
      'GET',
      '/api/v1/files/{fileId}/content',
      await svc.call('GET', `/api/v1/files/${ws}/content`, { key, query: { workspaceId: ws } }),
    );
    const download = await svc.app.request(
      `/api/v1/files/${file.body.data.file.id}/content?workspaceId=${ws}`,
      {
        headers: { 'X-API-Key': key },
      },
    );
    expect(download.status).toBe(200);
    expect(doc.paths['/api/v1/files/{fileId}/content'].get.responses['200'].content['*/*']).toBeDefined();
    for (let i = 0; i < 2; i++) {
      expectDocumented(
        'DELETE',
        '/api/v1/files/{fileId}',
        await svc.call('DELETE', `/api/v1/files/${file.body.data.file.id}`, {
          key,
          query: { workspaceId: ws },
        }),
      );
    }

    const kb = await svc.admin.knowledge.create.mutate({ workspaceId: ws, name: 'Handbook' });
    const K = '/api/v1/knowledge';
    expectDocumented('GET', K, await svc.call('GET', K, { key, query: { workspaceId: ws } }));
    expectDocumented(
      'PUT',
      `${K}/{id}`,
      await svc.call('PUT', `${K}/${kb.id}`, {
        key,
        body: { workspaceId: ws, chunkingConfig: { maxSize: 256, overlap: 32 } },
      }),
    );
    expectDocumented(
      'PUT',
      `${K}/{id}`,
      await svc.call('PUT', `${K}/${kb.id}`, { key, body: { workspaceId: ws } }),
    );
    const uploaded = await upload(`${K}/${kb.id}/documents`, 'handbook.md', 'text/markdown');
    expectDocumented('POST', `${K}/{id}/documents`, uploaded);
    // The same content again: a 409 naming the document.
    const again = await upload(`${K}/${kb.id}/documents`, 'copy.md', 'text/markdown');
    expect(again.status).toBe(409);
    expectDocumented('POST', `${K}/{id}/documents`, again);
    expectDocumented(
      'POST',
      `${K}/{id}/documents`,
      await upload(`${K}/${kb.id}/documents`, 'x.png', 'image/png'),
    );
    for (const documentId of [uploaded.body.data.document.id, ws]) {
      expectDocumented(
        'GET',
        `${K}/{id}/documents/{documentId}`,
        await svc.call('GET', `${K}/${kb.id}/documents/${documentId}`, { key, query: { workspaceId: ws } }),
      );
    }
    expectDocumented(
      'GET',
      `${K}/{id}/documents`,
      await svc.call('GET', `${K}/${kb.id}/documents`, { key, query: { workspaceId: ws } }),
    );
    expectDocumented(
      'POST',
      `${K}/search`,
      await svc.call('POST', `${K}/search`, {
        key,
        body: { workspaceId: ws, knowledgeBaseIds: [kb.id], query: 'leave' },
      }),
    );
    expectDocumented(
      'POST',
      `${K}/search`,
      await svc.call('POST', `${K}/search`, {
        key,
        body: { workspaceId: ws, knowledgeBaseIds: [ws], query: 'leave' },
      }),
    );

    const W = '/api/v1/workspaces';
    expectDocumented(
      'POST',
      W,
      await svc.call('POST', W, {
        key,
        body: { name: 'Marketing', color: '#3972F6', skipDefaultWorkflow: true },
      }),
    );
    expectDocumented('POST', W, await svc.call('POST', W, { key, body: { name: '', color: 'red' } }));
    const wsKey = await svc.admin.keys.create.mutate({ type: 'workspace', workspaceId: ws, name: 'ci' });
    expectDocumented('POST', W, await svc.call('POST', W, { key: wsKey.key, body: { name: 'x' } }));
  });

  it('the limits: 429 with Retry-After, 402 past the spend limit', async () => {
    const limited = await createTenant(svc.admin);
    const one = { requestsPerMinute: 1, maxBurst: 1 };
    await svc.admin.quotas.set.mutate({ orgId: limited.org.id, api: one, sync: one });
    const key = limited.key;
    const ws = limited.workspace.id;
    const list = () => svc.call('GET', '/api/v1/tables', { key, query: { workspaceId: ws } });
    expectDocumented('GET', '/api/v1/tables', await list());
    const refused = await list();
    expect(refused.status).toBe(429);
    expectDocumented('GET', '/api/v1/tables', refused);

    const greet = await deployWorkflow(svc.admin, ws, GREET, 'greet');
    const execute = () =>
      svc.call('POST', `/api/workflows/${greet}/execute`, { key, body: { inputs: { name: 'Ada' } } });
    expectDocumented('POST', '/api/workflows/{id}/execute', await execute());
    const tooMany = await execute();
    expect(tooMany.status).toBe(429);
    expectDocumented('POST', '/api/workflows/{id}/execute', tooMany);
    await svc.admin.quotas.set.mutate({ orgId: limited.org.id, usageLimit: 0 });
    const broke = await execute();
    expect(broke.status).toBe(402);
    expectDocumented('POST', '/api/workflows/{id}/execute', broke);
  });

  it('v1 workflows: each operation and its errors', async () => {
    const key = tenant.key;
    const ws = tenant.workspace.id;
    const W = '/api/v1/workflows';
    const call = (method: string, path: string, body?: unknown, query?: Record<string, string>) =>
      svc.call(method, path, { key, ...(body !== undefined ? { body } : {}), ...(query ? { query } : {}) });
    const created = await call('POST', W, { workspaceId: ws, name: 'Documented', definition: GREET });
    expectDocumented('POST', W, created);
    const id = created.body.data.id;
    const one = `${W}/${id}`;
    expectDocumented(
      'POST',
      W,
      await call('POST', W, { workspaceId: ws, name: 'x', definition: { blocks: 1 } }),
    );
    expectDocumented('GET', W, await call('GET', W, undefined, { workspaceId: ws, limit: '1' }));
    expectDocumented('GET', W, await call('GET', W, undefined, { workspaceId: ws, cursor: 'bad' }));
    expectDocumented('GET', `${W}/{id}`, await call('GET', one));
    expectDocumented('GET', `${W}/{id}`, await call('GET', `${W}/${ws}`));
    expectDocumented('PUT', `${W}/{id}`, await call('PUT', one, { description: 'd' }));
    expectDocumented('DELETE', `${W}/{id}/deploy`, await call('DELETE', `${one}/deploy`));
    expectDocumented('POST', `${W}/{id}/deploy`, await call('POST', `${one}/deploy`));
    expectDocumented('GET', `${W}/{id}/versions`, await call('GET', `${one}/versions`));
    expectDocumented('POST', `${W}/{id}/rollback`, await call('POST', `${one}/rollback`, { version: 1 }));
    expectDocumented('POST', `${W}/{id}/rollback`, await call('POST', `${one}/rollback`, { version: 9 }));
    const exported = await call('GET', `${one}/export`, undefined, { version: '1' });
    expectDocumented('GET', `${W}/{id}/export`, exported);
    expectDocumented(
      'GET',
      `${W}/{id}/export`,
      await call('GET', `${one}/export`, undefined, { version: '9' }),
    );
    expectDocumented('DELETE', `${W}/{id}/deploy`, await call('DELETE', `${one}/deploy`));
    const imported = await call('POST', `${W}/import`, { workspaceId: ws, workflow: exported.body.data });
    expect(imported.status).toBe(201);
    expectDocumented('POST', `${W}/import`, imported);
    expectDocumented(
      'POST',
      `${W}/import`,
      await call('POST', `${W}/import`, { workspaceId: ws, workflow: 1 }),
    );
    expectDocumented('DELETE', `${W}/{id}`, await call('DELETE', `${W}/${imported.body.data.id}`));
    expectDocumented('DELETE', `${W}/{id}`, await call('DELETE', `${W}/${imported.body.data.id}`));
  });

  it('the root, the probes, the document itself, and MCP', async () => {
    expectDocumented('GET', '/', await svc.call('GET', '/'));
    expectDocumented('GET', '/health', await svc.call('GET', '/health'));
    expectDocumented('GET', '/ready', await svc.call('GET', '/ready'));
    expectDocumented('GET', '/api/openapi.json', await svc.call('GET', '/api/openapi.json'));
    const init = await svc.call('POST', `/api/mcp/${tenant.workspace.id}`, {
      key: tenant.key,
      headers: { Accept: 'application/json, text/event-stream' },
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'test', version: '1' },
        },
      },
    });
    expectDocumented('POST', '/api/mcp/{workspaceId}', init);
    expectDocumented(
      'GET',
      '/api/mcp/{workspaceId}',
      await svc.call('GET', `/api/mcp/${tenant.workspace.id}`, { key: tenant.key }),
    );
  });
});

describe('the document and the reference page', () => {
  it('serves the document without a key: OpenAPI 3.1, the same as generated, every $ref resolving', async () => {
    const res = await svc.app.request('/api/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    const served = await res.json();
    expect(served.openapi).toMatch(/^3\.1\.\d+$/);
    expect(served.info.title).toBeTruthy();
    // As generated, plus the server the request reached (app.request's is http://localhost).
    expect(served).toEqual({
      ...JSON.parse(JSON.stringify(generateDocument(svc.app))),
      servers: [{ url: 'http://localhost', description: 'This service' }],
    });
    expect(served.components.securitySchemes.ApiKeyAuth).toEqual(
      expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
    );
    const refs: string[] = [];
    const walk = (node: Json) => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') {
        if (typeof node.$ref === 'string') refs.push(node.$ref);
        Object.values(node).forEach(walk);
      }
    };
    walk(served);
    expect(refs.length).toBeGreaterThan(50);
    const unresolved = refs.filter((ref) => {
      if (!ref.startsWith('#/')) return true;
      let at: Json = served;
      for (const part of ref.slice(2).split('/')) {
        at = at?.[part.replaceAll('~1', '/').replaceAll('~0', '~')];
      }
      return at === undefined;
    });
    expect(unresolved).toEqual([]);
  });

  it("lints with no errors under Redocly's recommended rules", async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({
      source: JSON.stringify(doc),
      absoluteRef: 'openapi.json',
      config,
    });
    const errors = problems
      .filter((p) => p.severity === 'error')
      .map((p) => `${p.ruleId} at ${p.location[0]?.pointer ?? '?'}: ${p.message}`);
    expect(errors, errors.join('\n')).toEqual([]);
  });

  it('holds only valid JSON Schemas (2020-12, the OpenAPI 3.1 dialect)', () => {
    const invalid: string[] = [];
    const validSchema = (where: string, schema: Json) => {
      if (!ajv.validateSchema(schema)) invalid.push(`${where}: ${ajv.errorsText(ajv.errors)}`);
    };
    for (const [name, schema] of Object.entries<Json>(doc.components.schemas)) validSchema(name, schema);
    for (const { method, path, op } of operations()) {
      for (const p of op.parameters ?? []) validSchema(`${method} ${path} ${p.name}`, p.schema);
      for (const media of Object.values<Json>(op.requestBody?.content ?? {}))
        validSchema(`${method} ${path} body`, media.schema);
      for (const [status, r] of Object.entries<Json>(op.responses))
        for (const media of Object.values<Json>(r.content ?? {}))
          validSchema(`${method} ${path} ${status}`, media.schema);
    }
    expect(invalid).toEqual([]);
    // Every schema of the document compiles, its references included.
    for (const name of Object.keys(doc.components.schemas)) {
      expect(ajv.getSchema(`openapi.json#/components/schemas/${name}`), name).toBeTypeOf('function');
    }
  });

  it('serves the reference page, pointing at the document and the local bundle, with no address on the internet', async () => {
    const res = await svc.app.request('/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const html = await res.text();
    const src = /<script src="([^"]+)"/.exec(html)?.[1];
    expect(src).toMatch(/^\/docs\/scalar\.js\?v=\d+\.\d+\.\d+$/);
    expect(html).toContain('"url": "/api/openapi.json"');
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).toContain('"withDefaultFonts": false');
    expect(html).toContain('"telemetry": false');

    const bundle = await svc.app.request(src as string);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toContain('javascript');
    expect(bundle.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const plain = new Uint8Array(await bundle.arrayBuffer());
    expect(plain.byteLength).toBeGreaterThan(1_000_000);
    expect(Number(bundle.headers.get('content-length'))).toBe(plain.byteLength);
    expect(new TextDecoder().decode(plain)).toContain('createApiReference');

    const gzipped = await svc.app.request(src as string, { headers: { 'Accept-Encoding': 'gzip, br' } });
    expect(gzipped.headers.get('content-encoding')).toBe('gzip');
    expect(gzipped.headers.get('vary')).toBe('Accept-Encoding');
    const packed = new Uint8Array(await gzipped.arrayBuffer());
    expect(packed.byteLength).toBeLessThan(plain.byteLength / 2);
    expect(Buffer.compare(gunzipSync(packed), Buffer.from(plain))).toBe(0);
  });

  it('needs no API key for the page, the bundle and the document, and a key still guards the API', async () => {
    for (const path of ['/docs', '/docs/scalar.js', '/api/openapi.json']) {
      expect((await svc.app.request(path)).status, path).toBe(200);
    }
    expect((await svc.app.request('/api/users/me/usage-limits')).status).toBe(401);
    expect((await svc.app.request('/api/openapi.json/x')).status).toBe(401);
  });
});
