// Idempotency-Key on execute (sync and async), row inserts, file uploads and document uploads: a
// retry replays the first answer and the work happens once; another body or path is a 422; a key
// in flight is a 409; keys are per API key; 5xx, 429 and 409 leave the key free; records expire
// after 24 hours (an injected clock moves time) and are purged; a crashed request's claim lapses.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS } from '../../api/middleware/idempotency.ts';
import { listen } from '../../http/serve.ts';
import {
  createTenant,
  createWorkspace,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';
import { deployWorkflow } from '../helpers/workflows.ts';
import { type Content, fileRows, localBlobs, multipart, uploadParts } from './files-helpers.ts';
import { createKnowledgeBase } from './knowledge-helpers.ts';

let svc: TestService;
let now = new Date('2026-05-04T09:00:00.000Z');
const clock = () => now;
const advance = (ms: number) => {
  now = new Date(now.getTime() + ms);
};

beforeAll(async () => {
  // The http block may reach this machine: a local server holds an execution in flight.
  svc = await startTestService({ HTTP_ALLOW_LIST: '127.0.0.1' }, { runner: true, clock });
});
afterAll(() => svc.close());

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
  body: any;
}

async function answer(res: Response): Promise<Answer> {
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : null };
}

/** A JSON request with an optional Idempotency-Key (the raw text is sent as given). */
async function send(
  method: string,
  path: string,
  o: { key: string; idem?: string; body?: unknown; raw?: string; headers?: Record<string, string> },
): Promise<Answer> {
  const headers: Record<string, string> = {
    'X-API-Key': o.key,
    'Content-Type': 'application/json',
    ...o.headers,
  };
  if (o.idem !== undefined) headers['Idempotency-Key'] = o.idem;
  const body = o.raw ?? (o.body === undefined ? undefined : JSON.stringify(o.body));
  return answer(
    await svc.app.request(`http://api.test${path}`, { method, headers, ...(body ? { body } : {}) }),
  );
}

/** Cuts a stream into chunks of `size` bytes, so multipart boundaries straddle chunks. */
function rechunk(size: number) {
  let pending = new Uint8Array(0);
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      const all = new Uint8Array(pending.length + chunk.length);
      all.set(pending);
      all.set(chunk, pending.length);
      let at = 0;
      for (; at + size <= all.length; at += size) controller.enqueue(all.slice(at, at + size));
      pending = all.slice(at);
    },
    flush(controller) {
      if (pending.length) controller.enqueue(pending);
    },
  });
}

/** A multipart upload (a new random boundary each time, as real clients send). */
async function sendUpload(
  path: string,
  o: { key: string; idem?: string; workspaceId: string; name?: string; content?: Content; chunk?: number },
): Promise<Answer> {
  const { body: parts, contentType } = multipart(
    uploadParts({
      workspaceId: o.workspaceId,
      name: o.name ?? 'notes.txt',
      content: o.content ?? Buffer.from('hello, idempotent world'),
    }),
  );
  const body = o.chunk ? parts.pipeThrough(rechunk(o.chunk)) : parts;
  const headers: Record<string, string> = { 'X-API-Key': o.key, 'Content-Type': contentType };
  if (o.idem !== undefined) headers['Idempotency-Key'] = o.idem;
  return answer(
    await svc.app.request(
      new Request(`http://api.test${path}`, { method: 'POST', headers, body, duplex: 'half' } as RequestInit),
    ),
  );
}

function expectReplay(replayed: Answer, first: Answer) {
  expect(replayed.status).toBe(first.status);
  expect(replayed.text).toBe(first.text);
  expect(replayed.headers.get('content-type')).toBe(first.headers.get('content-type'));
  expect(replayed.headers.get('idempotent-replayed')).toBe('true');
  expect(first.headers.get('idempotent-replayed')).toBeNull();
}

function expectError(res: Answer, status: number, message?: RegExp) {
  expect(res.status, res.text).toBe(status);
  expect(typeof res.body.error).toBe('string');
  if (message) expect(res.body.error).toMatch(message);
  expect(res.headers.get('idempotent-replayed')).toBeNull();
}

const count = async (sql: string, params: unknown[]) =>
  Number((await svc.db.query<{ n: number | string }>(sql, params))[0]?.n);

const executions = (workflowId: string) =>
  count('select count(*) as n from executions where workflow_id = $1', [workflowId]);
const jobs = (workflowId: string) =>
  count(
    `select count(*) as n from pgboss.job
      where name = 'workflow-execute' and id in (select id from executions where workflow_id = $1)`,
    [workflowId],
  );
const spentExecutions = (t: Tenant) =>
  count('select coalesce(sum(executions), 0) as n from usage_periods where subject = $1', [
    `user:${t.user.id}`,
  ]);
