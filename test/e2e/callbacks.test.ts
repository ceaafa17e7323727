// Completion callbacks end to end, with a real runner and a receiving server on 127.0.0.1: the Job
// record is POSTed when an execution completes or fails (the dead-letter path too), signed with the
// workspace's secret as read through admin; failed attempts (5xx, timeouts, redirects) are retried
// with backoff and recorded; the SSRF rules of the http block refuse internal addresses, literal ones
// at execute time and host names at delivery.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertExecutions } from '../../db/executions.ts';
import { QUEUES, WAKE_CHANNEL } from '../../jobs/queues.ts';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';
import { until as waitFor } from '../helpers/until.ts';
import { deployWorkflow, pollJob } from '../helpers/workflows.ts';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** What the receiver does with a request to a path: answer a status, redirect, or never answer. */
type Reaction = number | 'hang' | 'redirect';

let receiver: Server;
let base: string;
let port: number;
const received: Received[] = [];
// Per path, the reactions for its next requests, in order; then 200.
const plans = new Map<string, Reaction[]>();

async function startReceiver() {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://receiver').pathname;
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const reaction = plans.get(path)?.shift() ?? 200;
      if (reaction === 'hang') return;
      if (reaction === 'redirect') {
        res.writeHead(302, { location: '/elsewhere' });
        return res.end();
      }
      res.writeHead(reaction, { 'content-type': 'text/plain' });
      res.end('x'.repeat(100_000)); // more than the runner reads: it must cut it off, not choke
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  port = (receiver.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
}

/** A receiver's check, as the README shows it: HMAC-SHA256 of "<timestamp>.<raw body>". */
function verifies(secret: string, headers: IncomingHttpHeaders, body: string): boolean {
  const timestamp = String(headers['x-callback-timestamp']);
  const given = Buffer.from(String(headers['x-callback-signature']));
  const expected = Buffer.from(
    `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`,
  );
  const fresh = Math.abs(Date.now() / 1000 - Number(timestamp)) < 300;
  return fresh && given.length === expected.length && timingSafeEqual(given, expected);
}

/** Polls until `probe` returns something (each poll is real work: the runner delivers meanwhile). */
const until = <T>(probe: () => Promise<T | undefined> | T | undefined, what: string) =>
  waitFor(probe, what, { tries: 600, everyMs: 50 });

const receivedAt = (path: string, count = 1) =>
  until(() => {
    const got = received.filter((r) => r.path === path);
    return got.length >= count ? got : undefined;
  }, `${count} request(s) at ${path}`);

let unique = 0;
/** A path of its own per test, so receivers' counts never mix. */
const newPath = (name: string) => `/${name}-${++unique}`;

const GREET = {
  inputs: { name: { type: 'string', required: true } },
  blocks: [{ id: 'r', type: 'response', data: { hello: '<start.name>' } }],
};
const BOOM = {
  blocks: [{ id: 'boom', type: 'function', code: 'throw new Error("boom")' }],
};

beforeAll(startReceiver);
afterAll(() => new Promise((r) => receiver.close(r)));

describe('with the receiver allow-listed', () => {
  let svc: TestService;
  let tenant: Tenant;
  let greet: string;

  beforeAll(async () => {
    svc = await startTestService(
      {
        HTTP_ALLOW_LIST: '127.0.0.1',
        CALLBACK_RETRY_DELAY_SECONDS: '1',
        CALLBACK_RETRY_DELAY_MAX_SECONDS: '1',
        CALLBACK_RETRY_LIMIT: '2',
        CALLBACK_TIMEOUT_MS: '1500',
      },
      { runner: true },
    );
    tenant = await createTenant(svc.admin, { plan: 'enterprise' });
    greet = await deployWorkflow(svc.admin, tenant.workspace.id, GREET);
  });
  afterAll(() => svc.close());

  const execute = (workflowId: string, body: Record<string, unknown>, headers?: Record<string, string>) =>
    svc.call('POST', `/api/workflows/${workflowId}/execute`, {
      key: tenant.key,
      body,
      ...(headers ? { headers } : {}),
    });
  const secret = async () =>
    (await svc.admin.callbacks.secret.query({ workspaceId: tenant.workspace.id })).secret;
  const settled = (executionId: string) =>
    until(async () => {
      const d = await svc.admin.callbacks.deliveries.query({ executionId });
      return d.status === 'pending' ? undefined : d;
    }, `the callback of ${executionId} to settle`);

  it('POSTs the Job record of a completed execution, signed with the workspace secret', async () => {
    const path = newPath('done');
    const callbackUrl = `${base}${path}?token=abc`;
    const res = await execute(greet, { inputs: { name: 'Ada' }, async: true, callbackUrl });
    expect(res.status).toBe(202);
    const [call] = await receivedAt(path);
    const job = await pollJob(svc.call, tenant.key, res.body.taskId);

    expect(JSON.parse(call?.body ?? '')).toEqual(job.body);
    expect(job.body).toMatchObject({ success: true, status: 'completed', output: { hello: 'Ada' } });
    expect(call?.headers['content-type']).toBe('application/json');
    expect(call?.headers['x-execution-id']).toBe(res.body.taskId);
    expect(call?.headers['x-callback-attempt']).toBe('1');
    expect(call?.headers['x-callback-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(verifies(await secret(), call?.headers ?? {}, call?.body ?? '')).toBe(true);
    // A signature is bound to its body and its timestamp.
    expect(verifies(await secret(), call?.headers ?? {}, `${call?.body} `)).toBe(false);
    expect(
      verifies(
        await secret(),
        {
          ...call?.headers,
          'x-callback-timestamp': String(Number(call?.headers['x-callback-timestamp']) + 1),
        },
        call?.body ?? '',
      ),
    ).toBe(false);

    const deliveries = await settled(res.body.taskId);
    expect(deliveries).toMatchObject({
      executionId: res.body.taskId,
      workspaceId: tenant.workspace.id,
      callbackUrl,
      status: 'delivered',
      attempts: [
        { attempt: 1, url: callbackUrl, statusCode: 200, error: null, delivered: true, gaveUp: false },
      ],
    });
  });

  it('POSTs the Job record of a failed execution, with its error', async () => {
    const boom = await deployWorkflow(svc.admin, tenant.workspace.id, BOOM);
    const path = newPath('failed');
    const res = await execute(boom, { async: true, callbackUrl: `${base}${path}` });
    expect(res.status).toBe(202);
    const [call] = await receivedAt(path);
    const job = await pollJob(svc.call, tenant.key, res.body.taskId);
    const body = JSON.parse(call?.body ?? '');
    expect(body).toEqual(job.body);
    expect(body).toMatchObject({ success: false, status: 'failed', error: expect.stringMatching(/boom/) });
    expect(body).not.toHaveProperty('output');
    expect(verifies(await secret(), call?.headers ?? {}, call?.body ?? '')).toBe(true);
  });

  it('delivers the callback of an execution failed by the dead-letter path', async () => {
    const path = newPath('dead');
    const executionId = crypto.randomUUID();
    // The state a crash loop leaves behind: the execution row, and its job in the dead-letter queue.
    await insertExecutions(svc.db, [
      {
        id: executionId,
        organizationId: tenant.org.id,
        workspaceId: tenant.workspace.id,
        workflowId: greet,
        version: 1,
        mode: 'async',
        trigger: 'api',
        apiKeyId: null,
        billedUserId: tenant.user.id,
        billingSubject: null,
        inputs: { name: 'Ada' },
        callbackUrl: `${base}${path}`,
      },
    ]);
    await svc.queue.send(QUEUES.workflowExecuteDead, { executionId });
    await svc.db.notify(WAKE_CHANNEL, QUEUES.workflowExecuteDead);
    const [call] = await receivedAt(path);
    expect(JSON.parse(call?.body ?? '')).toMatchObject({
      success: false,
      taskId: executionId,
      status: 'failed',
      error: expect.stringMatching(/stopped responding/),
    });
    expect(verifies(await secret(), call?.headers ?? {}, call?.body ?? '')).toBe(true);
  });

  it('retries after a 500, then delivers; every attempt is visible through admin', async () => {
    const path = newPath('flaky');
    plans.set(path, [500]);
    const res = await execute(greet, { inputs: { name: 'Bo' }, async: true, callbackUrl: `${base}${path}` });
    const calls = await receivedAt(path, 2);
    expect(calls.map((c) => c.headers['x-callback-attempt'])).toEqual(['1', '2']);
    // The same record both times, each attempt signed afresh.
    expect(calls[1]?.body).toBe(calls[0]?.body);
    for (const c of calls) expect(verifies(await secret(), c.headers, c.body)).toBe(true);

    const deliveries = await settled(res.body.taskId);
    expect(deliveries.status).toBe('delivered');
    expect(deliveries.attempts).toMatchObject([
      { attempt: 1, statusCode: 500, delivered: false, gaveUp: false },
      { attempt: 2, statusCode: 200, delivered: true, gaveUp: false },
    ]);
  });

  it('counts a receiver that does not answer in time as a failed attempt, and retries', async () => {
    const path = newPath('slow');
    plans.set(path, ['hang']);
    const res = await execute(greet, { inputs: { name: 'Cy' }, async: true, callbackUrl: `${base}${path}` });
    const deliveries = await settled(res.body.taskId);
    expect(deliveries.status).toBe('delivered');
    expect(deliveries.attempts).toMatchObject([
      { attempt: 1, statusCode: null, error: 'timed out after 1500 ms', delivered: false },
      { attempt: 2, statusCode: 200, error: null, delivered: true },
    ]);
  });

  it('does not follow redirects, and gives up after the last retry', async () => {
    const path = newPath('moved');
    plans.set(path, ['redirect', 'redirect', 'redirect']);
    const res = await execute(greet, { inputs: { name: 'Di' }, async: true, callbackUrl: `${base}${path}` });
    const deliveries = await settled(res.body.taskId);
    expect(deliveries.status).toBe('given_up');
    // CALLBACK_RETRY_LIMIT 2: the first attempt and two retries.
    expect(deliveries.attempts).toMatchObject([
      { attempt: 1, statusCode: 302, delivered: false, gaveUp: false },
      { attempt: 2, statusCode: 302, delivered: false, gaveUp: false },
      { attempt: 3, statusCode: 302, delivered: false, gaveUp: true },
    ]);
    expect(received.filter((r) => r.path === path)).toHaveLength(3);
    expect(received.some((r) => r.path === '/elsewhere')).toBe(false);
  });

  it('signs with the new secret once it is rotated', async () => {
    const old = await secret();
    const rotated = await svc.admin.callbacks.rotateSecret.mutate({ workspaceId: tenant.workspace.id });
    expect(rotated.secret).not.toBe(old);
    expect(await secret()).toBe(rotated.secret);
    const path = newPath('rotated');
    await execute(greet, { inputs: { name: 'Ed' }, async: true, callbackUrl: `${base}${path}` });
    const [call] = await receivedAt(path);
    expect(verifies(rotated.secret, call?.headers ?? {}, call?.body ?? '')).toBe(true);
    expect(verifies(old, call?.headers ?? {}, call?.body ?? '')).toBe(false);
  });

  it('takes X-Execution-Mode: async as async, and callbackUrl never as a workflow input', async () => {
    const path = newPath('header');
    // The original API's form: the inputs are the body itself; callbackUrl steers the call.
    const res = await execute(
      greet,
      { name: 'Fa', callbackUrl: `${base}${path}` },
      { 'X-Execution-Mode': 'async' },
    );
    expect(res.status).toBe(202);
    const [call] = await receivedAt(path);
    expect(JSON.parse(call?.body ?? '')).toMatchObject({ status: 'completed', output: { hello: 'Fa' } });
    const row = await svc.db.query<{ inputs: unknown }>('select inputs from executions where id = $1', [
      res.body.taskId,
    ]);
    expect(row[0]?.inputs).toEqual({ name: 'Fa' });
  });

  it('answers 400 for a callback on a sync execution, and runs nothing', async () => {
    const before = await executionCount(svc);
    const res = await execute(greet, { inputs: { name: 'Ada' }, callbackUrl: `${base}/sync` });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'Invalid request',
      details: [{ code: 'custom', path: ['callbackUrl'], message: expect.stringMatching(/async/) }],
    });
    expect(await executionCount(svc)).toBe(before);
  });

  it.each([
    ['not a URL', 'not a url'],
    ['a relative URL', '/hooks/done'],
    ['another scheme', 'ftp://example.com/done'],
    ['credentials', 'https://user:pass@example.com/done'],
    ['over 2048 characters', `https://example.com/${'a'.repeat(2048)}`],
    ['an empty string', ''],
    ['a number', 42],
    ['null', null],
  ])('answers 400 for a callbackUrl that is %s, and runs nothing', async (_, callbackUrl) => {
    const before = await executionCount(svc);
    const res = await execute(greet, { inputs: { name: 'Ada' }, async: true, callbackUrl });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Invalid request body');
    expect(res.body.details).toEqual([expect.objectContaining({ path: ['callbackUrl'] })]);
    expect(await executionCount(svc)).toBe(before);
  });

  it('still refuses internal addresses the allow-list does not name', async () => {
    for (const host of ['127.0.0.2', '10.0.0.5', '[::1]']) {
      const res = await execute(greet, {
        inputs: { name: 'Ada' },
        async: true,
        callbackUrl: `http://${host}/x`,
      });
      expect(res.status, host).toBe(400);
    }
  });
});

describe('with the default SSRF rules (no allow-list)', () => {
  let svc: TestService;
  let tenant: Tenant;
  let greet: string;

  beforeAll(async () => {
    svc = await startTestService({ CALLBACK_RETRY_LIMIT: '0' }, { runner: true });
    tenant = await createTenant(svc.admin, { plan: 'enterprise' });
    greet = await deployWorkflow(svc.admin, tenant.workspace.id, GREET);
  });
  afterAll(() => svc.close());

  it.each([
    ['loopback', 'http://127.0.0.1:9/x', 'loopback'],
    ['loopback written as a number', 'http://2130706433/x', 'loopback'],
    ['private', 'http://10.1.2.3/x', 'private'],
    ['cloud metadata', 'http://169.254.169.254/latest/meta-data/', 'link-local'],
    ['IPv6 loopback', 'http://[::1]:8080/x', 'loopback'],
    ['IPv4-mapped IPv6 private', 'https://[::ffff:192.168.1.1]/x', 'private'],
  ])('answers 400 at execute time for a %s address, and runs nothing', async (_, callbackUrl, reason) => {
    const before = await executionCount(svc);
    const res = await svc.call('POST', `/api/workflows/${greet}/execute`, {
      key: tenant.key,
      body: { inputs: { name: 'Ada' }, async: true, callbackUrl },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'Invalid request',
      details: [
        {
          code: 'custom',
          path: ['callbackUrl'],
          message: expect.stringContaining(`${reason} addresses are not allowed`),
        },
      ],
    });
    expect(await executionCount(svc)).toBe(before);
  });

  it('refuses a host name that resolves to loopback at delivery, without connecting, and records it', async () => {
    const path = newPath('rebind');
    const callbackUrl = `http://localhost:${port}${path}`;
    const res = await svc.call('POST', `/api/workflows/${greet}/execute`, {
      key: tenant.key,
      body: { inputs: { name: 'Ada' }, async: true, callbackUrl },
    });
    expect(res.status).toBe(202);
    const deliveries = await until(async () => {
      const d = await svc.admin.callbacks.deliveries.query({ executionId: res.body.taskId });
      return d.status === 'pending' ? undefined : d;
    }, 'the refused callback to settle');
    // CALLBACK_RETRY_LIMIT 0: one attempt, then given up.
    expect(deliveries).toMatchObject({
      status: 'given_up',
      attempts: [
        {
          attempt: 1,
          statusCode: null,
          error: expect.stringMatching(
            /refused to connect to localhost .*loopback addresses are not allowed/,
          ),
          delivered: false,
          gaveUp: true,
        },
      ],
    });
    expect(received.some((r) => r.path === path)).toBe(false);
    // The execution itself is unaffected by its callback.
    const job = await pollJob(svc.call, tenant.key, res.body.taskId);
    expect(job.body.status).toBe('completed');
  });
});

async function executionCount(svc: TestService): Promise<number> {
  const [row] = await svc.db.query<{ n: number }>('select count(*)::int as n from executions');
  return row?.n ?? 0;
}
