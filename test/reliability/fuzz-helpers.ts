// What the fuzz and injection suites share: a service with one roomy tenant and a fixture of each
// resource (table, file, knowledge base and a document, deployed workflow), raw requests in-process, the shape every
// refusal must have, and a fingerprint of the stored data to prove a refused request changed nothing.
import { expect } from 'vitest';
import { upload } from '../api/files-helpers.ts';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';
import { deployWorkflow } from '../helpers/workflows.ts';

export interface Fixture {
  svc: TestService;
  tenant: Tenant;
  key: string;
  workspaceId: string;
  tableId: string;
  fileId: string;
  knowledgeBaseId: string;
  /** A document of the knowledge base (pending: no runner works here). */
  documentId: string;
  workflowId: string;
}

/** The service, a tenant whose API bucket never empties, and one of each resource to aim at. */
export async function startFixture(): Promise<Fixture> {
  const svc = await startTestService();
  const tenant = await createTenant(svc.admin, { plan: 'enterprise' });
  await svc.admin.quotas.set.mutate({
    orgId: tenant.org.id,
    api: { requestsPerMinute: 1_000_000, maxBurst: 1_000_000 },
  });
  const workspaceId = tenant.workspace.id;
  const table = await svc.call('POST', '/api/v1/tables', {
    key: tenant.key,
    body: {
      workspaceId,
      name: 'fuzz_people',
      schema: {
        columns: [
          { name: 'email', type: 'string', required: true, unique: true },
          { name: 'age', type: 'number' },
          { name: 'meta', type: 'json' },
        ],
      },
    },
  });
  expect(table.status).toBe(200);
  const kb = await svc.admin.knowledge.create.mutate({ workspaceId, name: 'fuzz kb' });
  // Real ids for the file and document paths: a fuzzed request that reaches them must still change nothing.
  const file = await upload(svc, tenant.key, { workspaceId, name: 'fuzz.txt' });
  expect(file.status).toBe(200);
  const doc = await upload(
    svc,
    tenant.key,
    { workspaceId, name: 'fuzz-doc.txt' },
    `/api/v1/knowledge/${kb.id}/documents`,
  );
  expect(doc.status).toBe(200);
  // A required input: an execute body that lacks it is refused before anything is queued.
  const workflowId = await deployWorkflow(svc.admin, workspaceId, {
    inputs: { name: { type: 'string', required: true } },
    blocks: [{ id: 'done', type: 'response', data: { hello: '<start.name>' } }],
    edges: [],
  });
  return {
    svc,
    tenant,
    key: tenant.key,
    workspaceId,
    tableId: table.body.data.table.id,
    fileId: file.body.data.file.id,
    knowledgeBaseId: kb.id as string,
    documentId: doc.body.data.document.id,
    workflowId,
  };
}

export interface RawAnswer {
  status: number;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: answers are read as arbitrary JSON
  json: any;
}

/** One request with exactly these bytes and headers (no JSON shaping), answered as text and JSON. */
export async function rawRequest(
  svc: TestService,
  method: string,
  url: string,
  init: { headers?: Record<string, string>; body?: string | Uint8Array<ArrayBuffer> } = {},
): Promise<RawAnswer> {
  const res = await svc.app.request(new URL(url, 'http://api.test').toString(), {
    method,
    headers: init.headers ?? {},
    ...(init.body !== undefined && method !== 'GET' && method !== 'HEAD' ? { body: init.body } : {}),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}

/**
 * True when the answer is a refusal of the documented shape: 4xx and `{error: string, details?}`.
 * The MCP endpoint speaks JSON-RPC: its transport refuses with `{jsonrpc, error: {code, message}, id}`.
 */
export function isCleanRefusal(a: RawAnswer, jsonRpc = false): boolean {
  if (a.status < 400 || a.status >= 500) return false;
  const j = a.json;
  if (typeof j !== 'object' || j === null || Array.isArray(j)) return false;
  if (jsonRpc && j.jsonrpc === '2.0')
    return typeof j.error?.message === 'string' && typeof j.error?.code === 'number';
  if (typeof j.error !== 'string' || j.error === '') return false;
  return Object.keys(j).every((k) => k === 'error' || k === 'details');
}

/** Fails with the request and the answer when it is not a clean refusal. */
export function expectCleanRefusal(a: RawAnswer, what: string) {
  expect(
    isCleanRefusal(a, what.includes('/api/mcp/')),
    `${what} -> ${a.status} ${a.text.slice(0, 300)}`,
  ).toBe(true);
}

/** Tables whose rows change on any request, refused or not (token buckets; key last-use stamps). */
const VOLATILE = new Set(['rate_limit_buckets', 'api_keys']);

/**
 * A hash of every row of every table of the service (public schema and the queue's job table), so
 * equality before and after proves nothing was written. Cheap at fixture sizes: one query per table.
 */
export async function fingerprint(svc: TestService): Promise<Record<string, string>> {
  const tables = await svc.db.query<{ schema: string; name: string }>(
    `select table_schema as schema, table_name as name from information_schema.tables
      where table_type = 'BASE TABLE' and (table_schema = 'public' or (table_schema = 'pgboss' and table_name = 'job'))
      order by 1, 2`,
  );
  const out: Record<string, string> = {};
  for (const { schema, name } of tables) {
    if (VOLATILE.has(name) || name === 'migrations' || name === 'schema_migrations') continue;
    const [row] = await svc.db.query<{ h: string; n: number }>(
      `select md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as h, count(*)::int as n
         from "${schema}"."${name}" t`,
    );
    out[`${schema}.${name}`] = `${row?.n}:${row?.h}`;
  }
  return out;
}
