// Tenant isolation, for every endpoint of the OpenAPI document and every kind of key a caller of
// organization A may hold: a request naming another workspace's or another organization's
// resources answers 401, 403 or 404 only, its body shows none of their ids, names or counts, a
// refused write changes nothing, and lists of the caller's own workspace hold only its own items.
// The endpoints come from the OpenAPI document, so a new endpoint is probed without editing this file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../api/openapi/document.ts';
import { SCOPES } from '../../db/key-scopes.ts';
import { multipart } from '../api/files-helpers.ts';
import { type ApiResponse, startTestService, type TestService } from '../helpers/service.ts';
import { buildWorld, idsOf, type KeyKind, type Place, snapshot, type World } from './isolation-fixtures.ts';

let svc: TestService;
let world: World;

beforeAll(async () => {
  svc = await startTestService({}, { runner: true });
  world = await buildWorld(svc);
}, 120_000);
afterAll(() => svc?.close());

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is walked as plain JSON
type Json = any;

interface Operation {
  method: string;
  path: string;
  op: Json;
}

/** Every operation of the document that needs an API key (probes, the document itself and webhooks by token do not). */
function keyedOperations(): Operation[] {
  const doc = openApiDocument(svc.app) as Json;
  const out: Operation[] = [];
  for (const [path, ops] of Object.entries(doc.paths as Json))
    for (const [method, op] of Object.entries(ops as Json)) {
      const o = op as Json;
      if (Array.isArray(o.security) && o.security.length === 0) continue;
      out.push({ method: method.toUpperCase(), path, op: o });
    }
  return out;
}

/** The id a path parameter names, by parameter and the path around it. */
function pathId(path: string, name: string, p: Place): string {
  if (name === 'workspaceId') return p.workspaceId;
  if (name === 'tableId') return p.tableId;
  if (name === 'rowId') return p.rowId;
  if (name === 'fileId') return p.fileId;
  if (name === 'documentId') return p.documentId;
  if (name === 'chunkId') return p.chunkId;
  if (name === 'tagName') return p.tagName;
  if (name === 'jobId') return p.executionId;
  if (name === 'executionId') return p.executionId;
  // A resume names the workflow and a pause context (the place's execution is not paused: any id).
  if (name === 'workflowId') return p.workflowId;
  if (name === 'contextId') return p.executionId;
  if (name === 'id') {
    if (path.startsWith('/api/workflows/') || path.startsWith('/api/v1/workflows/')) return p.workflowId;
    if (path.startsWith('/api/v1/audit-logs/')) return p.auditLogId;
    if (path.startsWith('/api/v1/knowledge/')) return p.knowledgeBaseId;
    if (path.startsWith('/api/v1/logs/')) return p.logId;
  }
  throw new Error(`isolation test: no id for path parameter ${name} of ${path}; teach pathId`);
}

/** Query parameters that name resources, filled with the place's ids (the rest are left out). */
function queryId(name: string, p: Place, path = ''): string | undefined {
  if (name === 'folderId' && path.startsWith('/api/v1/workflows')) return p.workflowFolderId;
  return (
    {
      workflowIds: p.workflowId,
      executionId: p.executionId,
      resourceId: p.tableId,
      folderId: p.folderId,
    } as Record<string, string>
  )[name];
}

/** The first example of a request body. */
function exampleOf(content: Json): Json {
  if (content.example !== undefined) return content.example;
  if (content.examples) return (Object.values(content.examples)[0] as Json).value;
  if (content.schema?.example !== undefined) return content.schema.example;
  return {};
}

