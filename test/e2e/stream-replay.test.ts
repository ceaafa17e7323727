// A streamed execute retried with its Idempotency-Key replays the execution it started (from event 1,
// or after the retry's Last-Event-ID, then live), never runs it again; another body under the key is
// the 422 it is for any execute. And the runner's sweep drops stream events past their retention by
// its (injected) clock, keeping the newer ones. This service commits stream events without waiting for
// the disk (STREAM_EVENTS_ASYNC_COMMIT); stream.test.ts covers the default.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { EVENT_SWEEP_INTERVAL_MS } from '../../runner/event-sweeper.ts';
import { startChatServer } from '../helpers/openai-server.ts';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';
import { sseReader } from '../helpers/sse.ts';
import { deployWorkflow, pollJob } from '../helpers/workflows.ts';

let svc: TestService;
let tenant: Tenant;
let chat: Awaited<ReturnType<typeof startChatServer>>;
let workflowId: string;
/** How far the service's clock (API and runner) is ahead of the real one. */
let ahead = 0;
const clock = () => new Date(Date.now() + ahead);
const HOUR = 3_600_000;

beforeAll(async () => {
  chat = await startChatServer();
  svc = await startTestService(
    {
      OPENAI_BASE_URL: chat.url,
      OPENAI_API_KEY: 'sk-test',
      STREAM_HEARTBEAT_MS: '60000',
      STREAM_EVENTS_ASYNC_COMMIT: 'true',
    },
    { runner: true, clock },
  );
  tenant = await createTenant(svc.admin);
  workflowId = await deployWorkflow(svc.admin, tenant.workspace.id, {
    inputs: { name: { type: 'string', required: true } },
    blocks: [{ id: 'agent', type: 'agent', model: 'gpt-4o-mini', prompt: 'hello <start.name>' }],
    edges: [],
  });
});
afterAll(async () => {
  await svc?.close();
  await chat?.close();
});

const execute = (body: string, headers: Record<string, string> = {}, key = tenant.key) =>
  svc.app.request(`/api/workflows/${workflowId}/execute`, {
    method: 'POST',
    headers: { 'X-API-Key': key, 'Content-Type': 'application/json', ...headers },
    body,
  });
const ids = (events: { id: number; event: string }[]) => events.map((e) => `${e.id}:${e.event}`);
const executionCount = async () =>
  (await svc.db.query<{ n: number }>('select count(*)::int as n from executions'))[0]?.n;
const eventCount = async (executionId: string) =>
  (
    await svc.db.query<{ n: number }>(
      'select count(*)::int as n from execution_events where execution_id = $1',
      [executionId],
    )
  )[0]?.n;