const records = (idem: string) => count('select count(*) as n from idempotency_keys where key = $1', [idem]);
/** A bucket as stored: a replay must not touch it. */
const bucket = async (t: Tenant, kind: 'sync' | 'async' | 'api') =>
  (
    await svc.db.query<{ tokens: number; updated_at: Date }>(
      'select tokens, updated_at from rate_limit_buckets where key = $1',
      [`user:${t.user.id}:${kind}`],
    )
  )[0];

let keyCounter = 0;
const newKey = (label = 'k') => `${label}-${Date.now().toString(36)}-${keyCounter++}`;

/** A local HTTP server that holds its first request until released: an execution kept in flight. */
async function holdingServer() {
  let arrived = () => {};
  const arrival = new Promise<void>((r) => {
    arrived = r;
  });
  let release = () => {};
  const released = new Promise<void>((r) => {
    release = r;
  });
  const server = createServer((_req, res) => {
    arrived();
    void released.then(() => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"held":true}'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hold`,
    arrival,
    release,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const ECHO = {
  inputs: { name: { type: 'string', required: true } },
  blocks: [{ id: 'done', type: 'response', data: { greeting: 'Hello, <start.name>!' } }],
};

async function executeSetup(limits: Record<string, unknown> = {}) {
  const tenant = await createTenant(svc.admin);
  const workflowId = await deployWorkflow(svc.admin, tenant.workspace.id, ECHO);
  if (Object.keys(limits).length) await svc.admin.quotas.set.mutate({ orgId: tenant.org.id, ...limits });
  const execute = (body: unknown, idem?: string, key = tenant.key, id = workflowId) =>
    send('POST', `/api/workflows/${id}/execute`, { key, body, ...(idem !== undefined ? { idem } : {}) });
  return { tenant, workflowId, execute };
}

describe('POST /api/workflows/{id}/execute', () => {
  it('replays a sync execution: same status, body and type, executed, billed and rate-limited once', async () => {
    const { tenant, workflowId, execute } = await executeSetup();
    const idem = newKey();
    const first = await execute({ inputs: { name: 'Ada' } }, idem);
    expect(first.status, first.text).toBe(200);
    expect(first.body.output).toEqual({ greeting: 'Hello, Ada!' });
    const tokens = await bucket(tenant, 'sync');
    const again = await execute({ inputs: { name: 'Ada' } }, idem);
    expectReplay(again, first);
    expect(again.body.executionId).toBe(first.body.executionId);
    expect(await executions(workflowId)).toBe(1);
    expect(await jobs(workflowId)).toBe(1);
    expect(await spentExecutions(tenant)).toBe(1);
    expect(await bucket(tenant, 'sync')).toEqual(tokens);
  });

  it('replays an async acknowledgement with the same job, and queues one job', async () => {
    const { tenant, workflowId, execute } = await executeSetup();
    const idem = newKey();
    const first = await execute({ inputs: { name: 'Bo' }, async: true }, idem);
    expect(first.status, first.text).toBe(202);
    const tokens = await bucket(tenant, 'async');
    const again = await execute({ inputs: { name: 'Bo' }, async: true }, idem);
    expectReplay(again, first);
    expect(again.body.taskId).toBe(first.body.taskId);
    expect(await executions(workflowId)).toBe(1);
    expect(await jobs(workflowId)).toBe(1);
    expect(await bucket(tenant, 'async')).toEqual(tokens);
  });

  it('refuses the key with another body (422) or for another workflow (422), executing nothing more', async () => {
    const { tenant, workflowId, execute } = await executeSetup();
    const other = await deployWorkflow(svc.admin, tenant.workspace.id, ECHO);
    const idem = newKey();
    expect((await execute({ inputs: { name: 'Cy' } }, idem)).status).toBe(200);
    expectError(await execute({ inputs: { name: 'Di' } }, idem), 422, /different request body/);
    // The same inputs in other bytes (key order, spacing) are another body: raw bytes are hashed.
    const reordered = await send('POST', `/api/workflows/${workflowId}/execute`, {
      key: tenant.key,
      idem,
      raw: '{ "inputs": { "name": "Cy" } }',
    });
    expectError(reordered, 422, /different request body/);
    expectError(await execute({ inputs: { name: 'Cy' } }, idem, tenant.key, other), 422, /was used for POST/);
    // The same body in the other mode is another request.
    const asAsync = await send('POST', `/api/workflows/${workflowId}/execute`, {
      key: tenant.key,
      idem,
      body: { inputs: { name: 'Cy' } },
      headers: { 'X-Execution-Mode': 'async' },
    });
    expectError(asAsync, 422, /X-Execution-Mode/);
    expect(await executions(workflowId)).toBe(1);
    expect(await executions(other)).toBe(0);
  });

  it('runs two concurrent duplicates once: the other is told 409 (in flight) or replayed', async () => {
    const { workflowId, execute } = await executeSetup();
    const idem = newKey();
    const answers = await Promise.all([
      execute({ inputs: { name: 'Ed' } }, idem),
      execute({ inputs: { name: 'Ed' } }, idem),
    ]);
    const done = answers.filter((a) => a.status === 200 && !a.headers.get('idempotent-replayed'));
    expect(done).toHaveLength(1);
    for (const a of answers.filter((x) => x !== done[0])) {
      if (a.status === 409) {
        expect(a.body.error).toMatch(/still in progress/);
        expect(a.headers.get('retry-after')).toBe('1');
      } else expectReplay(a, done[0] as Answer);
    }
    expect(await executions(workflowId)).toBe(1);
    // Once answered, the key replays.
    expectReplay(await execute({ inputs: { name: 'Ed' } }, idem), done[0] as Answer);
  });

  it('replays to every one of many concurrent retries of an answered key (they share claim statements)', async () => {
    const { workflowId, execute } = await executeSetup();
    const idem = newKey();
    const first = await execute({ inputs: { name: 'Flo' }, async: true }, idem);
    expect(first.status, first.text).toBe(202);
    const retries = await Promise.all(
      Array.from({ length: 12 }, () => execute({ inputs: { name: 'Flo' }, async: true }, idem)),
    );
    for (const retry of retries) expectReplay(retry, first);
    expect(await executions(workflowId)).toBe(1);
  });

  it('answers each of many concurrent duplicates of a new key: one does the work, none fails', async () => {
    const { workflowId, execute } = await executeSetup();
    const idem = newKey();
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => execute({ inputs: { name: 'Gus' }, async: true }, idem)),
    );
    const done = answers.filter((a) => a.status === 202 && !a.headers.get('idempotent-replayed'));
    expect(done).toHaveLength(1);
    for (const a of answers.filter((x) => x !== done[0])) {
      if (a.status === 409) expect(a.body.error).toMatch(/still in progress/);
      else expectReplay(a, done[0] as Answer);
    }
    expect(await executions(workflowId)).toBe(1);
  });

  it('keeps keys per API key: another key of the same user does its own work with the same key value', async () => {
    const { tenant, workflowId, execute } = await executeSetup();
    const second = await svc.admin.keys.create.mutate({
      type: 'personal',
      userId: tenant.user.id,
      name: 'two',
    });
    const wsKey = await svc.admin.keys.create.mutate({
      type: 'workspace',
      workspaceId: tenant.workspace.id,
      name: 'ws',
    });
    const idem = newKey();
    const a = await execute({ inputs: { name: 'Fa' } }, idem);
    const b = await execute({ inputs: { name: 'Fa' } }, idem, second.key);
    const c = await execute({ inputs: { name: 'Fa' } }, idem, wsKey.key);
    for (const r of [a, b, c]) {
      expect(r.status, r.text).toBe(200);
      expect(r.headers.get('idempotent-replayed')).toBeNull();
    }
    expect(new Set([a, b, c].map((r) => r.body.executionId)).size).toBe(3);
    expect(await executions(workflowId)).toBe(3);
    expect(await records(idem)).toBe(3);
  });

  it('never shows one workspace the answer of another: the key reused there is another request (422)', async () => {
    const { tenant, execute } = await executeSetup();
    const elsewhere = await createWorkspace(svc.admin, tenant);
    const otherWorkflow = await deployWorkflow(svc.admin, elsewhere, ECHO);
    const idem = newKey();
    expect((await execute({ inputs: { name: 'Gi' } }, idem)).status).toBe(200);
    const res = await execute({ inputs: { name: 'Gi' } }, idem, tenant.key, otherWorkflow);
    expectError(res, 422);
    expect(res.body.output).toBeUndefined();
    expect(await executions(otherWorkflow)).toBe(0);
  });

  it('replays a 400 for invalid inputs (the request itself is wrong), doing nothing either time', async () => {
    const { workflowId, execute } = await executeSetup();
    const idem = newKey();
    const first = await execute({ inputs: {} }, idem);
    expectError(first, 400, /Invalid workflow inputs/);
    expectReplay(await execute({ inputs: {} }, idem), first);
    expect(await executions(workflowId)).toBe(0);
  });

  it('does not keep a 429: after the bucket refills the same key does the work, and then replays', async () => {
    const { workflowId, execute } = await executeSetup({ sync: { requestsPerMinute: 1, maxBurst: 1 } });
    expect((await execute({ inputs: { name: 'Hu' } })).status).toBe(200);
    const idem = newKey();
    const refused = await execute({ inputs: { name: 'Hu' } }, idem);
    expectError(refused, 429);
    expect(await records(idem)).toBe(0);
    advance(60_000);
    const done = await execute({ inputs: { name: 'Hu' } }, idem);
    expect(done.status, done.text).toBe(200);
    expect(done.headers.get('idempotent-replayed')).toBeNull();
    // The bucket is empty again, yet the replay passes: it takes no token.
    expectError(await execute({ inputs: { name: 'Hu' } }), 429);
    expectReplay(await execute({ inputs: { name: 'Hu' } }, idem), done);
    expect(await executions(workflowId)).toBe(2);
  });

  it('keeps an answer over 1 MB without its body: the work is not repeated, a replay answers 410', async () => {
    const tenant = await createTenant(svc.admin);
    const big = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [{ id: 'f', type: 'function', code: "return { text: 'x'.repeat(1_200_000) }" }],
    });
    const idem = newKey();
    const path = `/api/workflows/${big}/execute`;
    const first = await send('POST', path, { key: tenant.key, idem, body: {} });
    expect(first.status).toBe(200);
    expect(first.body.output.f.text).toHaveLength(1_200_000);
    const again = await send('POST', path, { key: tenant.key, idem, body: {} });
    expect(again.status).toBe(410);
    expect(again.body.error).toMatch(/too large to keep.*not repeated/);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await executions(big)).toBe(1);
  });
});

