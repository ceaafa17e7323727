// Retries per block, through the public API and the real queue: an http block against a local server
// that fails on purpose, a function that opts in with retryOn, each attempt a span in the log, the
// delays observed through the runner's injected wait (never slept), and bad `retry` configs refused.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RetryDelay } from '../../runner/executor/retry.ts';
import {
  adminError,
  createTenant,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';
import { deployWorkflow } from '../helpers/workflows.ts';

let svc: TestService;
let tenant: Tenant;
let server: Server;
let base: string;

/** Requests the server saw, by key (each test uses its own key). */
const hits = new Map<string, number>();
/** The waits the runner asked for between attempts, in order. */
let delays: number[] = [];
/** When set, the injected wait never ends by itself: only an abort ends it. */
let holdDelays = false;
let delayStarted: () => void = () => {};
let gate: Promise<void> = Promise.resolve();

const retryDelay: RetryDelay = (ms, signal) => {
  delays.push(ms);
  delayStarted();
  if (!holdDelays) return Promise.resolve();
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
};

// /flaky?key=K&fail=N&status=S: S (default 503) for the first N requests of key K, then 200.
// /limited?key=K&after=V: 429 with Retry-After V on the first request, then 200.
// /status?key=K&status=S: always S. /reset?key=K&fail=N: the connection is cut N times, then 200.
// /hang?key=K&fail=N: no answer at all N times, then 200. /gate: answers once a retry wait has begun.
// POST /v1/chat/completions, model "K:N:S": an OpenAI-style error S for the first N calls of K, then
// an answer; S 429 comes with Retry-After: 3.
function handle(req: IncomingMessage, res: ServerResponse, body: string) {
  const url = new URL(req.url ?? '/', base);
  if (url.pathname === '/v1/chat/completions') return chat(res, JSON.parse(body).model as string);
  const key = url.searchParams.get('key') ?? '';
  const n = (hits.get(key) ?? 0) + 1;
  hits.set(key, n);
  const fail = Number(url.searchParams.get('fail') ?? 0);
  const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(value));
  };
  switch (url.pathname) {
    case '/flaky':
      if (n <= fail) return json(Number(url.searchParams.get('status') ?? 503), { error: 'not yet' });
      return json(200, { ok: true, attempt: n });
    case '/limited':
      if (n === 1)
        return json(429, { error: 'slow down' }, { 'retry-after': url.searchParams.get('after') ?? '' });
      return json(200, { ok: true, attempt: n });
    case '/status':
      return json(Number(url.searchParams.get('status')), { error: 'as asked' });
    case '/reset':
      if (n <= fail) return req.socket.destroy();
      return json(200, { ok: true, attempt: n });
    case '/gate':
      return void gate.then(() => json(200, { open: true }));
    case '/hang':
      if (n <= fail) return; // never answers: the block's own timeoutMs ends the attempt
      return json(200, { ok: true, attempt: n });
    default:
      return json(404, { error: 'unknown route' });
  }
}

function chat(res: ServerResponse, model: string) {
  const [key = '', fail = '0', status = '500'] = model.split(':');
  const n = (hits.get(key) ?? 0) + 1;
  hits.set(key, n);
  if (n <= Number(fail)) {
    res.writeHead(Number(status), {
      'content-type': 'application/json',
      ...(status === '429' ? { 'retry-after': '3' } : {}),
    });
    return res.end(JSON.stringify({ error: { message: `failure ${n} on purpose`, type: 'server_error' } }));
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1_700_000_000,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: `answer ${n}` }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
    }),
  );
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  svc = await startTestService(
    { HTTP_ALLOW_LIST: '127.0.0.1', OPENAI_BASE_URL: `${base}/v1` },
    { runner: true, retryDelay },
  );
  tenant = await createTenant(svc.admin, { plan: 'enterprise' });
});

afterAll(async () => {
  await svc.close();
  server.closeAllConnections();
  server.close();
});