/** The example body with every id in it swapped for the place's: `ws` for workspaceId, `res` for the rest. */
function fillBody(body: Json, ws: Place, res: Place, org: string | undefined): Json {
  if (Array.isArray(body)) return body.map((v) => fillBody(v, ws, res, org));
  if (!body || typeof body !== 'object') return body;
  const out: Json = {};
  for (const [k, v] of Object.entries(body)) {
    if (k === 'workspaceId') out[k] = ws.workspaceId;
    else if (k === 'knowledgeBaseIds') out[k] = [res.knowledgeBaseId];
    else if (k === 'rowIds') out[k] = [res.rowId];
    else if (k === 'documentIds') out[k] = [res.documentId];
    // Only the workflow routes take a folderId in a body.
    else if (k === 'folderId') out[k] = res.workflowFolderId;
    else out[k] = fillBody(v, ws, res, org);
  }
  if (org && body.name !== undefined && 'skipDefaultWorkflow' in body) out.organizationId = org;
  return out;
}

interface Probe {
  label: string;
  request: Request;
  /** The strings of the request: ids it names may be echoed back, others may not. */
  sent: string;
  /** Whether it names something the caller must not reach (else it only reads the caller's own workspace). */
  foreign: boolean;
}

/**
 * The request for an operation: path ids and resource ids from `res`, workspaceId from `ws`.
 * Null when the request would name nothing foreign and is not a read (it would just do the
 * caller's own work, e.g. create a table in the caller's own workspace).
 */
function buildProbe(
  o: Operation,
  kind: KeyKind,
  ws: Place,
  res: Place,
  own: Place,
  always = false,
): Probe | null {
  const foreignIds = new Set([...idsOf(res), ...idsOf(ws)].filter((id) => !idsOf(own).includes(id)));
  const crossOrg = ws.orgId !== own.orgId ? ws.orgId : undefined;
  let path = o.path;
  const url = new URL('http://api.test');
  const headers: Record<string, string> = {};
  if (kind.key !== undefined) headers['X-API-Key'] = kind.key;
  for (const param of (o.op.parameters ?? []) as Json[]) {
    if (param.in === 'path') {
      const id = param.name === 'workspaceId' ? ws.workspaceId : pathId(o.path, param.name, res);
      path = path.replace(`{${param.name}}`, id);
    } else if (param.in === 'query') {
      const value = param.name === 'workspaceId' ? ws.workspaceId : queryId(param.name, res, o.path);
      if (value !== undefined) url.searchParams.set(param.name, value);
    }
  }
  if (o.path.startsWith('/api/mcp/')) headers.Accept = 'application/json, text/event-stream';
  url.pathname = path;
  let body: BodyInit | undefined;
  let bodyText = '';
  const content = o.op.requestBody?.content as Json;
  if (content?.['application/json']) {
    const example = exampleOf(content['application/json']);
    // tools/list: the MCP example people try first.
    const value = o.path.startsWith('/api/mcp/')
      ? { jsonrpc: '2.0', id: 1, method: 'tools/list' }
      : fillBody(example, ws, res, crossOrg);
    bodyText = JSON.stringify(value);
    body = bodyText;
    headers['Content-Type'] = 'application/json';
  } else if (content?.['multipart/form-data']) {
    const m = multipart([
      { field: 'workspaceId', value: ws.workspaceId },
      { file: 'file', name: `intruder-${own.marker}.txt`, type: 'text/plain', content: Buffer.from('x') },
    ]);
    body = m.body;
    headers['Content-Type'] = m.contentType;
    bodyText = ws.workspaceId;
  }
  const sent = `${url.pathname}?${url.searchParams} ${bodyText}`;
  const foreign =
    [...foreignIds].some((id) => sent.includes(id)) || (crossOrg !== undefined && sent.includes(crossOrg));
  if (!foreign && o.method !== 'GET' && !always) return null;
  const request = new Request(url, {
    method: o.method,
    headers,
    ...(body !== undefined ? { body, duplex: 'half' } : {}),
  } as RequestInit);
  return {
    label: `${o.method} ${o.path} [${kind.name}] ws=${ws.label} res=${res.label}`,
    request,
    sent,
    foreign,
  };
}

