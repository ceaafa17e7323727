// The fixture of the retry tests: the service with a runner whose waits between attempts are recorded
// instead of slept, and a local server that fails on purpose, by HTTP route and as an OpenAI-style
// chat provider. Routes count their requests by `key`, so each test uses keys of its own:
// - /flaky?key=K&fail=N&status=S: S (default 503) for the first N requests of K, then 200.
// - /limited?key=K&after=V: 429 with Retry-After V on the first request, then 200.
// - /status?key=K&status=S: always S. /reset?key=K&fail=N: the connection is cut N times, then 200.
// - /hang?key=K&fail=N: no answer at all N times, then 200. /gate: answers once a retry wait began.
// - POST /v1/chat/completions, model "K:N:S": an OpenAI-style error S for the first N calls of K,
//   then an answer; a 429 comes with Retry-After: 3.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import type { RetryDelay } from '../../runner/executor/retry.ts';
import { createTenant, startTestService, type Tenant, type TestService } from './service.ts';
import { deployWorkflow } from './workflows.ts';

export interface RunAnswer {
  success: boolean;
  output?: unknown;
  error?: string;
  executionId: string;
}

export interface Span {
  blockId: string;
  iteration?: number;
  attempt?: number;
  status: string;
  error?: string;
  output?: unknown;
}

export interface RetryFixture {
  svc: TestService;
  tenant: Tenant;
  base: string;
  /** Requests the server saw, by key. */
  hits: Map<string, number>;
  /** The waits the runner asked for between attempts, in order (emptied by reset). */
  delays: number[];
  /** When set, a wait never ends by itself: only an abort ends it. */
  holdDelays: boolean;
  /** Called as each wait begins. */
  delayStarted: () => void;
  /** What /gate waits for before it answers. */
  gate: Promise<void>;
  reset(): void;
  newKey(): string;
  /** Deploys the definition and executes it synchronously through the public API. */
  run(definition: unknown): Promise<RunAnswer>;
  /** The execution's trace spans, as the public log answers them. */
  spans(executionId: string): Promise<Span[]>;
  close(): Promise<void>;
}

/** A workflow of one http block `call`, with `retry` when given. */
export const httpBlock = (url: string, retry?: unknown, extra: Record<string, unknown> = {}) => ({
  blocks: [{ id: 'call', type: 'http', url, ...(retry === undefined ? {} : { retry }), ...extra }],
});

export async function startRetryFixture(): Promise<RetryFixture> {
  let keys = 0;
  const f = {
    hits: new Map<string, number>(),
    delays: [] as number[],
    holdDelays: false,
    delayStarted: () => {},
    gate: Promise.resolve(),
  } as RetryFixture;

  const retryDelay: RetryDelay = (ms, signal) => {
    f.delays.push(ms);
    f.delayStarted();
    if (!f.holdDelays) return Promise.resolve();
    return new Promise((_, reject) => {
      if (signal.aborted) reject(signal.reason);
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
  };
  const count = (key: string) => {
    const n = (f.hits.get(key) ?? 0) + 1;
    f.hits.set(key, n);
    return n;
  };

  function handle(req: IncomingMessage, res: ServerResponse, body: string) {
    const url = new URL(req.url ?? '/', f.base);
    if (url.pathname === '/v1/chat/completions') return chat(res, JSON.parse(body).model as string);
    const n = count(url.searchParams.get('key') ?? '');
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
        return void f.gate.then(() => json(200, { open: true }));
      case '/hang':
        if (n <= fail) return; // never answers: the block's own timeoutMs ends the attempt
        return json(200, { ok: true, attempt: n });
      default:
        return json(404, { error: 'unknown route' });
    }
  }

  function chat(res: ServerResponse, model: string) {
    const [key = '', fail = '0', status = '500'] = model.split(':');
    const n = count(key);
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
        choices: [
          { index: 0, message: { role: 'assistant', content: `answer ${n}` }, finish_reason: 'stop' },
        ],
        usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
      }),
    );
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  f.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  f.svc = await startTestService(
    { HTTP_ALLOW_LIST: '127.0.0.1', OPENAI_BASE_URL: `${f.base}/v1` },
    { runner: true, retryDelay },
  );
  f.tenant = await createTenant(f.svc.admin, { plan: 'enterprise' });

  f.reset = () => {
    f.delays.length = 0;
    f.holdDelays = false;
    f.delayStarted = () => {};
    f.gate = Promise.resolve();
  };
  f.newKey = () => `k${++keys}`;
  f.run = async (definition) => {
    const id = await deployWorkflow(f.svc.admin, f.tenant.workspace.id, definition);
    const res = await f.svc.call('POST', `/api/workflows/${id}/execute`, {
      key: f.tenant.key,
      body: { inputs: {} },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as RunAnswer;
  };
  f.spans = async (executionId) => {
    const res = await f.svc.call('GET', '/api/v1/logs', {
      key: f.tenant.key,
      query: { workspaceId: f.tenant.workspace.id, executionId, details: 'full' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data[0].executionData.traceSpans;
  };
  f.close = async () => {
    await f.svc.close();
    server.closeAllConnections();
    server.close();
  };
  return f;
}
