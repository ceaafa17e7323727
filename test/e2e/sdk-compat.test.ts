// The published TypeScript client, `simstudio-ts-sdk`, used unchanged against this server on a real
// port with the real queue and runner: executeWorkflow sync and async (its `X-Execution-Mode` header
// and its body, the inputs themselves), getJobStatus until the job completes, getUsageLimits, the
// rate-limit figures it reads from our headers, executeWithRetry through a 429 (honouring our
// Retry-After), and the SimStudioError it raises for what we refuse.
import { type RateLimitInfo, SimStudioClient, SimStudioError } from 'simstudio-ts-sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Listening, listen } from '../../http/serve.ts';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';
import { deployWorkflow } from '../helpers/workflows.ts';

let svc: TestService;
let server: Listening;
let tenant: Tenant;
let client: SimStudioClient;
let greeting: string;
// The API's clock (rate-limit refills, billing periods): still unless a test moves it, so a bucket
// refills exactly when the test says time has passed.
let now = new Date();
const clock = () => now;

const GREETING = {
  inputs: { name: { type: 'string', required: true } },
  blocks: [
    { id: 'greet', type: 'function', code: 'return { message: "Hello, " + inputs.name + "!" }' },
    { id: 'done', type: 'response', data: { message: '<greet.message>' } },
  ],
  edges: [{ from: 'greet', to: 'done' }],
};

beforeAll(async () => {
  svc = await startTestService({}, { runner: true, clock });
  server = await listen(svc.app, 0, '127.0.0.1');
  tenant = await createTenant(svc.admin);
  greeting = await deployWorkflow(svc.admin, tenant.workspace.id, GREETING);
  // A trailing slash, as users paste base URLs: the client trims it.
  client = new SimStudioClient({ apiKey: tenant.key, baseUrl: `${server.url}/` });
});
afterAll(async () => {
  await server?.close();
  await svc?.close();
});

/** Awaits a call that must fail with the client's error type, and returns that error. */
async function sdkError(call: Promise<unknown>): Promise<SimStudioError> {
  const err = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SimStudioError);
  return err as SimStudioError;
}

/** Polls through the client until the job is completed or failed (the runner works meanwhile). */
async function untilFinished(c: SimStudioClient, taskId: string) {
  for (let i = 0; i < 400; i++) {
    const job = await c.getJobStatus(taskId);
    if (job.status === 'completed' || job.status === 'failed') return job;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`job ${taskId} did not finish`);
}

describe('executeWorkflow', () => {
  it('runs a workflow synchronously, with the inputs as the body', async () => {
    const result = await client.executeWorkflow(greeting, { name: 'Ada' });
    expect(result).toMatchObject({ success: true, output: { message: 'Hello, Ada!' } });
    const sync = await client.executeWorkflowSync(greeting, { name: 'Grace' });
    expect(sync).toMatchObject({ success: true, output: { message: 'Hello, Grace!' } });
  });

  it('reads the rate-limit figures of our headers', async () => {
    await client.executeWorkflow(greeting, { name: 'Limits' });
    const info = client.getRateLimitInfo() as RateLimitInfo;
    // The free plan's sync rate; the bucket holds twice that, less what this file has used.
    expect(info.limit).toBe(50);
    expect(info.remaining).toBeGreaterThan(0);
    expect(info.remaining).toBeLessThan(100);
    expect(info.reset).toBeGreaterThanOrEqual(Math.floor(now.getTime() / 1000));
    expect(info.retryAfter).toBeUndefined();
  });

  it('runs asynchronously with X-Execution-Mode: async, and getJobStatus follows the job to its output', async () => {
    const ack = await client.executeWorkflow(greeting, { name: 'Async' }, { async: true });
    expect(ack).toMatchObject({
      success: true,
      status: 'queued',
      taskId: expect.any(String),
      createdAt: expect.any(String),
    });
    const { taskId, links } = ack as { taskId: string; links: { status: string } };
    expect(links.status).toBe(`/api/jobs/${taskId}`);
    const job = await untilFinished(client, taskId);
    expect(job).toMatchObject({
      success: true,
      taskId,
      status: 'completed',
      output: { message: 'Hello, Async!' },
      metadata: { startTime: expect.any(String) },
    });
  });

  it('reports a failed run as success: false with its error, not as an exception', async () => {
    const failing = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [{ id: 'boom', type: 'function', code: 'throw new Error("kaput")' }],
    });
    const result = await client.executeWorkflow(failing, {});
    expect(result.success).toBe(false);
    expect((result as { error?: string }).error).toMatch(/kaput/);
  });
});