async function send(request: Request): Promise<ApiResponse & { text: string }> {
  const res = await svc.app.request(request);
  // Headers too: a Content-Disposition or Location could name another tenant's file or job.
  const text = `${[...res.headers].map(([k, v]) => `${k}: ${v}`).join('\n')}\n\n${await res.text()}`;
  const bodyText = text.slice(text.indexOf('\n\n') + 2);
  let body: Json = null;
  try {
    body = bodyText ? JSON.parse(bodyText) : null;
  } catch {
    body = bodyText;
  }
  return { status: res.status, headers: res.headers, body, text };
}

/** Every id, marker and person of `others` that the answer shows and the request did not send. */
function leaks(text: string, sent: string, others: Place[]): string[] {
  const found: string[] = [];
  for (const p of others) {
    if (text.includes(p.marker)) found.push(`marker ${p.marker}`);
    for (const id of idsOf(p)) if (text.includes(id) && !sent.includes(id)) found.push(`id ${id}`);
  }
  for (const s of world.orgBSecrets) if (text.includes(s)) found.push(`org B detail ${s}`);
  if (text.includes(world.orgB.org.id) && !sent.includes(world.orgB.org.id)) found.push('org B id');
  return found;
}

/** Numbers under count-like keys and non-empty `data` lists: what a filtered answer must not hold. */
function countsIn(body: Json, path = ''): string[] {
  if (!body || typeof body !== 'object') return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(body)) {
    if (typeof v === 'number' && /count|total/i.test(k) && v > 0) out.push(`${path}${k}=${v}`);
    if (Array.isArray(v) && v.length > 0 && v.every((x) => x && typeof x === 'object'))
      out.push(`${path}${k}[${v.length}]`);
    else out.push(...countsIn(v, `${path}${k}.`));
  }
  return out;
}

const ALLOWED = [401, 403, 404];

/**
 * Whether a refusal is one of the allowed answers. One documented answer beside 401/403/404 says
 * nothing about the other tenant: 405 where the document lists no success at all (MCP's GET and
 * DELETE: the same answer for every workspace, existing or not).
 */
function refusedWell(o: Operation, answer: { status: number; body: Json }): boolean {
  if (ALLOWED.includes(answer.status)) return typeof answer.body?.error === 'string';
  const documented = Object.keys(o.op.responses ?? {});
  return (
    answer.status === 405 &&
    !documented.some((code) => code.startsWith('2')) &&
    answer.body?.error !== undefined
  );
}

