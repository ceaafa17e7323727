// Retries per block, through the public API and the real queue: http blocks with `retry` against a
// local server that fails on purpose (test/helpers/retries.ts), each attempt a span in the log, and
// the waits between attempts observed through the runner's injected wait, never slept.
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { httpBlock, startRetryFixture } from '../helpers/retries.ts';

const f = await startRetryFixture();
const { base, hits, delays, run, spans, newKey } = f;
afterAll(() => f.close());
beforeEach(() => f.reset());

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
    const trace = await spans(res.executionId);
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

    delays.length = 0;
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
    f.holdDelays = true;
    f.gate = new Promise((open) => {
      f.delayStarted = open;
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
    f.holdDelays = true;
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
