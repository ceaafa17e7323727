// Executing workflows through the public API and the real queue: sync and async, job states, input
// validation, access rules, and the block types end to end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';
import { deployWorkflow, pollJob } from '../helpers/workflows.ts';

let svc: TestService;
let tenant: Tenant;
let greeting: string;

const GREETING = {
  inputs: { name: { type: 'string', required: true }, n: { type: 'number', default: 2 } },
  blocks: [
    { id: 'greet', type: 'function', code: 'return { message: `Hello, ${inputs.name}!`, n: inputs.n }' },
    {
      id: 'check',
      type: 'condition',
      branches: [{ id: 'long', if: '<greet.message>.length > 12' }, { id: 'short' }],
    },
    {
      id: 'done',
      type: 'response',
      data: { message: '<greet.message>', size: '<check.selected>', n: '<greet.n>' },
    },
  ],
  edges: [
    { from: 'greet', to: 'check' },
    { from: 'check', to: 'done', branch: 'long' },
    { from: 'check', to: 'done', branch: 'short' },
  ],
};

beforeAll(async () => {
  svc = await startTestService({}, { runner: true });
  tenant = await createTenant(svc.admin);
  greeting = await deployWorkflow(svc.admin, tenant.workspace.id, GREETING);
});
afterAll(() => svc.close());

const execute = (id: string, body: unknown, key = tenant.key, headers: Record<string, string> = {}) =>
  svc.call('POST', `/api/workflows/${id}/execute`, { key, body, headers });
const run = async (definition: unknown, inputs: Record<string, unknown> = {}) =>
  execute(await deployWorkflow(svc.admin, tenant.workspace.id, definition), { inputs });

describe('sync execution', () => {
  it('runs the deployed workflow and answers {success, output, limits}', async () => {
    const res = await execute(greeting, { inputs: { name: 'Ada' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      output: { message: 'Hello, Ada!', size: 'short', n: 2 },
    });
    expect(res.body.executionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.limits).toMatchObject({
      workflowExecutionRateLimit: {
        sync: {
          requestsPerMinute: expect.any(Number),
          maxBurst: expect.any(Number),
          remaining: expect.any(Number),
          resetAt: expect.any(String),
        },
        async: {
          requestsPerMinute: expect.any(Number),
          maxBurst: expect.any(Number),
          remaining: expect.any(Number),
          resetAt: expect.any(String),
        },
      },
      usage: { currentPeriodCost: 0, limit: expect.any(Number), plan: 'free', isExceeded: false },
    });
    expect(res.body.metadata).toMatchObject({
      duration: expect.any(Number),
      startTime: expect.any(String),
      endTime: expect.any(String),
    });
  });

  it('takes the branch the condition selects', async () => {
    const res = await execute(greeting, { inputs: { name: 'Bartholomew' } });
    expect(res.body.output.size).toBe('long');
  });

  it('accepts the inputs as the body itself or as {input}, for clients of the original API', async () => {
    expect((await execute(greeting, { name: 'Body' })).body.output.message).toBe('Hello, Body!');
    expect((await execute(greeting, { input: { name: 'Input' } })).body.output.message).toBe('Hello, Input!');
  });

  it('answers a failed run with success: false and its error', async () => {
    const res = await run({ blocks: [{ id: 'boom', type: 'function', code: 'throw new Error("kaput")' }] });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(false);
    expect(res.body.error).toMatch(/Block "boom" failed: .*kaput/);
  });

  it('has completed the queue job by the time the answer comes, whatever the outcome', async () => {
    // The end of an execution and its job's completion commit together: the notice that wakes the
    // waiting request is sent by that commit, so no answered execution has a job still active.
    const failing = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [{ id: 'boom', type: 'function', code: 'throw new Error("kaput")' }],
    });
    const answers = await Promise.all([
      ...Array.from({ length: 6 }, (_, i) => execute(greeting, { inputs: { name: `Ada ${i}` } })),
      ...Array.from({ length: 3 }, () => execute(failing, { inputs: {} })),
    ]);
    expect(answers.map((a) => a.body.success)).toEqual([...Array(6).fill(true), ...Array(3).fill(false)]);
    const jobs = await svc.db.query<{ state: string }>(
      'select state from pgboss.job where name = $1 and id = any($2::uuid[])',
      ['workflow-execute', answers.map((a) => a.body.executionId)],
    );
    expect(jobs.map((j) => j.state)).toEqual(Array(9).fill('completed'));
  });

  it('answers an output too large to travel in the completion notice', async () => {
    const res = await run({ blocks: [{ id: 'big', type: 'function', code: 'return "x".repeat(50000)' }] });
    expect(res.body.success).toBe(true);
    expect(res.body.output.big).toHaveLength(50_000);
  });

  it('runs the deployed version, never the draft', async () => {
    const id = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [{ id: 'r', type: 'response', data: 'v1' }],
    });
    await svc.admin.workflows.update.mutate({
      id,
      definition: { blocks: [{ id: 'r', type: 'response', data: 'draft' }] },
    });
    expect((await execute(id, {})).body.output).toBe('v1');
  });
});