describe('isolation matrix', () => {
  it('refuses every endpoint × key kind × foreign workspace with 401/403/404 and leaks nothing', async () => {
    const { A1, A2, B1, B2 } = world.places;
    const before = await snapshot(svc);
    const ops = keyedOperations();
    expect(ops.length).toBeGreaterThan(20);
    // Among them the table routes that are not plain JSON in and out: the upload, the streamed export.
    expect(ops.map((o) => `${o.method} ${o.path}`)).toEqual(
      expect.arrayContaining([
        'POST /api/v1/tables/{tableId}/rows/import',
        'GET /api/v1/tables/{tableId}/rows/export',
        'POST /api/v1/tables/{tableId}/columns',
        'PATCH /api/v1/tables/{tableId}/columns',
        'DELETE /api/v1/tables/{tableId}/columns',
      ]),
    );
    const failures: string[] = [];
    let requests = 0;
    const statuses: Record<number, number> = {};
    const seen = new Set<string>();
    for (const o of ops) {
      for (const kind of world.keys) {
        // Targets: all of the other places; for keys that do not authenticate, the own workspace too.
        const targets = kind.valid ? [A2, B1, B2] : [A1, A2, B1, B2];
        const combos: [Place, Place][] = [];
        for (const t of targets) {
          combos.push([t, t]); // everything foreign
          if (t !== A1) {
            combos.push([A1, t]); // the caller's own workspace, another's resource ids
            // The caller's own table, another table's row.
            combos.push([A1, { ...A1, label: `a1+${t.label}-row`, rowId: t.rowId }]);
          }
        }
        for (const [ws, res] of combos) {
          const probe = buildProbe(o, kind, ws, res, A1);
          if (!probe || seen.has(`${kind.name} ${probe.request.method} ${probe.sent}`)) continue;
          seen.add(`${kind.name} ${probe.request.method} ${probe.sent}`);
          const answer = await send(probe.request);
          requests++;
          statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
          const others = [A2, B1, B2];
          // The owner holds A2 and reads A's audit trail, which names A2's resources by design.
          const ownerOrgWide = kind.name === 'owner personal' && o.path === '/api/v1/audit-logs' && ws === A1;
          const leaked = leaks(answer.text, probe.sent, ownerOrgWide ? [B1, B2] : others);
          if (leaked.length) failures.push(`${probe.label}: ${answer.status} leaks ${leaked.join(', ')}`);
          if (answer.status >= 500)
            failures.push(`${probe.label}: ${answer.status} ${answer.text.slice(0, 200)}`);
          if (!kind.valid || (probe.foreign && ws !== A1)) {
            if (!refusedWell(o, answer))
              failures.push(`${probe.label}: ${answer.status} ${answer.text.slice(0, 200)}`);
          } else if (probe.foreign && answer.status < 300 && !ownerOrgWide) {
            // The caller's own workspace filtered by another's ids: nothing of theirs, not even a count.
            const counts = countsIn(answer.body);
            if (counts.length) failures.push(`${probe.label}: ${answer.status} counts ${counts.join(', ')}`);
          } else if (probe.foreign && answer.status >= 300 && !refusedWell(o, answer)) {
            // Another's resource id under the caller's own workspace reads as not found, or refused.
            failures.push(`${probe.label}: ${answer.status} ${answer.text.slice(0, 200)}`);
          }
        }
      }
    }
    console.info(
      `isolation matrix: ${ops.length} endpoints × ${world.keys.length} key kinds: ${requests} requests, answers ${JSON.stringify(statuses)}`,
    );
    expect(failures).toEqual([]);
    expect(await snapshot(svc)).toEqual(before);
  }, 120_000);

  it("lists of the caller's own workspace hold only its own items", async () => {
    const { A1, A2, B1, B2 } = world.places;
    const lists = keyedOperations().filter(
      (o) =>
        o.method === 'GET' &&
        !o.path.includes('{') &&
        o.op.parameters?.some((p: Json) => p.name === 'workspaceId'),
    );
    expect(lists.length).toBeGreaterThan(4);
    for (const o of lists) {
      for (const kind of world.keys.filter((k) => k.valid)) {
        const url = new URL(`http://api.test${o.path}`);
        url.searchParams.set('workspaceId', A1.workspaceId);
        const answer = await send(new Request(url, { headers: { 'X-API-Key': kind.key as string } }));
        const label = `${o.path} [${kind.name}]`;
        if (o.path === '/api/v1/audit-logs') {
          // Org admins and owners only; the owner sees A's org-wide trail, never B's.
          expect(leaks(answer.text, '', [B1, B2]), label).toEqual([]);
          continue;
        }
        expect(answer.status, `${label} ${answer.text.slice(0, 200)}`).toBe(200);
        expect(leaks(answer.text, url.search, [A2, B1, B2]), label).toEqual([]);
        // Not trivially empty: the caller's own items are there.
        const own = [A1.marker, ...idsOf(A1).slice(1)].filter((x) => answer.text.includes(x));
        expect(own, label).not.toEqual([]);
      }
    }
  });
});

