// Cancelling running executions through POST /api/workflows/{id}/executions/{executionId}/cancel,
// with a real runner: the abort reaches sandboxed code (an endless loop), an HTTP call to a server
// that never answers, a model call streaming slowly (a local fake provider), a loop and a child
// workflow; the Job record, the sync caller, the log, the audit log and the bill all say so. Also
// the refusals: finished (409), unknown (404), bad ids (400), other workspace, read-only key.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXECUTION_CANCEL_CHANNEL } from '../../db/execution-cancels.ts';
import {
  addPerson,
  adminError,
  createTenant,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';
import { until as waitFor } from '../helpers/until.ts';
import { deployWorkflow, pollJob } from '../helpers/workflows.ts';

/** A local server whose requests to each path are recorded, with whether their connection closed early. */
interface Seen {
  path: string;
  closed: boolean;
}
let server: Server;
let base: string;
const seen: Seen[] = [];

function handle(req: IncomingMessage, res: ServerResponse) {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  const entry: Seen = { path, closed: false };
  seen.push(entry);
  res.on('close', () => {
    entry.closed = !res.writableFinished;
  });
  req.resume();
  if (path.startsWith('/hang')) return; // never answers
  if (path.startsWith('/v1/chat/completions')) {
    // A model that streams its answer a byte at a time, slowly: the whole body would take minutes.
    res.writeHead(200, { 'content-type': 'application/json' });
    const body = JSON.stringify({ id: 'x', object: 'chat.completion', choices: [] });
    let i = 0;
    const tick = setInterval(() => {
      if (i < body.length - 1) res.write(body[i++]);
    }, 200);
    res.on('close', () => clearInterval(tick));
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end('{"ok":true}');
}

/** Polls until `probe` returns something (real work goes on meanwhile). */
const until = <T>(probe: () => Promise<T | undefined> | T | undefined, what: string) =>
  waitFor(probe, what, { tries: 400, everyMs: 25 });

let svc: TestService;
let tenant: Tenant;
let unique = 0;
const path = (name: string) => `/${name}-${++unique}`;

beforeAll(async () => {
  server = createServer(handle);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  svc = await startTestService(
    {
      HTTP_ALLOW_LIST: '127.0.0.1',
      OPENAI_BASE_URL: `${base}/v1`,
      OPENAI_API_KEY: 'sk-test',
      // A run a failing test leaves behind must not hold the runner's stop for long.
      WORKFLOW_TIMEOUT_MS: '20000',
    },
    { runner: true },
  );
  tenant = await createTenant(svc.admin, { plan: 'enterprise' });
});
afterAll(async () => {
  await svc.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const startAsync = async (definition: unknown) => {
  const wf = await deployWorkflow(svc.admin, tenant.workspace.id, definition);
  const res = await svc.call('POST', `/api/workflows/${wf}/execute`, {
    key: tenant.key,
    body: { inputs: {}, async: true },
  });
  expect(res.status).toBe(202);
  return { wf, id: res.body.taskId as string };
};
const cancel = (wf: string, id: string, key = tenant.key) =>
  svc.call('POST', `/api/workflows/${wf}/executions/${id}/cancel`, { key });
const job = async (id: string) => (await svc.call('GET', `/api/jobs/${id}`, { key: tenant.key })).body;
const processing = (id: string) =>
  until(async () => ((await job(id)).status === 'processing' ? true : undefined), `${id} to run`);
/** The runner's settlement of a cancelled run: the trace and cost of what ran. */
const settled = (id: string) =>
  until(async () => {
    const e = await svc.admin.executions.get.query({ id });
    return e.cost ? e : undefined;
  }, `the runner to stop ${id}`);

/** Cancels a running execution; checks the answer, the Job record, and that the runner stopped. */
async function cancelRunning(wf: string, id: string) {
  const at = performance.now();
  const res = await cancel(wf, id);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({
    success: true,
    executionId: id,
    status: 'cancelled',
    reason: 'recorded',
    durablyRecorded: true,
  });
  const record = await job(id);
  expect(record).toMatchObject({
    success: false,
    status: 'cancelled',
    error: 'Execution was cancelled',
    metadata: { cancelledBy: `user:${tenant.user.id}`, cancelledAt: res.body.cancelledAt },
  });
  const detail = await settled(id);
  return { detail, stoppedMs: performance.now() - at };
}

describe('a processing execution stops', () => {
  it('a function in an endless loop: the worker task ends and the pool keeps working', async () => {
    const { wf, id } = await startAsync({
      blocks: [{ id: 'spin', type: 'function', code: 'while (true) {}', timeoutMs: 120_000 }],
    });
    await processing(id);
    const { detail, stoppedMs } = await cancelRunning(wf, id);
    // Within a second as designed (about 0.1 s here); the bound leaves room for a loaded machine.
    expect(stoppedMs).toBeLessThan(3000);
    expect(detail.status).toBe('cancelled');
    expect(detail.traceSpans).toMatchObject([{ blockId: 'spin', status: 'error' }]);
    // The pool still runs code.
    const after = await startAsync({ blocks: [{ id: 'f', type: 'function', code: 'return 42' }] });
    expect((await pollJob(svc.call, tenant.key, after.id)).body).toMatchObject({ output: { f: 42 } });
  });

  it('an http call to a server that never answers: the request is aborted', async () => {
    const p = path('hang');
    const { wf, id } = await startAsync({ blocks: [{ id: 'call', type: 'http', url: `${base}${p}` }] });
    const request = await until(() => seen.find((s) => s.path === p), 'the http call');
    await cancelRunning(wf, id);
    await until(() => (request.closed ? true : undefined), 'the http connection to close');
  });

  it('a model call streaming slowly: the request is aborted, and unfinished blocks cost nothing', async () => {
    const { wf, id } = await startAsync({
      blocks: [
        { id: 'first', type: 'function', code: 'return 1' },
        { id: 'ask', type: 'agent', model: 'gpt-4o-mini', prompt: 'hello' },
      ],
      edges: [{ from: 'first', to: 'ask' }],
    });
    const before = seen.length;
    const request = await until(
      () => seen.slice(before).find((s) => s.path === '/v1/chat/completions'),
      'the model call',
    );
    const { detail } = await cancelRunning(wf, id);
    await until(() => (request.closed ? true : undefined), 'the model connection to close');
    // Charged the flat execution fee and no tokens: the agent never finished.
    expect(detail.cost).toMatchObject({ tokens: { total: 0 }, models: {} });
    expect(detail.traceSpans.map((s: { blockId: string; status: string }) => [s.blockId, s.status])).toEqual([
      ['first', 'success'],
      ['ask', 'error'],
    ]);
  });

  it('a loop over calls stops, and no iteration starts after the cancel', async () => {
    const p = path('hang');
    const { wf, id } = await startAsync({
      blocks: [
        {
          id: 'each',
          type: 'loop',
          count: 5,
          blocks: [{ id: 'call', type: 'http', url: `${base}${p}` }],
        },
      ],
    });
    const request = await until(() => seen.find((s) => s.path === p), 'the first iteration');
    await cancelRunning(wf, id);
    await until(() => (request.closed ? true : undefined), 'the call to close');
    await new Promise((r) => setTimeout(r, 300));
    expect(seen.filter((s) => s.path === p)).toHaveLength(1);
  });

  it('a child workflow is cancelled with its parent', async () => {
    const p = path('hang');
    const child = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [{ id: 'call', type: 'http', url: `${base}${p}` }],
    });
    const { wf, id } = await startAsync({
      blocks: [{ id: 'sub', type: 'workflow', workflowId: child }],
    });
    const request = await until(() => seen.find((s) => s.path === p), "the child's call");
    const { detail } = await cancelRunning(wf, id);
    await until(() => (request.closed ? true : undefined), "the child's call to close");
    expect(detail.traceSpans).toMatchObject([{ blockId: 'sub', status: 'error' }]);
  });

  it('a sync caller waiting on it is answered cancelled at once', async () => {
    const p = path('hang');
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [{ id: 'call', type: 'http', url: `${base}${p}` }],
    });
    const waiting = svc.call('POST', `/api/workflows/${wf}/execute`, { key: tenant.key, body: {} });
    await until(() => seen.find((s) => s.path === p), 'the http call');
    const { rows } = {
      rows: await svc.db.query<{ id: string }>('select id from executions where workflow_id = $1', [wf]),
    };
    const id = rows[0]?.id as string;
    expect((await cancel(wf, id)).status).toBe(200);
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      success: false,
      executionId: id,
      status: 'cancelled',
      error: 'Execution was cancelled',
      metadata: { duration: expect.any(Number) },
    });
  });
});