describe('async execution and jobs', () => {
  it('answers 202 with a queued job, which completes with its output', async () => {
    const res = await execute(greeting, { inputs: { name: 'Async' }, async: true });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      success: true,
      status: 'queued',
      taskId: expect.any(String),
      links: { status: `/api/jobs/${res.body.taskId}` },
    });
    const job = await pollJob(svc.call, tenant.key, res.body.taskId);
    expect(job.status).toBe(200);
    expect(job.body).toMatchObject({
      success: true,
      taskId: res.body.taskId,
      status: 'completed',
      output: { message: 'Hello, Async!' },
    });
    expect(job.body.metadata.startTime).toEqual(expect.any(String));
  });

  it('honours X-Execution-Mode: async', async () => {
    const res = await execute(greeting, { name: 'Header' }, tenant.key, { 'X-Execution-Mode': 'async' });
    expect(res.status).toBe(202);
    expect((await pollJob(svc.call, tenant.key, res.body.taskId)).body.output.message).toBe('Hello, Header!');
  });

  it('reports a failed job with its error and no output', async () => {
    const id = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [{ id: 'boom', type: 'function', code: 'throw new Error("nope")' }],
    });
    const res = await execute(id, { async: true });
    const job = await pollJob(svc.call, tenant.key, res.body.taskId);
    expect(job.body.status).toBe('failed');
    expect(job.body.error).toMatch(/nope/);
    expect(job.body).not.toHaveProperty('output');
  });

  it('answers 404 {error} for an unknown, malformed or unreachable job', async () => {
    const res = await execute(greeting, { inputs: { name: 'Mine' }, async: true });
    const other = await createTenant(svc.admin);
    for (const [id, key] of [
      [crypto.randomUUID(), tenant.key],
      ['not-a-uuid', tenant.key],
      [res.body.taskId, other.key],
    ] as const) {
      const job = await svc.call('GET', `/api/jobs/${id}`, { key });
      expect(job.status).toBe(404);
      expect(job.body).toEqual({ error: expect.any(String) });
    }
  });
});

describe('refusals', () => {
  it('validates inputs against the declared inputs (400 with details), running nothing', async () => {
    const missing = await execute(greeting, { inputs: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.details).toEqual([expect.objectContaining({ path: ['inputs', 'name'] })]);
    const wrongType = await execute(greeting, { inputs: { name: 42 } });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.details[0].message).toMatch(/Expected string, received number/);
  });

  it('answers 400 for a malformed id, 404 for an unknown one or another workspace', async () => {
    expect((await execute('nope', {})).status).toBe(400);
    expect((await execute(crypto.randomUUID(), {})).status).toBe(404);
    const other = await createTenant(svc.admin);
    const res = await execute(greeting, { inputs: { name: 'x' } }, other.key);
    expect(res.status).toBe(404);
    expect(JSON.stringify(res.body)).not.toContain('Hello');
  });

  it('answers 400 with a clear message for a workflow that is not deployed', async () => {
    const wf = await svc.admin.workflows.create.mutate({
      workspaceId: tenant.workspace.id,
      name: 'draft',
      definition: { blocks: [{ id: 'r', type: 'response', data: 1 }] },
    });
    const res = await execute(wf.id, {});
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/not deployed/);
  });

  it('lets a workspace key execute in its workspace', async () => {
    const { key } = await svc.admin.keys.create.mutate({
      type: 'workspace',
      workspaceId: tenant.workspace.id,
      name: 'ci',
    });
    expect((await execute(greeting, { inputs: { name: 'Key' } }, key)).body.output.message).toBe(
      'Hello, Key!',
    );
  });

  it('refuses a read-only member with 403', async () => {
    const user = await svc.admin.users.create.mutate({
      name: 'Reader',
      email: `reader-${Date.now()}@example.com`,
    });
    await svc.admin.members.add.mutate({ orgId: tenant.org.id, userId: user.id, role: 'member' });
    await svc.admin.workspaces.grant.mutate({
      workspaceId: tenant.workspace.id,
      userId: user.id,
      permission: 'read',
    });
    const { key } = await svc.admin.keys.create.mutate({ type: 'personal', userId: user.id, name: 'r' });
    expect((await execute(greeting, { inputs: { name: 'x' } }, key)).status).toBe(403);
  });
});

