// Retries per block, through the public API: agent blocks against a provider that fails on purpose,
// function blocks that opt in with retryOn, and bad `retry` configs refused at create and deploy.
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { httpBlock, startRetryFixture } from '../helpers/retries.ts';
import { adminError } from '../helpers/service.ts';
import { deployWorkflow } from '../helpers/workflows.ts';

const f = await startRetryFixture();
const { svc, tenant, base, hits, delays, run, spans, newKey } = f;
afterAll(() => f.close());
beforeEach(() => f.reset());

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