describe('how runners hear of it', () => {
  it('the cancel notifies the channel runners listen on, once it commits', async () => {
    const heard: string[] = [];
    const unlisten = await svc.db.listen(EXECUTION_CANCEL_CHANNEL, (id) => heard.push(id));
    try {
      const { wf, id } = await startAsync({
        blocks: [{ id: 'spin', type: 'function', code: 'while (true) {}', timeoutMs: 120_000 }],
      });
      await processing(id);
      await cancelRunning(wf, id);
      await until(() => (heard.includes(id) ? true : undefined), 'the notice');
    } finally {
      await unlisten();
    }
  });

  it("the runner's poll of its runs' states stops a run whose cancel notice it never heard", async () => {
    const p = path('hang');
    const { id } = await startAsync({ blocks: [{ id: 'call', type: 'http', url: `${base}${p}` }] });
    const request = await until(() => seen.find((s) => s.path === p), 'the http call');
    // The row as a cancel leaves it, without the NOTIFY (as if the runner's connection dropped it).
    await svc.db.query(
      `update executions set status = 'cancelled', error = 'Execution was cancelled', cancelled_at = now(),
         cancelled_by = 'admin', ended_at = now() where id = $1`,
      [id],
    );
    await until(() => (request.closed ? true : undefined), 'the poll to stop the run');
    expect((await settled(id)).status).toBe('cancelled');
  });
});