describe('errors the client raises', () => {
  it('an unknown workflow: SimStudioError with status 404', async () => {
    const err = await sdkError(client.executeWorkflow(crypto.randomUUID(), { name: 'x' }));
    expect(err.status).toBe(404);
    expect(err.message).toMatch(/not found/i);
  });

  it('an unknown job, or another tenant’s: 404', async () => {
    expect((await sdkError(client.getJobStatus(crypto.randomUUID()))).status).toBe(404);
    const ack = (await client.executeWorkflow(greeting, { name: 'Mine' }, { async: true })) as {
      taskId: string;
    };
    const other = await createTenant(svc.admin);
    const stranger = new SimStudioClient({ apiKey: other.key, baseUrl: server.url });
    expect((await sdkError(stranger.getJobStatus(ack.taskId))).status).toBe(404);
  });

  it('a key we do not know: 401', async () => {
    const anonymous = new SimStudioClient({
      apiKey: 'sk-service-unknownunknownunknown',
      baseUrl: server.url,
    });
    expect((await sdkError(anonymous.executeWorkflow(greeting, { name: 'x' }))).status).toBe(401);
    expect((await sdkError(anonymous.getUsageLimits())).status).toBe(401);
  });

  it('inputs that do not fit the workflow: 400 with our message', async () => {
    const missing = await sdkError(client.executeWorkflow(greeting, {}));
    expect(missing.status).toBe(400);
    expect(missing.message).toBe('Invalid workflow inputs');
    // A primitive travels as {input: …}, which must be an object of inputs.
    expect((await sdkError(client.executeWorkflow(greeting, 'just text'))).status).toBe(400);
  });
});

describe('getUsageLimits', () => {
  it('answers the shape the client declares, with this period’s spend', async () => {
    const limits = await client.getUsageLimits();
    expect(limits).toMatchObject({
      success: true,
      rateLimit: {
        sync: { isLimited: false, limit: 50, remaining: expect.any(Number), resetAt: expect.any(String) },
        async: { isLimited: false, limit: 200, remaining: expect.any(Number), resetAt: expect.any(String) },
        authType: expect.any(String),
      },
      usage: { limit: expect.any(Number), plan: 'free' },
    });
    expect(Number.isNaN(Date.parse(limits.rateLimit.sync.resetAt))).toBe(false);
    // The runs above cost $0.005 each.
    expect(limits.usage.currentPeriodCost).toBeGreaterThan(0);
  });
});

describe('executeWithRetry', () => {
  it('gets a 429 with Retry-After, waits that long, and then succeeds', async () => {
    // A bucket of one token refilled every second: once it is spent, Retry-After is 1 s. The API's
    // clock stands still, so it stays spent until the client has waited what we told it to.
    const limited = await createTenant(svc.admin);
    await svc.admin.quotas.set.mutate({
      orgId: limited.org.id,
      sync: { requestsPerMinute: 60, maxBurst: 1 },
    });
    const workflow = await deployWorkflow(svc.admin, limited.workspace.id, GREETING);
    const c = new SimStudioClient({ apiKey: limited.key, baseUrl: server.url });
    expect(await c.executeWorkflow(workflow, { name: 'first' })).toMatchObject({ success: true });

    // Watch each attempt the client makes and the rate-limit figures it read from that answer; while
    // the client waits out a 429, the API's clock moves on by the Retry-After it was given.
    const attempts: { outcome: unknown; info: RateLimitInfo | null }[] = [];
    const attempt = c.executeWorkflow.bind(c);
    vi.spyOn(c, 'executeWorkflow').mockImplementation(async (...args) => {
      try {
        const result = await attempt(...args);
        attempts.push({ outcome: result, info: c.getRateLimitInfo() });
        return result;
      } catch (err) {
        const info = c.getRateLimitInfo();
        attempts.push({ outcome: err, info });
        now = new Date(now.getTime() + (info?.retryAfter ?? 0));
        throw err;
      }
    });

    const result = await c.executeWithRetry(workflow, { name: 'Retry' }, {}, { maxRetries: 3 });
    expect(result).toMatchObject({ success: true, output: { message: 'Hello, Retry!' } });

    const first = attempts[0];
    expect(first?.outcome).toBeInstanceOf(SimStudioError);
    expect(first?.outcome).toMatchObject({
      status: 429,
      code: 'RATE_LIMIT_EXCEEDED',
      message: 'Rate limit exceeded. Retry after 1000ms',
    });
    // Our Retry-After (1 s) became the client's wait; the figures came from our headers.
    expect(first?.info).toMatchObject({ limit: 60, remaining: 0, retryAfter: 1000 });
    expect(attempts).toHaveLength(2);
    expect(attempts[1]?.outcome).toMatchObject({ success: true });
  });

  it('does not retry what is not a rate limit', async () => {
    const c = new SimStudioClient({ apiKey: tenant.key, baseUrl: server.url });
    const spy = vi.spyOn(c, 'executeWorkflow');
    const err = await sdkError(c.executeWithRetry(crypto.randomUUID(), { name: 'x' }));
    expect(err.status).toBe(404);
    expect(spy).toHaveBeenCalledTimes(1);
  });
});