describe('POST /api/v1/tables/{tableId}/rows', () => {
  async function tableSetup(limits: Record<string, unknown> = {}) {
    const tenant = await createTenant(svc.admin);
    const workspaceId = tenant.workspace.id;
    const created = await send('POST', '/api/v1/tables', {
      key: tenant.key,
      body: {
        workspaceId,
        name: `t${keyCounter++}`,
        schema: { columns: [{ name: 'email', type: 'string', unique: true }] },
      },
    });
    expect(created.status, created.text).toBe(200);
    const tableId = created.body.data.table.id as string;
    // Laid on after the table exists, so creating it does not spend a shrunk bucket.
    if (Object.keys(limits).length) await svc.admin.quotas.set.mutate({ orgId: tenant.org.id, ...limits });
    const insert = (data: unknown, idem?: string, key = tenant.key) =>
      send('POST', `/api/v1/tables/${tableId}/rows`, {
        key,
        body: { workspaceId, ...(Array.isArray(data) ? { rows: data } : { data }) },
        ...(idem !== undefined ? { idem } : {}),
      });
    const rows = () => count('select count(*) as n from table_rows where table_id = $1', [tableId]);
    return { tenant, tableId, insert, rows };
  }

  it('replays an insert (one row and a batch) and inserts once, taking one token', async () => {
    const { tenant, insert, rows } = await tableSetup();
    const one = newKey();
    const first = await insert({ email: 'a@example.com' }, one);
    expect(first.status, first.text).toBe(200);
    const tokens = await bucket(tenant, 'api');
    expectReplay(await insert({ email: 'a@example.com' }, one), first);
    expect(await bucket(tenant, 'api')).toEqual(tokens);
    const batch = newKey();
    const firstBatch = await insert([{ email: 'b@example.com' }, { email: 'c@example.com' }], batch);
    expect(firstBatch.status).toBe(200);
    expectReplay(await insert([{ email: 'b@example.com' }, { email: 'c@example.com' }], batch), firstBatch);
    expect(await rows()).toBe(3);
  });

  it('refuses the key with another body (422), inserting nothing', async () => {
    const { insert, rows } = await tableSetup();
    const idem = newKey();
    expect((await insert({ email: 'a@example.com' }, idem)).status).toBe(200);
    expectError(await insert({ email: 'z@example.com' }, idem), 422, /different request body/);
    expect(await rows()).toBe(1);
  });

  it('inserts once of two concurrent duplicates', async () => {
    const { insert, rows } = await tableSetup();
    const idem = newKey();
    const answers = await Promise.all([1, 2, 3].map(() => insert({ email: 'race@example.com' }, idem)));
    const done = answers.filter((a) => a.status === 200 && !a.headers.get('idempotent-replayed'));
    expect(done).toHaveLength(1);
    for (const a of answers) {
      if (a === done[0]) continue;
      if (a.status === 409) expect(a.body.error).toMatch(/still in progress/);
      else expectReplay(a, done[0] as Answer);
    }
    expect(await rows()).toBe(1);
  });

  it('keeps keys per API key', async () => {
    const { tenant, insert, rows } = await tableSetup();
    const second = await svc.admin.keys.create.mutate({
      type: 'personal',
      userId: tenant.user.id,
      name: 'two',
    });
    const idem = newKey();
    expect((await insert({ email: 'a@example.com' }, idem)).status).toBe(200);
    const other = await insert({ email: 'b@example.com' }, idem, second.key);
    expect(other.status, other.text).toBe(200);
    expect(other.headers.get('idempotent-replayed')).toBeNull();
    expect(await rows()).toBe(2);
  });

  it('does not keep a 429 of the API bucket: after the refill the same key inserts, then replays', async () => {
    const { insert, rows } = await tableSetup({ api: { requestsPerMinute: 1, maxBurst: 1 } });
    expect((await insert({ email: 'first@example.com' })).status).toBe(200);
    const idem = newKey();
    expectError(await insert({ email: 'a@example.com' }, idem), 429);
    expect(await records(idem)).toBe(0);
    expect(await rows()).toBe(1);
    advance(60_000);
    const done = await insert({ email: 'a@example.com' }, idem);
    expect(done.status, done.text).toBe(200);
    expectReplay(await insert({ email: 'a@example.com' }, idem), done);
    expect(await rows()).toBe(2);
  });

  it('replays a 400 whose body it read whole (a unique value taken), inserting nothing', async () => {
    const { insert, rows } = await tableSetup();
    expect((await insert({ email: 'a@example.com' })).status).toBe(200);
    const idem = newKey();
    const first = await insert({ email: 'a@example.com' }, idem);
    expectError(first, 400);
    expectReplay(await insert({ email: 'a@example.com' }, idem), first);
    expect(await rows()).toBe(1);
  });
});