describe('what is recorded', () => {
  it('the log entry, the audit log and the admin plane show the cancel', async () => {
    const { wf, id } = await startAsync({
      blocks: [{ id: 'spin', type: 'function', code: 'while (true) {}', timeoutMs: 120_000 }],
    });
    await processing(id);
    await cancelRunning(wf, id);
    const logs = await svc.call('GET', '/api/v1/logs', {
      key: tenant.key,
      query: { workspaceId: tenant.workspace.id, executionId: id, details: 'full' },
    });
    expect(logs.status).toBe(200);
    expect(logs.body.data).toMatchObject([
      { executionId: id, executionData: { error: 'Execution was cancelled' } },
    ]);
    const audit = await svc.call('GET', '/api/v1/audit-logs', {
      key: tenant.key,
      query: { workspaceId: tenant.workspace.id, action: 'workflow.cancel' },
    });
    expect(audit.status).toBe(200);
    expect(audit.body.data).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          action: 'workflow.cancel',
          resourceId: wf,
          actorId: tenant.user.id,
          metadata: { executionId: id, was: 'processing' },
        }),
      ]),
    );
    const listed = await svc.admin.executions.list.query({
      workspaceId: tenant.workspace.id,
      status: 'cancelled',
    });
    expect(listed.data.map((e) => e.id)).toContain(id);
  });
});

describe('refusals', () => {
  it('a finished execution is left as it is: 409', async () => {
    const { wf, id } = await startAsync({ blocks: [{ id: 'f', type: 'function', code: 'return 1' }] });
    await pollJob(svc.call, tenant.key, id);
    const res = await cancel(wf, id);
    expect(res.status).toBe(409);
    expect(res.body.error).toMatch(/already finished \(completed\)/);
    expect((await job(id)).status).toBe('completed');
  });

  it('cancelling twice answers already_cancelled and changes nothing', async () => {
    const { wf, id } = await startAsync({
      blocks: [{ id: 'spin', type: 'function', code: 'while (true) {}', timeoutMs: 120_000 }],
    });
    await processing(id);
    const first = await cancel(wf, id);
    const second = await cancel(wf, id);
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({
      success: true,
      reason: 'already_cancelled',
      durablyRecorded: false,
      cancelledAt: first.body.cancelledAt,
    });
    await settled(id);
  });

  it('unknown execution, another workflow, bad ids, other workspace and read-only keys', async () => {
    const { wf, id } = await startAsync({
      blocks: [{ id: 'spin', type: 'function', code: 'while (true) {}', timeoutMs: 120_000 }],
    });
    const other = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [{ id: 'f', type: 'function', code: 'return 1' }],
    });
    expect((await cancel(wf, crypto.randomUUID())).status).toBe(404);
    expect((await cancel(other, id)).body).toEqual({ error: 'Execution not found' });
    const bad = await cancel(wf, 'not-a-uuid');
    expect(bad.status).toBe(400);
    expect(bad.body.details[0].path).toEqual(['executionId']);
    expect((await cancel('nope', id)).status).toBe(400);
    expect((await cancel(wf, id, 'sk-service-wrong')).status).toBe(401);
    const stranger = await createTenant(svc.admin);
    const foreign = await cancel(wf, id, stranger.key);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ error: 'Execution not found' });
    const reader = await addPerson(svc.admin, tenant, { permission: 'read' });
    expect((await cancel(wf, id, reader.key)).status).toBe(403);
    // None of them changed anything; the owner may still cancel it.
    expect(['queued', 'processing']).toContain((await job(id)).status);
    expect((await cancel(wf, id)).status).toBe(200);
    await settled(id);
  });
});

describe('admin plane', () => {
  it('executions.cancel stops a running execution; a finished one is a CONFLICT', async () => {
    const p = path('hang');
    const { id } = await startAsync({ blocks: [{ id: 'call', type: 'http', url: `${base}${p}` }] });
    const request = await until(() => seen.find((s) => s.path === p), 'the http call');
    const res = await svc.admin.executions.cancel.mutate({ id });
    expect(res).toMatchObject({ executionId: id, status: 'cancelled', reason: 'recorded' });
    await until(() => (request.closed ? true : undefined), 'the http connection to close');
    const detail = await settled(id);
    expect(detail).toMatchObject({ status: 'cancelled', cancelledBy: 'admin' });
    expect((await job(id)).metadata.cancelledBy).toBe('admin');
    expect(await svc.admin.executions.cancel.mutate({ id })).toMatchObject({ reason: 'already_cancelled' });
    const done = await startAsync({ blocks: [{ id: 'f', type: 'function', code: 'return 1' }] });
    await pollJob(svc.call, tenant.key, done.id);
    const refused = await adminError(svc.admin.executions.cancel.mutate({ id: done.id }));
    expect(refused.code).toBe('CONFLICT');
    expect((await adminError(svc.admin.executions.cancel.mutate({ id: crypto.randomUUID() }))).code).toBe(
      'NOT_FOUND',
    );
  });
});