beforeEach(() => {
  delays = [];
  holdDelays = false;
  delayStarted = () => {};
  gate = Promise.resolve();
});

let keys = 0;
const newKey = () => `k${++keys}`;

async function run(definition: unknown) {
  const id = await deployWorkflow(svc.admin, tenant.workspace.id, definition);
  const res = await svc.call('POST', `/api/workflows/${id}/execute`, {
    key: tenant.key,
    body: { inputs: {} },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { success: boolean; output?: unknown; error?: string; executionId: string };
}

interface Span {
  blockId: string;
  attempt?: number;
  status: string;
  error?: string;
  output?: unknown;
}

/** The execution's trace spans, as the public log answers them. */
async function spans(executionId: string): Promise<Span[]> {
  const res = await svc.call('GET', '/api/v1/logs', {
    key: tenant.key,
    query: { workspaceId: tenant.workspace.id, executionId, details: 'full' },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data[0].executionData.traceSpans;
}

const httpBlock = (url: string, retry?: unknown, extra: Record<string, unknown> = {}) => ({
  blocks: [{ id: 'call', type: 'http', url, ...(retry === undefined ? {} : { retry }), ...extra }],
});

describe('http blocks with retry', () => {
  it('retries 5xx answers until one succeeds, each attempt its own span', async () => {
    const key = newKey();
    const res = await run(
      httpBlock(`${base}/flaky?key=${key}&fail=2`, { maxAttempts: 5, delayMs: 100, jitter: false }),
    );
    expect(res).toMatchObject({
      success: true,
      output: { call: { status: 200, data: { ok: true, attempt: 3 } } },
    });
    expect(hits.get(key)).toBe(3);
    const trace = await spans(res.executionId);
    expect(trace.map((s) => [s.blockId, s.attempt, s.status])).toEqual([
      ['call', 1, 'error'],
      ['call', 2, 'error'],
      ['call', 3, 'success'],
    ]);
    expect(trace[0]?.error).toMatch(/answered HTTP 503 Service Unavailable/);
  });

  it('fails once the attempts are spent, saying how many and why each failed', async () => {
    const key = newKey();
    const res = await run(
      httpBlock(`${base}/status?key=${key}&status=500`, { maxAttempts: 3, delayMs: 10, jitter: false }),
    );
    expect(res.success).toBe(false);
    expect(res.error).toBe(
      'Block "call" failed: gave up after 3 attempts: #1 HTTP 500 Internal Server Error; #2 HTTP 500 Internal Server Error; #3 HTTP 500 Internal Server Error',
    );
    expect(hits.get(key)).toBe(3);
    expect((await spans(res.executionId)).map((s) => s.attempt)).toEqual([1, 2, 3]);
  });

  it('retries network errors, 408, 429 and 502 too', async () => {
    const key = newKey();
    // The first two requests are cut, then the server answers 200: retried past the network errors.
    const reset = await run(httpBlock(`${base}/reset?key=${key}&fail=2`, { maxAttempts: 3, jitter: false }));
    expect(reset).toMatchObject({ success: true, output: { call: { status: 200 } } });
    expect(hits.get(key)).toBe(3);

    for (const status of [408, 429, 502]) {
      const k = newKey();
      const res = await run(httpBlock(`${base}/flaky?key=${k}&fail=1&status=${status}`, { jitter: false }));
      expect(res.success, `status ${status}`).toBe(true);
      expect(hits.get(k)).toBe(2);
    }

    const cut = newKey();
    const failed = await run(httpBlock(`${base}/reset?key=${cut}&fail=9`, { maxAttempts: 2, jitter: false }));
    expect(failed.error).toMatch(
      /gave up after 2 attempts: #1 request to .* failed: .*; #2 request to .* failed: /,
    );
  });

  it("retries the block's own time-out", async () => {
    const key = newKey();
    const res = await run(
      httpBlock(`${base}/hang?key=${key}&fail=1`, { maxAttempts: 2, jitter: false }, { timeoutMs: 100 }),
    );
    expect(res).toMatchObject({ success: true, output: { call: { status: 200, data: { attempt: 2 } } } });
    const [first] = await spans(res.executionId);
    expect(first?.error).toBe('request timed out after 100 ms');

    const spent = await run(
      httpBlock(`${base}/hang?key=${newKey()}&fail=9`, { maxAttempts: 2, jitter: false }, { timeoutMs: 50 }),
    );
    expect(spent.error).toBe(
      'Block "call" failed: gave up after 2 attempts: #1 timed out after 50 ms; #2 timed out after 50 ms',
    );
  });

  it('retries inside a loop body: each span names its iteration and its attempt', async () => {
    const key = newKey();
    const res = await run({
      blocks: [
        {
          id: 'each',
          type: 'loop',
          forEach: ['a', 'b'],
          blocks: [
            {
              id: 'call',
              type: 'http',
              url: `${base}/flaky?key=${key}&fail=1`,
              retry: { maxAttempts: 2, jitter: false },
            },
          ],
        },
      ],
    });
    expect(res.success).toBe(true);
    const trace = (await spans(res.executionId)) as (Span & { iteration?: number })[];
    // The first request of the key fails; the retry and the second iteration's request succeed.
    expect(trace.filter((s) => s.blockId === 'call').map((s) => [s.iteration, s.attempt, s.status])).toEqual([
      [0, 1, 'error'],
      [0, 2, 'success'],
      [1, 1, 'success'],
    ]);
  });

  it('does not retry other 4xx: the status is the output, as without retry', async () => {
    const key = newKey();
    const res = await run(httpBlock(`${base}/status?key=${key}&status=404`, { maxAttempts: 5 }));
    expect(res).toMatchObject({ success: true, output: { call: { status: 404 } } });
    expect(hits.get(key)).toBe(1);
    expect(delays).toEqual([]);
    expect((await spans(res.executionId)).map((s) => [s.attempt, s.status])).toEqual([[1, 'success']]);
  });

  it('without retry keeps answering the status it got, once', async () => {
    const key = newKey();
    const res = await run(httpBlock(`${base}/status?key=${key}&status=503`));
    expect(res).toMatchObject({ success: true, output: { call: { status: 503 } } });
    expect(hits.get(key)).toBe(1);
    const [span] = await spans(res.executionId);
    expect(span).not.toHaveProperty('attempt');
  });

  it('does not retry what is wrong with the block itself: a bad URL after references resolve', async () => {
    const res = await run({
      inputs: { url: { type: 'string', default: 'not a url' } },
      blocks: [{ id: 'call', type: 'http', url: '<start.url>', retry: { maxAttempts: 4 } }],
    });
    expect(res.success).toBe(false);
    expect(res.error).not.toMatch(/attempt/);
    expect(delays).toEqual([]);
    expect(await spans(res.executionId)).toHaveLength(1);
  });

  it('takes the error edge with the attempts listed once they are spent', async () => {
    const key = newKey();
    const res = await run({
      blocks: [
        {
          id: 'call',
          type: 'http',
          url: `${base}/status?key=${key}&status=503`,
          retry: { maxAttempts: 2, jitter: false },
        },
        { id: 'fallback', type: 'response', data: { recovered: '<call.error>' } },
      ],
      edges: [{ from: 'call', to: 'fallback', branch: 'error' }],
    });
    expect(res).toMatchObject({
      success: true,
      output: { recovered: expect.stringMatching(/^gave up after 2 attempts: #1 HTTP 503/) },
    });
  });
});

describe('delays', () => {
  const failing = (retry: Record<string, unknown>) =>
    httpBlock(`${base}/status?key=${newKey()}&status=500`, retry);

  it('exponential backoff doubles from delayMs up to maxDelayMs; without jitter exactly', async () => {
    await run(
      failing({ maxAttempts: 6, delayMs: 100, backoff: 'exponential', maxDelayMs: 1000, jitter: false }),
    );
    expect(delays).toEqual([100, 200, 400, 800, 1000]);
  });

  it('fixed backoff waits delayMs every time', async () => {
    await run(failing({ maxAttempts: 4, delayMs: 250, backoff: 'fixed', jitter: false }));
    expect(delays).toEqual([250, 250, 250]);
  });

  it('defaults: 3 attempts, exponential from 1 s, full jitter', async () => {
    const res = await run(failing({}));
    expect(res.error).toMatch(/gave up after 3 attempts/);
    expect(delays).toHaveLength(2);
    expect(delays[0]).toBeGreaterThanOrEqual(0);
    expect(delays[0]).toBeLessThanOrEqual(1000);
    expect(delays[1]).toBeLessThanOrEqual(2000);
  });

  it('full jitter draws each wait between 0 and the backoff', async () => {
    await run(failing({ maxAttempts: 10, delayMs: 1000, backoff: 'exponential', maxDelayMs: 4000 }));
    const bounds = [1000, 2000, 4000, 4000, 4000, 4000, 4000, 4000, 4000];
    expect(delays).toHaveLength(bounds.length);
    delays.forEach((d, i) => {
      expect(Number.isInteger(d)).toBe(true);
      expect(d).toBeGreaterThanOrEqual(0);
      expect(d).toBeLessThanOrEqual(bounds[i] as number);
    });
    // Nine draws that all land on the bound would mean no jitter at all.
    expect(delays.some((d, i) => d !== bounds[i])).toBe(true);
  });

  it('honours Retry-After in seconds, capped by maxDelayMs, with no jitter', async () => {
    const res = await run(
      httpBlock(`${base}/limited?key=${newKey()}&after=7`, {
        maxAttempts: 2,
        delayMs: 10,
        maxDelayMs: 60_000,
      }),
    );
    expect(res.success).toBe(true);
    expect(delays).toEqual([7000]);

    delays = [];
    await run(httpBlock(`${base}/limited?key=${newKey()}&after=120`, { maxAttempts: 2, maxDelayMs: 5000 }));
    expect(delays).toEqual([5000]);
  });

  it('honours Retry-After as an HTTP date', async () => {
    const at = new Date(Date.now() + 90_000).toUTCString();
    const res = await run(
      httpBlock(`${base}/limited?key=${newKey()}&after=${encodeURIComponent(at)}`, {
        maxAttempts: 2,
        maxDelayMs: 600_000,
      }),
    );
    expect(res.success).toBe(true);
    expect(delays).toHaveLength(1);
    // HTTP dates have whole seconds: the wait is the rest of the 90 s, give or take the one cut off.
    expect(delays[0]).toBeGreaterThan(80_000);
    expect(delays[0]).toBeLessThanOrEqual(90_000);
  });

  it('stops waiting when another block fails: no further attempt', async () => {
    holdDelays = true;
    gate = new Promise((open) => {
      delayStarted = open;
    });
    const key = newKey();
    const res = await run({
      blocks: [
        {
          id: 'call',
          type: 'http',
          url: `${base}/status?key=${key}&status=500`,
          retry: { maxAttempts: 5, delayMs: 60_000, jitter: false },
        },
        // boom fails only once call is waiting for its second attempt.
        { id: 'pause', type: 'http', url: `${base}/gate` },
        { id: 'boom', type: 'function', code: 'throw new Error("boom")' },
      ],
      edges: [{ from: 'pause', to: 'boom' }],
    });
    expect(res).toMatchObject({
      success: false,
      error: expect.stringMatching(/^Block "boom" failed: .*boom/),
    });
    expect(hits.get(key)).toBe(1);
    expect(delays).toEqual([60_000]);
  });

  it('stops at once when the run is stopped during a delay: no further attempt', async () => {
    holdDelays = true;
    const key = newKey();
    const res = await run({
      timeoutMs: 300,
      ...httpBlock(`${base}/status?key=${key}&status=500`, {
        maxAttempts: 5,
        delayMs: 60_000,
        jitter: false,
      }),
    });
    expect(res).toMatchObject({ success: false, error: 'Workflow timed out after 300 ms' });
    expect(hits.get(key)).toBe(1);
    expect(delays).toEqual([60_000]);
    expect((await spans(res.executionId)).map((s) => s.attempt)).toEqual([1]);
  });
});

describe('agent blocks with retry', () => {
  const agent = (model: string, retry?: unknown) => ({
    blocks: [{ id: 'ask', type: 'agent', model, prompt: 'hi', ...(retry === undefined ? {} : { retry }) }],
  });

  it('retries provider 5xx, one request per attempt', async () => {
    const key = newKey();
    const res = await run(agent(`${key}:2:503`, { maxAttempts: 3, delayMs: 50, jitter: false }));
    expect(res).toMatchObject({ success: true, output: { ask: { content: 'answer 3' } } });
    // The provider client makes no attempts of its own besides the executor's.
    expect(hits.get(key)).toBe(3);
    expect(delays).toEqual([50, 100]);
    const trace = await spans(res.executionId);
    expect(trace.map((s) => [s.attempt, s.status])).toEqual([
      [1, 'error'],
      [2, 'error'],
      [3, 'success'],
    ]);
    expect(trace[0]?.error).toBe('model provider answered HTTP 503: failure 1 on purpose');
  });

  it("honours the provider's Retry-After on 429, and lists the causes when the attempts are spent", async () => {
    const res = await run(agent(`${newKey()}:1:429`, { maxAttempts: 2, delayMs: 10 }));
    expect(res.success).toBe(true);
    expect(delays).toEqual([3000]);

    const spent = await run(agent(`${newKey()}:5:500`, { maxAttempts: 2, delayMs: 10 }));
    expect(spent.error).toBe('Block "ask" failed: gave up after 2 attempts: #1 HTTP 500; #2 HTTP 500');
  });

  it('does not retry a 4xx such as a bad request', async () => {
    const key = newKey();
    const res = await run(agent(`${key}:5:400`, { maxAttempts: 4 }));
    expect(res.error).toMatch(/HTTP 400: failure 1 on purpose/);
    expect(hits.get(key)).toBe(1);
    expect(delays).toEqual([]);
  });
});

describe('function blocks', () => {
  // The sandbox keeps no state between runs: count attempts through the local server.
  const counting = (key: string, succeedOn: number) =>
    `const r = await fetch("${base}/flaky?key=${key}&fail=0"); const { attempt } = await r.json();
     if (attempt < ${succeedOn}) throw new Error("flaky " + attempt);
     return { attempt };`;

  it('retries what the code throws when retryOn names "error"', async () => {
    const key = newKey();
    const res = await run({
      blocks: [
        {
          id: 'fn',
          type: 'function',
          code: counting(key, 3),
          retry: { maxAttempts: 3, delayMs: 5, retryOn: ['error'], jitter: false },
        },
      ],
    });
    expect(res).toMatchObject({ success: true, output: { fn: { attempt: 3 } } });
    expect(delays).toEqual([5, 10]);
    const trace = await spans(res.executionId);
    expect(trace.map((s) => [s.attempt, s.status])).toEqual([
      [1, 'error'],
      [2, 'error'],
      [3, 'success'],
    ]);
    expect(trace[0]?.error).toMatch(/flaky 1/);
  });

  it('lists each thrown error when the attempts are spent', async () => {
    const key = newKey();
    const res = await run({
      blocks: [
        {
          id: 'fn',
          type: 'function',
          code: counting(key, 99),
          retry: { maxAttempts: 2, retryOn: ['error'] },
        },
      ],
    });
    expect(res.error).toMatch(/^Block "fn" failed: gave up after 2 attempts: #1 .*flaky 1; #2 .*flaky 2$/);
  });

  it('does not retry thrown errors without retryOn', async () => {
    const key = newKey();
    const res = await run({
      blocks: [{ id: 'fn', type: 'function', code: counting(key, 2), retry: { maxAttempts: 3 } }],
    });
    expect(res.error).toMatch(/flaky 1/);
    expect(hits.get(key)).toBe(1);
    expect(delays).toEqual([]);
  });
});

describe('a bad retry config is refused at create and deploy, with its path', () => {
  const paths = (details: { path: (string | number)[] }[]) => details.map((d) => d.path.join('.'));
  const refusal = async (retry: unknown, type = 'http') => {
    const block =
      type === 'http'
        ? { id: 'call', type, url: `${base}/status`, retry }
        : { id: 'fn', type, code: 'return 1', retry };
    const failure = await adminError(
      svc.admin.workflows.create.mutate({
        workspaceId: tenant.workspace.id,
        name: 'bad retry',
        definition: { blocks: [{ id: 'ok', type: 'response', data: 1 }, block] },
      }),
    );
    expect(failure).toMatchObject({
      code: 'BAD_REQUEST',
      httpStatus: 400,
      message: 'Invalid workflow definition',
    });
    return failure.details ?? [];
  };

  it('names the field of each problem', async () => {
    expect(paths(await refusal({ maxAttempts: 0 }))).toEqual(['definition.blocks.1.retry.maxAttempts']);
    expect(paths(await refusal({ maxAttempts: 11 }))).toEqual(['definition.blocks.1.retry.maxAttempts']);
    expect(paths(await refusal({ maxAttempts: 2.5 }))).toEqual(['definition.blocks.1.retry.maxAttempts']);
    expect(paths(await refusal({ delayMs: -1 }))).toEqual(['definition.blocks.1.retry.delayMs']);
    expect(paths(await refusal({ backoff: 'linear' }))).toEqual(['definition.blocks.1.retry.backoff']);
    expect(paths(await refusal({ jitter: 'yes' }))).toEqual(['definition.blocks.1.retry.jitter']);
    expect(paths(await refusal({ delayMs: 5000, maxDelayMs: 1000 }))).toEqual([
      'definition.blocks.1.retry.maxDelayMs',
    ]);
    expect(paths(await refusal({ maxDelayMs: 4_000_000 }))).toEqual(['definition.blocks.1.retry.maxDelayMs']);
    expect(paths(await refusal({ attempts: 3 }))).toEqual(['definition.blocks.1.retry']);
    expect(paths(await refusal('3 times'))).toEqual(['definition.blocks.1.retry']);
    expect(paths(await refusal(null))).toEqual(['definition.blocks.1.retry']);
    expect(paths(await refusal({ retryOn: ['timeout'] }, 'function'))).toEqual([
      'definition.blocks.1.retry.retryOn.0',
    ]);
    const onHttp = await refusal({ retryOn: ['error'] });
    expect(paths(onHttp)).toEqual(['definition.blocks.1.retry.retryOn']);
    expect(onHttp[0]?.message).toMatch(/function/);
  });

  it('inside a loop body too; a good config deploys', async () => {
    const failure = await adminError(
      svc.admin.workflows.create.mutate({
        workspaceId: tenant.workspace.id,
        name: 'bad nested retry',
        definition: {
          blocks: [
            {
              id: 'each',
              type: 'loop',
              count: 2,
              blocks: [{ id: 'inner', type: 'http', url: `${base}/status`, retry: { backoff: 'random' } }],
            },
          ],
        },
      }),
    );
    expect(paths(failure.details ?? [])).toEqual(['definition.blocks.0.blocks.0.retry.backoff']);
    // What create and update accept, deploy accepts: the same check.
    const id = await deployWorkflow(
      svc.admin,
      tenant.workspace.id,
      httpBlock(`${base}/status`, { maxAttempts: 10 }),
    );
    expect(id).toEqual(expect.any(String));
  });
});