describe('POST /api/v1/files', () => {
  const storedFiles = async (workspaceId: string) => {
    const rows = await fileRows(svc, workspaceId);
    return { rows: rows.length, bytes: rows.reduce((n, r) => n + Number(r.size), 0) };
  };

  it('replays an upload sent again with a new boundary, storing the file (and its bytes) once', async () => {
    const tenant = await createTenant(svc.admin);
    const workspaceId = await createWorkspace(svc.admin, tenant);
    const idem = newKey();
    const blobsBefore = localBlobs(svc).length;
    const content = { size: 3 * 1024 * 1024 + 17 };
    const first = await sendUpload('/api/v1/files', { key: tenant.key, idem, workspaceId, content });
    expect(first.status, first.text).toBe(200);
    const tokens = await bucket(tenant, 'api');
    const again = await sendUpload('/api/v1/files', { key: tenant.key, idem, workspaceId, content });
    expectReplay(again, first);
    expect(await bucket(tenant, 'api')).toEqual(tokens);
    expect(await storedFiles(workspaceId)).toEqual({ rows: 1, bytes: content.size });
    expect(localBlobs(svc).length).toBe(blobsBefore + 1);
  });

  it('finds boundaries split across chunks: a retry cut into 7-byte chunks replays, other bytes do not', async () => {
    const tenant = await createTenant(svc.admin);
    const workspaceId = await createWorkspace(svc.admin, tenant);
    const idem = newKey();
    const content = Buffer.from('the same bytes, chunked differently'.repeat(50));
    const o = { key: tenant.key, idem, workspaceId, content };
    const first = await sendUpload('/api/v1/files', o);
    expect(first.status, first.text).toBe(200);
    expectReplay(await sendUpload('/api/v1/files', { ...o, chunk: 7 }), first);
    expectReplay(await sendUpload('/api/v1/files', { ...o, chunk: 1 }), first);
    const changed = Buffer.from(content);
    changed[changed.length - 1] = 0x21;
    expectError(await sendUpload('/api/v1/files', { ...o, content: changed, chunk: 7 }), 422);
    expect((await storedFiles(workspaceId)).rows).toBe(1);
  });

  it('does not keep a 500 (storage failed): once storage works the same key uploads', async () => {
    const tenant = await createTenant(svc.admin);
    const workspaceId = await createWorkspace(svc.admin, tenant);
    // A plain file where the workspace's storage folder goes: the local driver cannot store there.
    const blocker = join(svc.config.DATA_DIR, 'files', workspaceId);
    mkdirSync(dirname(blocker), { recursive: true });
    writeFileSync(blocker, 'not a folder');
    const idem = newKey();
    const failed = await sendUpload('/api/v1/files', { key: tenant.key, idem, workspaceId });
    expectError(failed, 500);
    expect(await records(idem)).toBe(0);
    rmSync(blocker);
    const done = await sendUpload('/api/v1/files', { key: tenant.key, idem, workspaceId });
    expect(done.status, done.text).toBe(200);
    expectReplay(await sendUpload('/api/v1/files', { key: tenant.key, idem, workspaceId }), done);
    expect((await storedFiles(workspaceId)).rows).toBe(1);
  });

  it('works the same over a real port (the Node server builds its own request objects)', async () => {
    const tenant = await createTenant(svc.admin);
    const workspaceId = await createWorkspace(svc.admin, tenant);
    const server = await listen(svc.app, 0, '127.0.0.1');
    try {
      const post = async (content: Buffer) => {
        const { body, contentType } = multipart(uploadParts({ workspaceId, content }));
        return answer(
          await fetch(`${server.url}/api/v1/files`, {
            method: 'POST',
            headers: { 'X-API-Key': tenant.key, 'Content-Type': contentType, 'Idempotency-Key': 'over-http' },
            body,
            duplex: 'half',
          } as RequestInit),
        );
      };
      const content = Buffer.alloc(256 * 1024, 7);
      const first = await post(content);
      expect(first.status, first.text).toBe(200);
      expectReplay(await post(content), first);
      expectError(await post(Buffer.alloc(256 * 1024, 8)), 422);
      expect((await storedFiles(workspaceId)).rows).toBe(1);
    } finally {
      await server.close();
    }
  });

  it('refuses the key with other content of the same size, or another name (422), storing nothing', async () => {
    const tenant = await createTenant(svc.admin);
    const workspaceId = await createWorkspace(svc.admin, tenant);
    const idem = newKey();
    const first = await sendUpload('/api/v1/files', {
      key: tenant.key,
      idem,
      workspaceId,
      content: Buffer.from('aaaa'),
    });
    expect(first.status).toBe(200);
    const blobs = localBlobs(svc).length;
    const upload = (o: { name?: string; content?: Content }) =>
      sendUpload('/api/v1/files', { key: tenant.key, idem, workspaceId, ...o });
    expectError(await upload({ content: Buffer.from('aaab') }), 422, /different request body/);
    expectError(await upload({ content: Buffer.from('aaaa'), name: 'other.txt' }), 422);
    // Longer than the first: refused once it has read past the first body's length.
    expectError(await upload({ content: { size: 2 * 1024 * 1024 } }), 422);
    expect(await storedFiles(workspaceId)).toEqual({ rows: 1, bytes: 4 });
    expect(localBlobs(svc).length).toBe(blobs);
  });

  it('stores one file of two concurrent duplicates', async () => {
    const tenant = await createTenant(svc.admin);
    const workspaceId = await createWorkspace(svc.admin, tenant);
    const idem = newKey();
    const blobsBefore = localBlobs(svc).length;
    const content = { size: 512 * 1024 };
    const answers = await Promise.all([
      sendUpload('/api/v1/files', { key: tenant.key, idem, workspaceId, content }),
      sendUpload('/api/v1/files', { key: tenant.key, idem, workspaceId, content }),
    ]);
    const done = answers.filter((a) => a.status === 200 && !a.headers.get('idempotent-replayed'));
    expect(done).toHaveLength(1);
    const other = answers.find((a) => a !== done[0]) as Answer;
    if (other.status === 409) expect(other.body.error).toMatch(/still in progress/);
    else expectReplay(other, done[0] as Answer);
    expect((await storedFiles(workspaceId)).rows).toBe(1);
    expect(localBlobs(svc).length).toBe(blobsBefore + 1);
  });

  it('releases the key on a 409 (the name is taken): the key then uploads another file', async () => {
    const tenant = await createTenant(svc.admin);
    const workspaceId = await createWorkspace(svc.admin, tenant);
    expect((await sendUpload('/api/v1/files', { key: tenant.key, workspaceId, name: 'a.txt' })).status).toBe(
      200,
    );
    const idem = newKey();
    expectError(
      await sendUpload('/api/v1/files', { key: tenant.key, idem, workspaceId, name: 'a.txt' }),
      409,
    );
    expect(await records(idem)).toBe(0);
    const done = await sendUpload('/api/v1/files', { key: tenant.key, idem, workspaceId, name: 'b.txt' });
    expect(done.status, done.text).toBe(200);
    expect((await storedFiles(workspaceId)).rows).toBe(2);
  });

  it('releases the key when a refusal came before the body was read whole (no fingerprint to keep)', async () => {
    const tenant = await createTenant(svc.admin);
    const workspaceId = await createWorkspace(svc.admin, tenant);
    const idem = newKey();
    // The workspace field comes first and is not a UUID: refused before the file is read.
    expectError(await sendUpload('/api/v1/files', { key: tenant.key, idem, workspaceId: 'nope' }), 400);
    expect(await records(idem)).toBe(0);
    const done = await sendUpload('/api/v1/files', { key: tenant.key, idem, workspaceId });
    expect(done.status, done.text).toBe(200);
  });

  it('keeps keys per API key', async () => {
    const tenant = await createTenant(svc.admin);
    const workspaceId = await createWorkspace(svc.admin, tenant);
    const second = await svc.admin.keys.create.mutate({
      type: 'personal',
      userId: tenant.user.id,
      name: 'two',
    });
    const idem = newKey();
    expect((await sendUpload('/api/v1/files', { key: tenant.key, idem, workspaceId })).status).toBe(200);
    // The same key value and body through another API key is that key's own request: the name is taken.
    expectError(await sendUpload('/api/v1/files', { key: second.key, idem, workspaceId }), 409);
  });
});