describe('a streamed execute retried with its Idempotency-Key', () => {
  it('replays the execution it started, from event 1, without running it again', async () => {
    const headers = { 'Idempotency-Key': `stream-${Math.random()}` };
    const body = JSON.stringify({ inputs: { name: 'Ada' }, stream: true });
    const first = await execute(body, headers);
    expect(first.status).toBe(200);
    const executionId = first.headers.get('x-execution-id') as string;
    const original = await sseReader(first).all();
    expect(original.at(-1)?.event).toBe('execution.completed');
    const [executions, modelCalls] = [await executionCount(), chat.requests.length];

    const again = await execute(body, headers);
    expect(again.status).toBe(200);
    expect(again.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('x-execution-id')).toBe(executionId);
    const replayed = await sseReader(again).all();
    expect(ids(replayed)).toEqual(ids(original));
    // The same events; the terminal one's `limits` are the caller's now (as on a reconnect).
    const content = (events: typeof original) =>
      events.map(({ data: { limits, ...data } }) => ({ ...data, limits: limits !== undefined }));
    expect(content(replayed)).toEqual(content(original));
    // After the retry's Last-Event-ID, as a reconnect.
    const resumed = await sseReader(await execute(body, { ...headers, 'Last-Event-ID': '2' })).all();
    expect(ids(resumed)).toEqual(ids(original.slice(2)));
    expect(await executionCount()).toBe(executions);
    expect(chat.requests.length).toBe(modelCalls);
  });

  it('follows a stream still running: the replay goes on live to the same end', async () => {
    const headers = { 'Idempotency-Key': `live-${Math.random()}` };
    const body = JSON.stringify({ inputs: { name: 'Bo' }, stream: true });
    chat.holdStreams();
    const first = await execute(body, headers);
    const executionId = first.headers.get('x-execution-id') as string;
    const reader = sseReader(first);
    const seen = await reader.until((e) => e.event === 'token');
    // The client lost the connection mid-stream and retries with its key and the last id it has.
    await reader.cancel();
    const again = await execute(body, { ...headers, 'Last-Event-ID': String(seen.at(-1)?.id) });
    expect(again.status).toBe(200);
    expect(again.headers.get('x-execution-id')).toBe(executionId);
    const rest = sseReader(again);
    chat.release();
    const events = await rest.all();
    expect(events[0]?.id).toBe((seen.at(-1)?.id as number) + 1);
    expect(events.at(-1)).toMatchObject({ event: 'execution.completed', data: { executionId } });
    const chunks = [...seen, ...events].filter((e) => e.event === 'token').map((e) => e.data.chunk);
    expect(chunks.join('')).toBe('echo: hello Bo');
    expect((await pollJob(svc.call, tenant.key, executionId)).body.status).toBe('completed');
  });

  it('answers 422 for another body or mode under the key, 400 for a bad Last-Event-ID, changing nothing', async () => {
    const headers = { 'Idempotency-Key': `other-${Math.random()}` };
    const body = JSON.stringify({ inputs: { name: 'Cy' }, stream: true });
    await sseReader(await execute(body, headers)).all();
    const executions = await executionCount();
    for (const [otherBody, otherHeaders] of [
      [JSON.stringify({ inputs: { name: 'Cyd' }, stream: true }), {}],
      // Not streamed: another request, as X-Execution-Mode makes one.
      [JSON.stringify({ inputs: { name: 'Cy' } }), {}],
      [body, { 'X-Stream-Response': 'true' }],
    ] as const) {
      const res = await execute(otherBody, { ...headers, ...otherHeaders });
      expect(res.status).toBe(422);
      expect((await res.json()).error).toMatch(/different request body/);
    }
    const bad = await execute(body, { ...headers, 'Last-Event-ID': 'x' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).details[0].path[0]).toBe('Last-Event-ID');
    // Another API key's same Idempotency-Key is unrelated: it runs.
    const stranger = await createTenant(svc.admin);
    const theirs = await deployWorkflow(svc.admin, stranger.workspace.id, {
      blocks: [{ id: 'fn', type: 'function', code: 'return 1' }],
      edges: [],
    });
    const own = await svc.app.request(`/api/workflows/${theirs}/execute`, {
      method: 'POST',
      headers: { 'X-API-Key': stranger.key, 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify({ stream: true }),
    });
    expect(own.status).toBe(200);
    await sseReader(own).all();
    expect(await executionCount()).toBe((executions as number) + 1);
  });
});

describe("the runner's sweep of stream events", () => {
  it('drops events past EXECUTION_EVENTS_RETENTION_HOURS by its clock and keeps newer ones', async () => {
    const run = async (name: string) => {
      const res = await execute(JSON.stringify({ inputs: { name }, stream: true }));
      await sseReader(res).all();
      return res.headers.get('x-execution-id') as string;
    };
    const old = await run('Old');
    const recent = await run('New');
    const recentCount = await eventCount(recent);
    expect(recentCount).toBeGreaterThan(3);
    // The old execution's events were written 30 hours before now.
    await svc.db.query(
      `update execution_events set created_at = created_at - interval '30 hours' where execution_id = $1`,
      [old],
    );
    // A sweep interval later (the runner's first sweep ran as it started).
    ahead += EVENT_SWEEP_INTERVAL_MS + 1000;
    await vi.waitFor(async () => expect(await eventCount(old)).toBe(0), { timeout: 10_000, interval: 100 });
    expect(await eventCount(recent)).toBe(recentCount);
    // The execution itself stays, and its stream still ends with its terminal event.
    const replay = await sseReader(
      await svc.app.request(`/api/workflows/${workflowId}/executions/${old}/stream`, {
        headers: { 'X-API-Key': tenant.key },
      }),
    ).all();
    expect(replay.map((e) => e.event)).toEqual(['execution.completed']);
    // A day (the default retention) and a sweep interval on, the newer ones go too.
    ahead += 24 * HOUR + EVENT_SWEEP_INTERVAL_MS;
    await vi.waitFor(async () => expect(await eventCount(recent)).toBe(0), {
      timeout: 10_000,
      interval: 100,
    });
  });
});