describe('permissions within the own workspace', () => {
  it('refuses every write of a read-only key with 403, and the refusal changes nothing', async () => {
    const { A1 } = world.places;
    const reader: KeyKind = { name: 'read personal', key: world.readKey, valid: true };
    const before = await snapshot(svc);
    let writes = 0;
    for (const o of keyedOperations()) {
      if (o.method === 'GET') continue;
      // Reads sent as POST (search, MCP's JSON-RPC) and workspace creation (an organization matter).
      if (
        ['/api/v1/knowledge/search', '/api/v1/workspaces'].includes(o.path) ||
        o.path.startsWith('/api/mcp/')
      )
        continue;
      // The own workspace's own resources: only the permission stands in the way.
      const probe = buildProbe(o, reader, A1, A1, A1, true) as Probe;
      const answer = await send(probe.request);
      writes++;
      expect(answer.status, `${probe.label}: ${answer.text.slice(0, 200)}`).toBe(403);
      expect(answer.body.error).toMatch(/permission/i);
    }
    expect(writes).toBeGreaterThan(8);
    expect(await snapshot(svc)).toEqual(before);
  });
});

describe('scopes within the own workspace', () => {
  /** The scope an operation documents as its security requirement (none: any key may call it). */
  const scopeOf = (o: Operation): string | undefined =>
    ((o.op.security ?? []) as Record<string, string[]>[]).flatMap((s) => Object.values(s).flat())[0];

  it('refuses every operation to a key of the owner holding every scope but the one it needs (and its :write): 403 naming it, nothing changed', async () => {
    const { A1 } = world.places;
    const before = await snapshot(svc);
    const keys = new Map<string, string>();
    let probed = 0;
    for (const o of keyedOperations()) {
      const needed = scopeOf(o);
      if (!needed) continue;
      if (!keys.has(needed)) {
        const granting = [needed, needed.replace(/:read$/, ':write')];
        const scopes = SCOPES.filter((s) => !granting.includes(s));
        const { key } = await svc.admin.keys.create.mutate({
          type: 'personal',
          userId: world.orgA.user.id,
          name: `all but ${needed}`,
          scopes,
        });
        keys.set(needed, key);
      }
      const kind: KeyKind = { name: `all but ${needed}`, key: keys.get(needed), valid: true };
      // The own workspace's own resources: only the scope stands in the way.
      const probe = buildProbe(o, kind, A1, A1, A1, true) as Probe;
      const answer = await send(probe.request);
      probed++;
      expect(answer.status, `${probe.label}: ${answer.text.slice(0, 200)}`).toBe(403);
      expect(answer.body.error, probe.label).toContain(needed);
      expect(leaks(answer.text, probe.sent, [A1, world.places.A2, world.places.B1])).toEqual([]);
    }
    // Every scope a route needs today was probed (workflows:read and :write wait for their routes).
    expect(probed).toBeGreaterThan(30);
    expect([...keys.keys()].sort()).toEqual(
      expect.arrayContaining(['audit:read', 'files:read', 'files:write', 'knowledge:read', 'logs:read']),
    );
    expect(await snapshot(svc)).toEqual(before);
  });

  it('lets the same operations through to a key holding exactly the scope they need', async () => {
    const { A1 } = world.places;
    const keys = new Map<string, string>();
    for (const o of keyedOperations()) {
      const needed = scopeOf(o);
      // Reads only: the writes do the work they ask for (the last describe does them all).
      if (!needed || o.method !== 'GET') continue;
      if (!keys.has(needed)) {
        const { key } = await svc.admin.keys.create.mutate({
          type: 'personal',
          userId: world.orgA.user.id,
          name: `only ${needed}`,
          scopes: [needed as (typeof SCOPES)[number]],
        });
        keys.set(needed, key);
      }
      const kind: KeyKind = { name: `only ${needed}`, key: keys.get(needed), valid: true };
      const probe = buildProbe(o, kind, A1, A1, A1, true) as Probe;
      const answer = await send(probe.request);
      expect(answer.status, `${probe.label}: ${answer.text.slice(0, 200)}`).toBeLessThan(500);
      expect([401, 403], `${probe.label}: ${answer.text.slice(0, 200)}`).not.toContain(answer.status);
    }
  });
});

