// Streaming executions (issue 29): an execute call with `stream: true` answers the execution's
// events as Server-Sent Events (block progress, the agent's tokens from a local OpenAI-compatible
// server, the terminal event with its limits); the reconnect route replays and continues; a client
// that goes away does not stop the execution; a cancel ends the stream with execution.cancelled.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatServer } from '../helpers/openai-server.ts';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';
import { type SseEvent, sseReader } from '../helpers/sse.ts';
import { deployWorkflow, pollJob } from '../helpers/workflows.ts';

let svc: TestService;
let tenant: Tenant;
let chat: Awaited<ReturnType<typeof startChatServer>>;
let workflowId: string;

const agentWorkflow = {
  inputs: { name: { type: 'string', required: true } },
  blocks: [
    { id: 'greet', type: 'function', code: 'return { text: `hello ${inputs.name} and friends` }' },
    { id: 'agent', type: 'agent', model: 'gpt-4o-mini', prompt: '<greet.text>' },
    { id: 'done', type: 'response', data: { answer: '<agent.content>' } },
  ],
  edges: [
    { from: 'greet', to: 'agent' },
    { from: 'agent', to: 'done' },
  ],
};

beforeAll(async () => {
  chat = await startChatServer();
  svc = await startTestService(
    { OPENAI_BASE_URL: chat.url, OPENAI_API_KEY: 'sk-test', STREAM_HEARTBEAT_MS: '60000' },
    { runner: true },
  );
  tenant = await createTenant(svc.admin);
  workflowId = await deployWorkflow(svc.admin, tenant.workspace.id, agentWorkflow);
});
afterAll(async () => {
  await svc?.close();
  await chat?.close();
});