describe('POST /api/v1/knowledge/{id}/documents', () => {
  async function kbSetup() {
    const tenant = await createTenant(svc.admin);
    const kb = await createKnowledgeBase(svc, tenant.workspace.id);
    const path = `/api/v1/knowledge/${kb.id}/documents`;
    const documents = () =>
      count('select count(*) as n from knowledge_documents where knowledge_base_id = $1', [kb.id]);
    const ingestJobs = () =>
      count(
        `select count(*) as n from pgboss.job where name = 'knowledge-ingest'
            and data->>'documentId' in (select id::text from knowledge_documents where knowledge_base_id = $1)`,
        [kb.id],
      );
    return { tenant, kb, path, documents, ingestJobs };
  }

  it('replays an upload and creates one document, one stored object and one ingestion job', async () => {
    const { tenant, path, documents, ingestJobs } = await kbSetup();
    const idem = newKey();
    const blobsBefore = localBlobs(svc).length;
    const o = {
      key: tenant.key,
      idem,
      workspaceId: tenant.workspace.id,
      content: Buffer.from('Some notes.'),
    };
    const first = await sendUpload(path, o);
    expect(first.status, first.text).toBe(200);
    expectReplay(await sendUpload(path, o), first);
    expect(await documents()).toBe(1);
    expect(await ingestJobs()).toBe(1);
    expect(localBlobs(svc).length).toBe(blobsBefore + 1);
  });

  it('refuses the key with another body (422) and for another knowledge base (422)', async () => {
    const { tenant, path, documents } = await kbSetup();
    const otherKb = await createKnowledgeBase(svc, tenant.workspace.id);
    const idem = newKey();
    const o = { key: tenant.key, idem, workspaceId: tenant.workspace.id };
    expect((await sendUpload(path, { ...o, content: Buffer.from('one') })).status).toBe(200);
    expectError(await sendUpload(path, { ...o, content: Buffer.from('two') }), 422, /different request body/);
    expectError(
      await sendUpload(`/api/v1/knowledge/${otherKb.id}/documents`, { ...o, content: Buffer.from('one') }),
      422,
      /was used for POST/,
    );
    expect(await documents()).toBe(1);
  });

  it('creates one document of two concurrent duplicates', async () => {
    const { tenant, path, documents } = await kbSetup();
    const idem = newKey();
    const o = {
      key: tenant.key,
      idem,
      workspaceId: tenant.workspace.id,
      content: Buffer.from('Race notes.'),
    };
    const answers = await Promise.all([sendUpload(path, o), sendUpload(path, o)]);
    const done = answers.filter((a) => a.status === 200 && !a.headers.get('idempotent-replayed'));
    expect(done).toHaveLength(1);
    const other = answers.find((a) => a !== done[0]) as Answer;
    if (other.status === 409) expect(other.body.error).toMatch(/still in progress/);
    else expectReplay(other, done[0] as Answer);
    expect(await documents()).toBe(1);
  });

  it('keeps keys per API key', async () => {
    const { tenant, path, documents } = await kbSetup();
    const second = await svc.admin.keys.create.mutate({
      type: 'personal',
      userId: tenant.user.id,
      name: 'two',
    });
    const idem = newKey();
    const o = { idem, workspaceId: tenant.workspace.id };
    expect((await sendUpload(path, { ...o, key: tenant.key })).status).toBe(200);
    // The same key value and body through another API key is that key's own request: not a replay, so
    // the knowledge base refuses the same content a second time.
    const other = await sendUpload(path, { ...o, key: second.key });
    expectError(other, 409);
    expect(other.body.error).toMatch(/already holds the same content/);
    expect(other.headers.get('idempotent-replayed')).toBeNull();
    expect(await documents()).toBe(1);
  });
});