describe('resources by id', () => {
  it("answers another tenant's job, log entry, file download and deletion, row, document and MCP tools/list with 404, showing nothing", async () => {
    const { A1, B1, A2 } = world.places;
    const before = await snapshot(svc);
    for (const key of [world.orgA.key, world.writeKey, world.workspaceKeyA1]) {
      for (const p of [B1, A2]) {
        // A resource out of the key's reach reads as not found; the one exception is the owner's
        // personal key in A2, which the owner holds but which refuses personal keys: 403 says so.
        const byId = key === world.orgA.key && p === A2 ? 403 : 404;
        const cases: [string, number[]][] = [
          [`/api/jobs/${p.executionId}`, [byId]],
          [`/api/v1/logs/${p.logId}`, [byId]],
          [`/api/v1/logs/${p.executionId}`, [404]],
          [`/api/v1/logs/executions/${p.executionId}`, [byId]],
          [`/api/v1/workflows/${p.workflowId}/runs`, [byId]],
          [`/api/workflows/${p.workflowId}/executions/${p.executionId}/stream`, [byId]],
          // Audit entries: another organization's are not found; A2's are refused to the member
          // (not an admin), the workspace key and, there, the owner's personal key.
          [`/api/v1/audit-logs/${p.auditLogId}`, [403, 404]],
          [`/api/v1/files/${p.fileId}/content?workspaceId=${A1.workspaceId}`, [404]],
          // Naming the other workspace itself: refused there (403), or not found.
          [`/api/v1/files/${p.fileId}/content?workspaceId=${p.workspaceId}`, [403, 404]],
          [`/api/v1/tables/${p.tableId}/rows/${p.rowId}?workspaceId=${A1.workspaceId}`, [404]],
          [`/api/v1/knowledge/${p.knowledgeBaseId}/documents?workspaceId=${A1.workspaceId}`, [404]],
          [
            `/api/v1/knowledge/${p.knowledgeBaseId}/documents/${p.documentId}?workspaceId=${A1.workspaceId}`,
            [404],
          ],
          // The caller's own base, another's document.
          [
            `/api/v1/knowledge/${A1.knowledgeBaseId}/documents/${p.documentId}?workspaceId=${A1.workspaceId}`,
            [404],
          ],
          [
            `/api/v1/knowledge/${p.knowledgeBaseId}/documents/${p.documentId}?workspaceId=${p.workspaceId}`,
            [byId],
          ],
          // A document's chunks and a base's tags, by another's ids under the caller's own workspace.
          [
            `/api/v1/knowledge/${A1.knowledgeBaseId}/documents/${p.documentId}/chunks?workspaceId=${A1.workspaceId}`,
            [404],
          ],
          [`/api/v1/knowledge/${p.knowledgeBaseId}/tags?workspaceId=${A1.workspaceId}`, [404]],
          [`DELETE /api/v1/files/${p.fileId}?workspaceId=${A1.workspaceId}`, [404]],
          [`DELETE /api/v1/files/${p.fileId}?workspaceId=${p.workspaceId}`, [403, 404]],
        ];
        for (const [target, statuses] of cases) {
          const [method, path] = target.startsWith('DELETE ') ? ['DELETE', target.slice(7)] : ['GET', target];
          const answer = await send(
            new Request(`http://api.test${path}`, { method, headers: { 'X-API-Key': key } }),
          );
          expect(statuses, `${path}: ${answer.text.slice(0, 200)}`).toContain(answer.status);
          expect(typeof answer.body.error).toBe('string');
          expect(leaks(answer.text, path, [A2, B1, world.places.B2])).toEqual([]);
          expect(answer.text).not.toContain('secret of');
        }
        const mcp = await send(
          new Request(`http://api.test/api/mcp/${p.workspaceId}`, {
            method: 'POST',
            headers: {
              'X-API-Key': key,
              'Content-Type': 'application/json',
              Accept: 'application/json, text/event-stream',
            },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
          }),
        );
        expect(mcp.status, `mcp ${p.label}: ${mcp.text.slice(0, 200)}`).toBe(byId);
        expect(leaks(mcp.text, p.workspaceId, [A2, B1, world.places.B2])).toEqual([]);
      }
    }
    expect(await snapshot(svc)).toEqual(before);
  });

  it("never replays another key's answer for a reused Idempotency-Key", async () => {
    const { A1, B1 } = world.places;
    const table = await svc.call('POST', '/api/v1/tables', {
      key: world.orgA.key,
      body: {
        workspaceId: A1.workspaceId,
        name: `idem_${A1.marker}`,
        schema: { columns: [{ name: 'note', type: 'string' }] },
      },
    });
    expect(table.status).toBe(200);
    const tableId = table.body.data.table.id as string;
    const idem = `isolation-${Math.random()}`;
    const insert = (key: string, body: unknown, id = tableId) =>
      svc.call('POST', `/api/v1/tables/${id}/rows`, { key, body, headers: { 'Idempotency-Key': idem } });
    const body = { workspaceId: A1.workspaceId, data: { note: 'first' } };
    const first = await insert(world.orgA.key, body);
    expect(first.status).toBe(200);
    const firstRowId = first.body.data.row.id as string;
    // Another key of the same organization, the same request: its own answer, its own row.
    const second = await insert(world.writeKey, body);
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(second.body.data.row.id).not.toBe(firstRowId);
    // The workspace key too.
    const third = await insert(world.workspaceKeyA1, body);
    expect(third.status).toBe(200);
    expect(third.headers.get('idempotent-replayed')).toBeNull();
    // Another organization's key on A's table: refused, not replayed, and without A's row id.
    const foreign = await insert(world.orgB.key, body);
    expect(ALLOWED).toContain(foreign.status);
    expect(foreign.headers.get('idempotent-replayed')).toBeNull();
    expect(JSON.stringify(foreign.body)).not.toContain(firstRowId);
    // The same key in organization B's own table: B's own work, not A's answer.
    const own = await insert(
      world.orgB.key,
      { workspaceId: B1.workspaceId, data: { email: `idem-${B1.marker}@example.com` } },
      B1.tableId,
    );
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect(own.headers.get('idempotent-replayed')).toBeNull();
    expect(JSON.stringify(own.body)).not.toContain(firstRowId);
    // The first key still gets its own answer back.
    const replay = await insert(world.orgA.key, body);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.data.row.id).toBe(firstRowId);
    const rows = await svc.call('GET', `/api/v1/tables/${tableId}/rows`, {
      key: world.orgA.key,
      query: { workspaceId: A1.workspaceId },
    });
    expect(rows.body.data.rows).toHaveLength(3);
  });
});