describe('blocks end to end', () => {
  it('uses workspace secrets as {{NAME}}', async () => {
    await svc.admin.secrets.set.mutate({
      workspaceId: tenant.workspace.id,
      name: 'GREETING',
      value: 'Howdy',
    });
    const res = await run({
      blocks: [
        { id: 'f', type: 'function', code: 'return {{GREETING}}.toUpperCase()' },
        { id: 'r', type: 'response', data: { plain: '{{GREETING}}, partner', computed: '<f>' } },
      ],
      edges: [{ from: 'f', to: 'r' }],
    });
    expect(res.body.output).toEqual({ plain: 'Howdy, partner', computed: 'HOWDY' });
  });

  it('fails clearly on a secret that is not set', async () => {
    const res = await run({ blocks: [{ id: 'r', type: 'response', data: '{{MISSING_ONE}}' }] });
    expect(res.body.success).toBe(false);
    expect(res.body.error).toMatch(/Secret \{\{MISSING_ONE\}\} is not set/);
  });

  it('routes a failure down an error edge instead of failing the run', async () => {
    const res = await run({
      blocks: [
        { id: 'risky', type: 'function', code: 'throw new Error("bad input")' },
        { id: 'ok', type: 'response', data: 'fine' },
        { id: 'handled', type: 'response', data: { caught: '<risky.error>' } },
      ],
      edges: [
        { from: 'risky', to: 'ok' },
        { from: 'risky', to: 'handled', branch: 'error' },
      ],
    });
    expect(res.body).toMatchObject({
      success: true,
      output: { caught: expect.stringContaining('bad input') },
    });
  });

  it('loops over an array and counts, with <loop.item> and <loop.index>', async () => {
    const res = await run(
      {
        inputs: { items: { type: 'array' } },
        blocks: [
          {
            id: 'each',
            type: 'loop',
            forEach: '<start.items>',
            blocks: [{ id: 'double', type: 'function', code: 'return <loop.item> * 2 + <loop.index>' }],
          },
          { id: 'r', type: 'response', data: '<each.results>' },
        ],
        edges: [{ from: 'each', to: 'r' }],
      },
      { items: [1, 2, 3] },
    );
    expect(res.body.output).toEqual([{ double: 2 }, { double: 5 }, { double: 8 }]);
  });

  it('runs parallel bodies with bounded concurrency, keeping item order', async () => {
    const res = await run({
      blocks: [
        {
          id: 'fan',
          type: 'parallel',
          count: 6,
          concurrency: 2,
          blocks: [
            {
              id: 'slow',
              type: 'function',
              code: 'await new Promise(r => setTimeout(r, (6 - loop.index) * 5)); return loop.index',
            },
          ],
        },
      ],
    });
    expect(res.body.output).toEqual({ fan: { results: [0, 1, 2, 3, 4, 5].map((i) => ({ slow: i })) } });
  });

  it('runs independent blocks concurrently and joins them', async () => {
    const res = await run({
      blocks: [
        { id: 'a', type: 'wait', ms: 150 },
        { id: 'b', type: 'wait', ms: 150 },
        { id: 'join', type: 'response', data: { a: '<a.waitedMs>', b: '<b.waitedMs>' } },
      ],
      edges: [
        { from: 'a', to: 'join' },
        { from: 'b', to: 'join' },
      ],
    });
    expect(res.body.output).toEqual({ a: 150, b: 150 });
    // Run one after the other they would take 300 ms; the two spans overlap in time instead.
    const [row] = await svc.db.query<{ trace: { blockId: string; startedAt: string; endedAt: string }[] }>(
      'select trace from executions where id = $1',
      [res.body.executionId],
    );
    const span = (id: string) => row?.trace.find((s) => s.blockId === id);
    expect(Date.parse(span('a')?.startedAt as string)).toBeLessThan(Date.parse(span('b')?.endedAt as string));
    expect(Date.parse(span('b')?.startedAt as string)).toBeLessThan(Date.parse(span('a')?.endedAt as string));
  });

  it('runs a child workflow and refuses endless recursion', async () => {
    const child = await deployWorkflow(svc.admin, tenant.workspace.id, {
      inputs: { x: { type: 'number', required: true } },
      blocks: [{ id: 'sq', type: 'function', code: 'return inputs.x * inputs.x' }],
    });
    const res = await run({
      blocks: [{ id: 'call', type: 'workflow', workflowId: child, inputs: { x: 7 } }],
    });
    expect(res.body.output).toEqual({ call: { sq: 49 } });

    const selfCalling = await svc.admin.workflows.create.mutate({
      workspaceId: tenant.workspace.id,
      name: 'recursive',
      definition: { blocks: [{ id: 'r', type: 'response', data: 1 }] },
    });
    await svc.admin.workflows.update.mutate({
      id: selfCalling.id,
      definition: { blocks: [{ id: 'again', type: 'workflow', workflowId: selfCalling.id }] },
    });
    await svc.admin.workflows.deploy.mutate({ id: selfCalling.id });
    const loop = await execute(selfCalling.id, {});
    expect(loop.body.success).toBe(false);
    expect(loop.body.error).toMatch(/nest deeper than 5/);
  });

  const spanErrors = async (executionId: string) => {
    const [row] = await svc.db.query<{ trace: { blockId: string; error?: string }[] }>(
      'select trace from executions where id = $1',
      [executionId],
    );
    return Object.fromEntries((row?.trace ?? []).map((s) => [s.blockId, s.error]));
  };

  it('stops a workflow at its time limit, and says so in the span it cut short', async () => {
    const res = await run({ timeoutMs: 200, blocks: [{ id: 'w', type: 'wait', ms: 5000 }] });
    expect(res.body.success).toBe(false);
    expect(res.body.error).toMatch(/timed out after 200 ms/);
    expect(await spanErrors(res.body.executionId)).toEqual({ w: 'Stopped: the workflow timed out' });
  });

  it('stops the blocks still running when another block fails, inside a loop and beside one', async () => {
    const res = await run({
      blocks: [
        { id: 'slow', type: 'wait', ms: 5000 },
        { id: 'bad', type: 'function', code: 'throw new Error("boom")' },
      ],
    });
    expect(res.body).toMatchObject({ success: false, error: expect.stringMatching(/"bad" failed: .*boom/) });
    expect(await spanErrors(res.body.executionId)).toMatchObject({ slow: 'Stopped: another block failed' });

    const looped = await run({
      blocks: [
        {
          id: 'each',
          type: 'loop',
          count: 2,
          blocks: [
            { id: 'slow', type: 'wait', ms: 5000 },
            { id: 'bad', type: 'function', code: 'throw new Error("inner")' },
          ],
        },
      ],
    });
    expect(looped.body).toMatchObject({ success: false, error: expect.stringMatching(/inner/) });
    expect(await spanErrors(looped.body.executionId)).toMatchObject({
      slow: 'Stopped: another block failed',
    });

    // A failure beside a loop stops the loop's body too.
    const beside = await run({
      blocks: [
        { id: 'each', type: 'loop', count: 2, blocks: [{ id: 'slow', type: 'wait', ms: 5000 }] },
        { id: 'bad', type: 'function', code: 'throw new Error("outer")' },
      ],
    });
    expect(beside.body).toMatchObject({
      success: false,
      error: expect.stringMatching(/"bad" failed: .*outer/),
    });
    expect(await spanErrors(beside.body.executionId)).toMatchObject({
      slow: 'Stopped: another block failed',
      each: 'Stopped: another block failed',
    });
  });

  it('keeps a trace span per block with timing, input, output and error', async () => {
    const res = await execute(greeting, { inputs: { name: 'Trace' } });
    const [row] = await svc.db.query<{ trace: Record<string, unknown>[] }>(
      'select trace from executions where id = $1',
      [res.body.executionId],
    );
    expect(row?.trace.map((s) => s.blockId).sort()).toEqual(['check', 'done', 'greet']);
    for (const span of row?.trace ?? []) {
      expect(span).toMatchObject({
        status: 'success',
        startedAt: expect.any(String),
        endedAt: expect.any(String),
        durationMs: expect.any(Number),
      });
    }
    expect(row?.trace.find((s) => s.blockId === 'greet')?.output).toEqual({ message: 'Hello, Trace!', n: 2 });
  });
});