describe('the key itself', () => {
  it('must be 1 to 255 printable ASCII characters (400), and nothing is done', async () => {
    const { workflowId, execute } = await executeSetup();
    for (const bad of ['', 'x'.repeat(256), 'caf\u00e9', 'tab\there']) {
      const res = await execute({ inputs: { name: 'Io' } }, bad);
      expectError(res, 400, /Idempotency-Key/);
      expect(res.body.details[0].path).toEqual(['Idempotency-Key']);
    }
    expect(await executions(workflowId)).toBe(0);
    const longest = `${'~'.repeat(200)} ${'!'.repeat(54)}`;
    expect((await execute({ inputs: { name: 'Io' } }, longest)).status).toBe(200);
    expect((await execute({ inputs: { name: 'Io' } }, longest)).headers.get('idempotent-replayed')).toBe(
      'true',
    );
  });

  it('leaves requests without a key alone', async () => {
    const { workflowId, execute } = await executeSetup();
    await execute({ inputs: { name: 'Jo' } });
    await execute({ inputs: { name: 'Jo' } });
    expect(await executions(workflowId)).toBe(2);
  });

  it('expires after 24 hours: the same key then does the work again', async () => {
    const { workflowId, execute } = await executeSetup();
    const idem = newKey();
    const first = await execute({ inputs: { name: 'Ka' } }, idem);
    advance(IDEMPOTENCY_TTL_MS - 1);
    expectReplay(await execute({ inputs: { name: 'Ka' } }, idem), first);
    advance(1);
    const later = await execute({ inputs: { name: 'Ka' } }, idem);
    expect(later.status).toBe(200);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    expect(later.body.executionId).not.toBe(first.body.executionId);
    expect(await executions(workflowId)).toBe(2);
  });

  it('purges expired records as keyed requests arrive', async () => {
    const { tenant, execute } = await executeSetup();
    const [keyRow] = await svc.db.query<{ id: string }>(
      "select id from api_keys where user_id = $1 and type = 'personal'",
      [tenant.user.id],
    );
    const stale = newKey('stale');
    // Aged in SQL: expired a minute ago by the service's clock.
    await svc.db.query(
      `insert into idempotency_keys (api_key_id, key, state, claim_token, lease_until, method, path,
              status, headers, body, body_size, created_at, expires_at)
       values ($1, $2, 'completed', gen_random_uuid(), $3, 'POST', '/x', 200, '{}', '\\x7b7d', 2, $3, $4)`,
      [
        keyRow?.id,
        stale,
        new Date(now.getTime() - IDEMPOTENCY_TTL_MS - 60_000),
        new Date(now.getTime() - 60_000),
      ],
    );
    expect(await records(stale)).toBe(1);
    advance(11 * 60_000);
    expect((await execute({ inputs: { name: 'Lu' } }, newKey())).status).toBe(200);
    expect(await records(stale)).toBe(0);
  });

  it('renews the lease of a request in flight, so a long execution keeps its key past the first lease', async () => {
    const tenant = await createTenant(svc.admin);
    const hold = await holdingServer();
    const workflowId = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [{ id: 'call', type: 'http', url: hold.url }],
    });
    const path = `/api/workflows/${workflowId}/execute`;
    const idem = newKey();
    // The heartbeat is a real interval (20 s): the test takes its callback and calls it instead.
    const intervals = vi.spyOn(globalThis, 'setInterval');
    try {
      const first = send('POST', path, { key: tenant.key, idem, body: {} });
      await hold.arrival;
      const renew = intervals.mock.calls.find(
        ([, ms]) => ms === IDEMPOTENCY_LEASE_MS / 3,
      )?.[0] as () => Promise<void>;
      intervals.mockRestore();
      expect(renew).toBeTypeOf('function');
      advance(50_000);
      await renew();
      const [row] = await svc.db.query<{ lease_until: Date }>(
        'select lease_until from idempotency_keys where key = $1',
        [idem],
      );
      expect(row?.lease_until.getTime()).toBe(now.getTime() + IDEMPOTENCY_LEASE_MS);
      // Past the first lease, within the renewed one: still in flight.
      advance(30_000);
      expectError(await send('POST', path, { key: tenant.key, idem, body: {} }), 409, /still in progress/);
      hold.release();
      const done = await first;
      expect(done.status, done.text).toBe(200);
      expect(done.body.output.call.data).toEqual({ held: true });
      expectReplay(await send('POST', path, { key: tenant.key, idem, body: {} }), done);
      expect(await executions(workflowId)).toBe(1);
    } finally {
      intervals.mockRestore();
      hold.release();
      await hold.close();
    }
  });

  it('does not let a crashed request block its key: a pending claim lapses with its lease', async () => {
    const { tenant, workflowId, execute } = await executeSetup();
    const [keyRow] = await svc.db.query<{ id: string }>(
      "select id from api_keys where user_id = $1 and type = 'personal'",
      [tenant.user.id],
    );
    const path = `/api/workflows/${workflowId}/execute`;
    const claim = (idem: string, leaseUntil: Date) =>
      svc.db.query(
        `insert into idempotency_keys (api_key_id, key, state, claim_token, lease_until, method, path,
                created_at, expires_at)
         values ($1, $2, 'pending', gen_random_uuid(), $3, 'POST', $4, $5, $6)`,
        [keyRow?.id, idem, leaseUntil, path, now, new Date(now.getTime() + IDEMPOTENCY_TTL_MS)],
      );
    // A claim whose request is (as far as anyone knows) still running: 409, nothing done.
    const live = newKey();
    await claim(live, new Date(now.getTime() + 30_000));
    expectError(await execute({ inputs: { name: 'Mo' } }, live), 409, /still in progress/);
    expect(await executions(workflowId)).toBe(0);
    // The same claim once its lease has run out (its process died): the retry does the work.
    advance(30_000);
    const res = await execute({ inputs: { name: 'Mo' } }, live);
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    expect(await executions(workflowId)).toBe(1);
    expectReplay(await execute({ inputs: { name: 'Mo' } }, live), res);
  });
});