describe('the probes themselves', () => {
  // Last: it does the work it asks for (deletes A1's table among others).
  it("reach every endpoint: the same requests with the caller's own ids are not refused", async () => {
    const { A1 } = world.places;
    const owner = world.keys[0] as KeyKind;
    // Deletions last, the table's (and knowledge base's) own last of all: what is inside is probed before it goes;
    // the row's own deletion before the deletion by ids, which passes over a row already gone.
    // A document's chunks first of all: reprocessing it (or its base's new chunking) replaces them.
    const rank = (o: Operation) =>
      o.path.includes('/chunks')
        ? o.method === 'DELETE'
          ? -1
          : -2
        : o.method !== 'DELETE'
          ? 0
          : o.path === '/api/v1/tables/{tableId}' ||
              o.path === '/api/v1/workflows/{id}' ||
              o.path === '/api/v1/knowledge/{id}'
            ? 3
            : o.path.endsWith('{rowId}')
              ? 1
              : 2;
    const ops = keyedOperations().sort((a, b) => rank(a) - rank(b));
    for (const o of ops) {
      const probe = buildProbe(o, owner, A1, A1, A1, true) as Probe;
      const answer = await send(probe.request);
      expect(answer.status, `${probe.label}: ${answer.text.slice(0, 200)}`).toBeLessThan(500);
      expect([401, 403, 404], `${probe.label}: ${answer.text.slice(0, 200)}`).not.toContain(answer.status);
    }
  });
});