const execute = (body: unknown, headers: Record<string, string> = {}, key = tenant.key) =>
  svc.app.request(`/api/workflows/${workflowId}/execute`, {
    method: 'POST',
    headers: { 'X-API-Key': key, 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

const reconnect = (executionId: string, headers: Record<string, string> = {}, query = '') =>
  svc.app.request(`/api/workflows/${workflowId}/executions/${executionId}/stream${query}`, {
    headers: { 'X-API-Key': tenant.key, ...headers },
  });

const names = (events: SseEvent[]) =>
  events.map((e) => `${e.event}${e.data.blockId ? `:${e.data.blockId}` : ''}`);

describe('POST …/execute with stream: true', () => {
  it('answers block progress, the model tokens and the result, in order, with increasing ids', async () => {
    const res = await execute({ inputs: { name: 'Ada' }, stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const executionId = res.headers.get('x-execution-id') as string;
    const events = await sseReader(res).all();
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    const tokens = events.filter((e) => e.event === 'token');
    expect(tokens.length).toBeGreaterThan(3);
    expect(names(events)).toEqual([
      'execution.started',
      'block.started:greet',
      'block.completed:greet',
      'block.started:agent',
      ...tokens.map(() => 'token:agent'),
      'block.completed:agent',
      'block.started:done',
      'block.completed:done',
      'execution.completed',
    ]);
    const answer = 'echo: hello Ada and friends';
    expect(tokens.map((t) => t.data.chunk).join('')).toBe(answer);
    expect(events[0]?.data).toMatchObject({ executionId, workflowId });
    expect(
      events.find((e) => e.event === 'block.completed' && e.data.blockId === 'agent')?.data,
    ).toMatchObject({
      blockType: 'agent',
      success: true,
      output: { content: answer, tokens: { prompt: 20, completion: 5, total: 25 } },
    });
    expect(events.at(-1)?.data).toMatchObject({
      success: true,
      executionId,
      output: { answer },
      limits: { usage: { plan: 'free' } },
    });
    // The streamed run is recorded as any other, its token usage priced.
    const job = await pollJob(svc.call, tenant.key, executionId);
    expect(job.body).toMatchObject({ status: 'completed', output: { answer } });
    expect(chat.requests.at(-1)?.stream).toBe(true);
  });

  it('streams on X-Stream-Response: true, with only the selectedOutputs in block.completed', async () => {
    const res = await execute(
      { inputs: { name: 'Bo' }, selectedOutputs: ['agent.content'] },
      { 'X-Stream-Response': 'true' },
    );
    const events = await sseReader(res).all();
    const completed = events.filter((e) => e.event === 'block.completed');
    expect(completed.map((e) => e.data)).toEqual([
      { blockId: 'greet', blockType: 'function', success: true },
      {
        blockId: 'agent',
        blockType: 'agent',
        success: true,
        output: { content: 'echo: hello Bo and friends' },
      },
      { blockId: 'done', blockType: 'response', success: true },
    ]);
    expect(events.at(-1)?.event).toBe('execution.completed');
  });

  it('leaves executions that did not ask to stream without events', async () => {
    const res = await svc.call('POST', `/api/workflows/${workflowId}/execute`, {
      key: tenant.key,
      body: { inputs: { name: 'Cy' } },
    });
    expect(res.body.success).toBe(true);
    const rows = await svc.db.query('select 1 from execution_events where execution_id = $1', [
      res.body.executionId,
    ]);
    expect(rows).toHaveLength(0);
    const again = await reconnect(res.body.executionId);
    expect(again.status).toBe(409);
  });

  it('refuses a stream that is also async, and selectedOutputs without a stream, changing nothing', async () => {
    const before = await svc.db.query('select id from executions');
    for (const [body, headers, field] of [
      [{ inputs: { name: 'x' }, stream: true, async: true }, {}, 'stream'],
      [{ inputs: { name: 'x' }, async: true }, { 'X-Stream-Response': 'true' }, 'stream'],
      [{ inputs: { name: 'x' }, selectedOutputs: ['agent.content'] }, {}, 'selectedOutputs'],
      [{ inputs: { name: 'x' }, stream: true, selectedOutputs: 'agent' }, {}, 'selectedOutputs'],
      [{ inputs: { name: 'x' }, stream: true, selectedOutputs: ['agent..x'] }, {}, 'selectedOutputs'],
      [{ inputs: { name: 'x' }, stream: 'yes' }, {}, 'stream'],
    ] as const) {
      const res = await execute(body, headers);
      expect(res.status, JSON.stringify(body)).toBe(400);
      const answer = await res.json();
      expect(answer.details[0].path[0]).toBe(field);
    }
    expect(await svc.db.query('select id from executions')).toHaveLength(before.length);
  });
});

describe('GET …/executions/{executionId}/stream', () => {
  it('replays a finished execution from the start, after Last-Event-ID, or after ?from=, and closes', async () => {
    const first = await execute({ inputs: { name: 'Di' }, stream: true });
    const executionId = first.headers.get('x-execution-id') as string;
    const all = await sseReader(first).all();
    const replay = await sseReader(await reconnect(executionId)).all();
    expect(replay.map((e) => [e.id, e.event])).toEqual(all.map((e) => [e.id, e.event]));
    const afterThree = await sseReader(await reconnect(executionId, { 'Last-Event-ID': '3' })).all();
    expect(afterThree.map((e) => e.id)).toEqual(all.slice(3).map((e) => e.id));
    const fromQuery = await sseReader(await reconnect(executionId, {}, '?from=5')).all();
    expect(fromQuery.map((e) => e.id)).toEqual(all.slice(5).map((e) => e.id));
    // Last-Event-ID wins over ?from= (a browser's EventSource sends it when it reconnects).
    const both = await sseReader(await reconnect(executionId, { 'Last-Event-ID': '6' }, '?from=1')).all();
    expect(both[0]?.id).toBe(7);
    // Past the end: nothing left to send.
    const past = await sseReader(await reconnect(executionId, { 'Last-Event-ID': String(all.length) })).all();
    expect(past).toEqual([]);
  });

  it('continues live after a disconnect, which does not stop the execution', async () => {
    chat.holdStreams();
    const res = await execute({ inputs: { name: 'Ed' }, stream: true });
    const executionId = res.headers.get('x-execution-id') as string;
    const reader = sseReader(res);
    const seen = await reader.until((e) => e.event === 'token');
    await reader.cancel();
    // Reconnect mid-run after the last event seen; the rest arrives live once the model goes on.
    const resumed = sseReader(await reconnect(executionId, { 'Last-Event-ID': String(seen.at(-1)?.id) }));
    chat.release();
    const rest = await resumed.all();
    expect(rest[0]?.id).toBe((seen.at(-1)?.id as number) + 1);
    expect(rest.at(-1)?.event).toBe('execution.completed');
    const chunks = [...seen, ...rest].filter((e) => e.event === 'token').map((e) => e.data.chunk);
    expect(chunks.join('')).toBe('echo: hello Ed and friends');
    expect((await pollJob(svc.call, tenant.key, executionId)).body.status).toBe('completed');
  });

  it('ends with execution.cancelled when the execution is cancelled mid-stream', async () => {
    chat.holdStreams();
    const res = await execute({ inputs: { name: 'Fay' }, stream: true });
    const executionId = res.headers.get('x-execution-id') as string;
    const reader = sseReader(res);
    await reader.until((e) => e.event === 'token');
    const cancelled = await svc.call(
      'POST',
      `/api/workflows/${workflowId}/executions/${executionId}/cancel`,
      {
        key: tenant.key,
      },
    );
    expect(cancelled.status).toBe(200);
    const events = await reader.all();
    chat.release();
    expect(events.at(-1)).toMatchObject({
      event: 'execution.cancelled',
      data: { success: false, status: 'cancelled', executionId },
    });
    expect(
      events.filter((e) => e.event.startsWith('execution.') && e.event !== 'execution.started'),
    ).toHaveLength(1);
    const ids = events.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
  });

  it('reads a long stream a page at a time, at the pace of a slow reader', async () => {
    const long = await deployWorkflow(svc.admin, tenant.workspace.id, {
      inputs: { text: { type: 'string', required: true } },
      blocks: [{ id: 'agent', type: 'agent', model: 'gpt-4o-mini', prompt: '<start.text>' }],
      edges: [],
    });
    const text = Array.from({ length: 400 }, (_, i) => `w${i}`).join(' ');
    const started = await svc.app.request(`/api/workflows/${long}/execute`, {
      method: 'POST',
      headers: { 'X-API-Key': tenant.key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ inputs: { text }, stream: true }),
    });
    const executionId = started.headers.get('x-execution-id') as string;
    await started.body?.cancel();
    await pollJob(svc.call, tenant.key, executionId);
    const res = await svc.app.request(`/api/workflows/${long}/executions/${executionId}/stream`, {
      headers: { 'X-API-Key': tenant.key },
    });
    const reader = sseReader(res);
    // Nothing is read ahead of the reader: each read brings one page of at most 100 events.
    const first = await reader.chunk();
    expect(first).toHaveLength(100);
    const events = await reader.all();
    expect(events.length).toBeGreaterThan(400);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1)?.event).toBe('execution.completed');
  });

  it('gives a client that stops reading mid-run every event once, in order, when it reads on', async () => {
    const long = await deployWorkflow(svc.admin, tenant.workspace.id, {
      inputs: { text: { type: 'string', required: true } },
      blocks: [{ id: 'agent', type: 'agent', model: 'gpt-4o-mini', prompt: '<start.text>' }],
      edges: [],
    });
    const text = Array.from({ length: 300 }, (_, i) => `v${i}`).join(' ');
    const res = await svc.app.request(`/api/workflows/${long}/execute`, {
      method: 'POST',
      headers: { 'X-API-Key': tenant.key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ inputs: { text }, stream: true }),
    });
    const executionId = res.headers.get('x-execution-id') as string;
    const reader = sseReader(res);
    await reader.until((e) => e.event === 'token');
    // Notices of more events than a page arrive while the client reads nothing.
    await pollJob(svc.call, tenant.key, executionId);
    const events = await reader.all();
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    const chunks = events.filter((e) => e.event === 'token').map((e) => e.data.chunk);
    expect(chunks.join('')).toBe(`echo: ${text}`);
    expect(events.at(-1)?.event).toBe('execution.completed');
  });

  it('sends an event too large for a notice (8000 bytes) live, as the table holds it', async () => {
    const big = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [
        { id: 'fn', type: 'function', code: "return { text: 'é'.repeat(6000) }" },
        { id: 'after', type: 'function', code: 'return 1' },
      ],
      edges: [{ from: 'fn', to: 'after' }],
    });
    const res = await svc.app.request(`/api/workflows/${big}/execute`, {
      method: 'POST',
      headers: { 'X-API-Key': tenant.key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ stream: true }),
    });
    const executionId = res.headers.get('x-execution-id') as string;
    const live = await sseReader(res).all();
    expect(live.find((e) => e.event === 'block.completed')?.data.output.text).toBe('é'.repeat(6000));
    expect(live.map((e) => e.id)).toEqual(live.map((_, i) => i + 1));
    expect(live.at(-1)?.event).toBe('execution.completed');
    const replay = await sseReader(
      await svc.app.request(`/api/workflows/${big}/executions/${executionId}/stream`, {
        headers: { 'X-API-Key': tenant.key },
      }),
    ).all();
    expect(replay.slice(0, -1)).toEqual(live.slice(0, -1));
  });

  it('answers 400 for a bad id or cursor, 404 for another workflow or an unknown execution', async () => {
    const res = await execute({ inputs: { name: 'Gil' }, stream: true });
    const executionId = res.headers.get('x-execution-id') as string;
    await sseReader(res).all();
    for (const [headers, query] of [
      [{ 'Last-Event-ID': 'abc' }, ''],
      [{}, '?from=-1'],
      [{}, '?from=1.5'],
      [{}, '?from=99999999999'],
    ] as const) {
      const bad = await reconnect(executionId, headers, query);
      expect(bad.status).toBe(400);
      expect((await bad.json()).details[0].path[0]).toMatch(/^(from|Last-Event-ID)$/);
    }
    const badId = await svc.app.request(`/api/workflows/${workflowId}/executions/nope/stream`, {
      headers: { 'X-API-Key': tenant.key },
    });
    expect(badId.status).toBe(400);
    expect((await reconnect(crypto.randomUUID())).status).toBe(404);
    const other = await deployWorkflow(svc.admin, tenant.workspace.id, agentWorkflow, 'other');
    const wrong = await svc.app.request(`/api/workflows/${other}/executions/${executionId}/stream`, {
      headers: { 'X-API-Key': tenant.key },
    });
    expect(wrong.status).toBe(404);
    const stranger = await createTenant(svc.admin);
    const foreign = await svc.app.request(`/api/workflows/${workflowId}/executions/${executionId}/stream`, {
      headers: { 'X-API-Key': stranger.key },
    });
    expect([403, 404]).toContain(foreign.status);
  });
});
