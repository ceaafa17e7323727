// Inbound webhooks through the public API and the real queue: POST /api/webhooks/{token} runs the
// workflow with the body as inputs (trigger `webhook`), async (202 and a job) or sync (the result);
// HMAC-SHA256 signatures (plain body, GitHub's header, timestamped) are checked before anything
// runs; bad bodies, unknown or deleted tokens, undeployed workflows and the limits are refused with
// the statuses the OpenAPI document names; the token never reaches the database or a log line.
import { createHash, createHmac } from 'node:crypto';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../api/openapi/document.ts';
import { startApi } from '../../api/start.ts';
import { createLogger } from '../../logger.ts';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';
import { deployWorkflow, pollJob } from '../helpers/workflows.ts';

let svc: TestService;
let tenant: Tenant;
let greet: string;

// Time stands still for the API: rate-limit buckets never refill, timestamps are judged against NOW.
const NOW = new Date();
const NOW_SECONDS = Math.floor(NOW.getTime() / 1000);
const SECRET = 'whsec-0123456789abcdef';

const GREET = {
  inputs: { name: { type: 'string', required: true }, n: { type: 'number', default: 2 } },
  blocks: [
    { id: 'greet', type: 'function', code: 'return { message: `Hello, ${inputs.name}!`, n: inputs.n }' },
    { id: 'done', type: 'response', data: { message: '<greet.message>', n: '<greet.n>' } },
  ],
  edges: [{ from: 'greet', to: 'done' }],
};
// Echoes whatever inputs it got: no declared inputs, so any object passes.
const ECHO = {
  blocks: [
    { id: 'echo', type: 'function', code: 'return { got: inputs }' },
    { id: 'done', type: 'response', data: { got: '<echo.got>' } },
  ],
  edges: [{ from: 'echo', to: 'done' }],
};
const BOOM = { blocks: [{ id: 'boom', type: 'function', code: 'throw new Error("boom")' }], edges: [] };

beforeAll(async () => {
  svc = await startTestService({}, { runner: true, clock: () => NOW });
  tenant = await createTenant(svc.admin, { plan: 'enterprise' });
  greet = await deployWorkflow(svc.admin, tenant.workspace.id, GREET, 'greet');
  loadDocument();
});
afterAll(() => svc.close());

interface Answer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
  body: any;
}

/** POSTs a raw body to a webhook URL: no API key, the content type given (JSON unless said). */
async function post(
  url: string,
  body: string | undefined,
  headers: Record<string, string> = {},
  app = svc.app,
): Promise<Answer> {
  const res = await app.request(`http://api.test${url}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    ...(body !== undefined ? { body } : {}),
  });
  const text = await res.text();
  const answer = { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
  expectDocumented(answer);
  return answer;
}

// CommonJS modules: their default export is the module object under some loaders, the class under others.
type AjvClass = typeof Ajv2020Module.default;
const Ajv2020 = ((Ajv2020Module as unknown as { default?: AjvClass }).default ?? Ajv2020Module) as AjvClass;
type AddFormats = typeof addFormatsModule.default;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ??
  addFormatsModule) as AddFormats;

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
/** Loads the app's document, its object schemas closed so an undocumented field fails validation. */
function loadDocument() {
  ajv.addSchema(
    JSON.parse(JSON.stringify(openApiDocument(svc.app)), (_k, v) =>
      v && v.type === 'object' && v.properties && v.additionalProperties === undefined
        ? { ...v, additionalProperties: false }
        : v,
    ),
    'openapi.json',
  );
}
const OPERATION = 'openapi.json#/paths/~1api~1webhooks~1{token}/post/responses';

/** Every answer's status is one the document lists for the operation, and its body fits that answer. */
function expectDocumented(res: Answer) {
  const validate = ajv.getSchema(`${OPERATION}/${res.status}/content/application~1json/schema`);
  expect(validate, `status ${res.status} documented: ${JSON.stringify(res.body)}`).toBeDefined();
  expect(validate?.(res.body), JSON.stringify(validate?.errors)).toBe(true);
}

const sign = (secret: string, payload: string) =>
  `sha256=${createHmac('sha256', secret).update(payload).digest('hex')}`;

async function webhook(workflowId: string, options: { secret?: string; mode?: 'async' | 'sync' } = {}) {
  return svc.admin.webhooks.create.mutate({ workflowId, ...options });
}

const executionsOf = async (workflowId: string) =>
  svc.db.query<{ id: string; trigger: string; inputs: unknown; mode: string }>(
    'select id, trigger, inputs, mode from executions where workflow_id = $1 order by created_at',
    [workflowId],
  );

const newWorkflow = (definition: unknown, name = 'hooked') =>
  deployWorkflow(svc.admin, tenant.workspace.id, definition, name);

describe('async webhooks', () => {
  it('answers 202 with a job that completes with the body as inputs, trigger webhook in the logs', async () => {
    const hook = await webhook(greet);
    expect(hook.url).toBe(`/api/webhooks/${hook.token}`);
    const res = await post(hook.url, JSON.stringify({ name: 'Ada' }));
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      success: true,
      taskId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      status: 'queued',
      createdAt: expect.any(String),
      links: { status: `/api/jobs/${res.body.taskId}` },
      limits: expect.objectContaining({ workflowExecutionRateLimit: expect.any(Object) }),
    });
    for (const name of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'])
      expect(res.headers.get(name)).toMatch(/^\d+$/);

    // A key of the workspace reads the job.
    const job = await pollJob(svc.call, tenant.key, res.body.taskId);
    expect(job.body).toMatchObject({
      success: true,
      status: 'completed',
      output: { message: 'Hello, Ada!', n: 2 },
      metadata: { trigger: 'webhook', mode: 'async', workflowId: greet },
    });
    const logs = await svc.call('GET', '/api/v1/logs', {
      key: tenant.key,
      query: { workspaceId: tenant.workspace.id, triggers: 'webhook', executionId: res.body.taskId },
    });
    expect(logs.status).toBe(200);
    expect(logs.body.data).toHaveLength(1);
    expect(logs.body.data[0]).toMatchObject({ executionId: res.body.taskId, trigger: 'webhook' });

    // The audit log names the webhook as the actor of the execution.
    const audit = await svc.call('GET', '/api/v1/audit-logs', {
      key: tenant.key,
      query: { workspaceId: tenant.workspace.id, action: 'workflow.execute', resourceId: greet },
    });
    const entry = audit.body.data.find(
      (e: { metadata: { executionId?: string } }) => e.metadata.executionId === res.body.taskId,
    );
    expect(entry).toMatchObject({ actorId: null, actorName: `webhook ${hook.id}` });
    expect(entry.metadata).toMatchObject({ trigger: 'webhook', mode: 'async' });
  });

  it('needs no API key, and takes an empty body as no inputs', async () => {
    const echo = await newWorkflow(ECHO, 'echo');
    const hook = await webhook(echo);
    for (const body of [undefined, '', '  \n']) {
      const res = await post(hook.url, body);
      expect(res.status).toBe(202);
      const job = await pollJob(svc.call, tenant.key, res.body.taskId);
      expect(job.body.output).toEqual({ got: {} });
    }
  });

  it('takes form fields as string inputs (a repeated field as a list)', async () => {
    const echo = await newWorkflow(ECHO, 'echo form');
    const hook = await webhook(echo);
    const res = await post(
      hook.url,
      'name=Ada+Lovelace&n=3&tag=a&tag=b&note=%C3%A9t%C3%A9&__proto__=x&__proto__=y',
      {
        'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8',
      },
    );
    expect(res.status).toBe(202);
    const job = await pollJob(svc.call, tenant.key, res.body.taskId);
    expect(job.body.output).toEqual({
      got: JSON.parse('{"name":"Ada Lovelace","n":"3","tag":["a","b"],"note":"été","__proto__":["x","y"]}'),
    });
  });

  it('keeps JSON types and nested values in the inputs, whatever the content type says', async () => {
    const echo = await newWorkflow(ECHO, 'echo types');
    const hook = await webhook(echo);
    const event = { action: 'opened', issue: { number: 42, labels: ['bug'] }, draft: false, note: null };
    const res = await post(hook.url, JSON.stringify(event), { 'Content-Type': 'text/plain' });
    expect(res.status).toBe(202);
    expect((await pollJob(svc.call, tenant.key, res.body.taskId)).body.output).toEqual({ got: event });
  });
});

describe('sync webhooks', () => {
  it('answers the output, as a sync execute does', async () => {
    const hook = await webhook(greet, { mode: 'sync' });
    expect(hook.mode).toBe('sync');
    const res = await post(hook.url, JSON.stringify({ name: 'Grace', n: 5 }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      executionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      output: { message: 'Hello, Grace!', n: 5 },
      limits: expect.any(Object),
      metadata: { duration: expect.any(Number), startTime: expect.any(String), endTime: expect.any(String) },
    });
    const [row] = await svc.db.query<{ trigger: string; mode: string }>(
      'select trigger, mode from executions where id = $1',
      [res.body.executionId],
    );
    expect(row).toEqual({ trigger: 'webhook', mode: 'sync' });
  });

  it('answers a failed run with success false and its error', async () => {
    const hook = await webhook(await newWorkflow(BOOM, 'boom'), { mode: 'sync' });
    const res = await post(hook.url, '{}');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: false, error: expect.stringContaining('boom') });
  });
});

describe('signatures', () => {
  let workflowId: string;
  let url: string;
  beforeAll(async () => {
    workflowId = await newWorkflow(GREET, 'signed');
    url = (await webhook(workflowId, { secret: SECRET })).url;
  });

  it('runs a call signed over its raw body with X-Webhook-Signature', async () => {
    // The bytes as sent are signed: spacing and key order are the sender's.
    const body = '{ "name":"Ada",\n  "n": 7 }';
    const res = await post(url, body, { 'X-Webhook-Signature': sign(SECRET, body) });
    expect(res.status).toBe(202);
    const job = await pollJob(svc.call, tenant.key, res.body.taskId);
    expect(job.body.output).toEqual({ message: 'Hello, Ada!', n: 7 });
  });

  it("accepts GitHub's X-Hub-Signature-256, and hex in upper case", async () => {
    const body = JSON.stringify({ name: 'Octo' });
    const github = await post(url, body, { 'X-Hub-Signature-256': sign(SECRET, body) });
    expect(github.status).toBe(202);
    const upper = `sha256=${sign(SECRET, body).slice(7).toUpperCase()}`;
    expect((await post(url, body, { 'X-Webhook-Signature': upper })).status).toBe(202);
  });

  it('signs non-ASCII bodies as their UTF-8 bytes', async () => {
    const body = JSON.stringify({ name: 'Zoë 🚀' });
    const res = await post(url, body, {
      'X-Webhook-Signature': `sha256=${createHmac('sha256', SECRET).update(Buffer.from(body, 'utf8')).digest('hex')}`,
    });
    expect(res.status).toBe(202);
    expect((await pollJob(svc.call, tenant.key, res.body.taskId)).body.output.message).toBe('Hello, Zoë 🚀!');
  });

  it('refuses a missing or bad signature with 401, and runs nothing', async () => {
    const before = (await executionsOf(workflowId)).length;
    const body = JSON.stringify({ name: 'Mallory' });
    const missing = await post(url, body);
    expect(missing.status).toBe(401);
    expect(missing.body.error).toMatch(/^Missing signature: send X-Webhook-Signature: sha256=/);
    const cases: Record<string, string>[] = [
      { 'X-Webhook-Signature': sign('another-secret-0123456789', body) },
      { 'X-Webhook-Signature': sign(SECRET, `${body} `) },
      { 'X-Webhook-Signature': sign(SECRET, body).slice(7) },
      { 'X-Webhook-Signature': `sha1=${createHmac('sha1', SECRET).update(body).digest('hex')}` },
      { 'X-Webhook-Signature': `${sign(SECRET, body)}00` },
      { 'X-Webhook-Signature': 'sha256=' },
      { 'X-Webhook-Signature': '' },
      { 'X-Hub-Signature-256': 'sha256=zz' },
      // X-Webhook-Signature wins over the GitHub header when both are sent.
      { 'X-Webhook-Signature': sign('nope-nope-nope-nope', body), 'X-Hub-Signature-256': sign(SECRET, body) },
    ];
    for (const headers of cases) {
      const res = await post(url, body, headers);
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(res.body).toEqual({ error: 'Invalid signature' });
    }
    // A body signed for another webhook's secret, or a signature on a malformed body: still 401, not 400.
    expect((await post(url, '{oops', { 'X-Webhook-Signature': sign('x'.repeat(16), '{oops') })).status).toBe(
      401,
    );
    expect((await executionsOf(workflowId)).length).toBe(before);
  });

  it('checks the signature before the body: a signed malformed body is a 400', async () => {
    const res = await post(url, '{oops', { 'X-Webhook-Signature': sign(SECRET, '{oops') });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error:
        'Malformed JSON body: Unexpected token oops at line 1, column 2: expected a property name in double quotes',
    });
  });

  it('with X-Webhook-Timestamp, signs `${timestamp}.${body}` and refuses it outside 5 minutes', async () => {
    const before = (await executionsOf(workflowId)).length;
    const body = JSON.stringify({ name: 'Ada' });
    const at = (ts: number | string, payloadTs: number | string = ts) => ({
      'X-Webhook-Timestamp': String(ts),
      'X-Webhook-Signature': sign(SECRET, `${payloadTs}.${body}`),
    });
    expect((await post(url, body, at(NOW_SECONDS))).status).toBe(202);
    expect((await post(url, body, at(NOW_SECONDS - 299))).status).toBe(202);
    expect((await post(url, body, at(NOW_SECONDS + 299))).status).toBe(202);

    const old = await post(url, body, at(NOW_SECONDS - 301));
    expect(old.status).toBe(401);
    expect(old.body.error).toBe("X-Webhook-Timestamp is more than 5 minutes from the server's time");
    expect((await post(url, body, at(NOW_SECONDS + 301))).status).toBe(401);
    // A captured call replayed with a fresh timestamp fails: the signature covers the old one.
    const replayed = await post(url, body, at(NOW_SECONDS, NOW_SECONDS - 3600));
    expect(replayed.body).toEqual({ error: 'Invalid signature' });
    // Nor can the timestamp be dropped: a timestamped signature does not sign the body alone.
    const stripped = await post(url, body, { 'X-Webhook-Signature': sign(SECRET, `${NOW_SECONDS}.${body}`) });
    expect(stripped.body).toEqual({ error: 'Invalid signature' });
    // And a signature of the body alone does not pass with a timestamp added.
    const added = await post(url, body, {
      'X-Webhook-Timestamp': String(NOW_SECONDS),
      'X-Webhook-Signature': sign(SECRET, body),
    });
    expect(added.body).toEqual({ error: 'Invalid signature' });
    for (const ts of ['soon', '-5', '1.5', '', `${NOW_SECONDS}ms`]) {
      const res = await post(url, body, {
        'X-Webhook-Timestamp': ts,
        'X-Webhook-Signature': sign(SECRET, `${ts}.${body}`),
      });
      expect(res.status, ts).toBe(401);
      expect(res.body.error, ts).toBe('Invalid X-Webhook-Timestamp: send the time in Unix seconds');
    }
    expect((await executionsOf(workflowId)).length).toBe(before + 3);
  });

  it('needs no signature without a secret, and ignores one sent', async () => {
    const hook = await webhook(greet);
    expect(hook.signed).toBe(false);
    const body = JSON.stringify({ name: 'Ada' });
    expect((await post(hook.url, body, { 'X-Webhook-Signature': 'sha256=00' })).status).toBe(202);
  });
});

describe('refusals', () => {
  it('answers 404 for an unknown token, whatever its form', async () => {
    for (const token of ['nope', 'x'.repeat(43), 'A'.repeat(500), '%00', 'a.b']) {
      const res = await post(`/api/webhooks/${token}`, JSON.stringify({ name: 'Ada' }));
      expect(res.status, token).toBe(404);
      expect(res.body).toEqual({ error: 'Webhook not found' });
    }
  });

  it('answers 404 once the webhook is deleted, and for the old token once it is rotated', async () => {
    const hook = await webhook(greet);
    const body = JSON.stringify({ name: 'Ada' });
    expect((await post(hook.url, body)).status).toBe(202);
    const rotated = await svc.admin.webhooks.rotateToken.mutate({ id: hook.id });
    expect(rotated.token).not.toBe(hook.token);
    expect((await post(hook.url, body)).status).toBe(404);
    expect((await post(rotated.url, body)).status).toBe(202);
    await svc.admin.webhooks.delete.mutate({ id: hook.id });
    const gone = await post(rotated.url, body);
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ error: 'Webhook not found' });
  });

  it('refuses malformed and non-object JSON with 400, running nothing', async () => {
    const echo = await newWorkflow(ECHO, 'echo refusals');
    const hook = await webhook(echo);
    const malformed = await post(hook.url, '{"name": ');
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual({
      error: 'Malformed JSON body: Unexpected end of input at line 1, column 10: expected a value',
    });
    for (const body of ['[1,2]', '"Ada"', '42', 'null', 'true']) {
      const res = await post(hook.url, body);
      expect(res.status, body).toBe(400);
      expect(res.body.error).toBe('The body must be a JSON object of workflow inputs');
      expect(res.body.details).toEqual([expect.objectContaining({ code: 'invalid_type', path: [] })]);
    }
    expect(await executionsOf(echo)).toEqual([]);
  });

  it("refuses inputs that fail the workflow's declared inputs with 400 and details", async () => {
    const hook = await webhook(greet);
    const res = await post(hook.url, JSON.stringify({ name: 42 }));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Invalid workflow inputs');
    expect(res.body.details).toEqual([expect.objectContaining({ path: ['inputs', 'name'] })]);
    const missing = await post(hook.url, '{}');
    expect(missing.status).toBe(400);
    expect(missing.body.details).toEqual([expect.objectContaining({ path: ['inputs', 'name'] })]);
  });

  it('refuses a workflow that is not deployed with 400', async () => {
    const wf = await svc.admin.workflows.create.mutate({
      workspaceId: tenant.workspace.id,
      name: 'draft only',
      definition: ECHO,
    });
    const hook = await webhook(wf.id);
    const res = await post(hook.url, '{}');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Workflow is not deployed: deploy it before executing it' });
    // Deployed later, the same URL works.
    await svc.admin.workflows.deploy.mutate({ id: wf.id });
    expect((await post(hook.url, '{}')).status).toBe(202);
  });

  it('refuses multipart bodies with 415 and bodies over the JSON limit with 413', async () => {
    const hook = await webhook(greet);
    const form = new FormData();
    form.set('name', 'Ada');
    const res = await svc.app.request(`http://api.test${hook.url}`, { method: 'POST', body: form });
    expect(res.status).toBe(415);
    expectDocumented({ status: res.status, headers: res.headers, body: await res.json() });
    const big = JSON.stringify({ name: 'x'.repeat(10 * 1024 * 1024) });
    const tooBig = await post(hook.url, big);
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.error).toMatch(/^Request body over \d+ bytes$/);
  });

  it('refuses calls into an archived workspace with 403', async () => {
    const other = await createTenant(svc.admin);
    const wf = await deployWorkflow(svc.admin, other.workspace.id, ECHO);
    const hook = await webhook(wf);
    await svc.admin.workspaces.archive.mutate({ workspaceId: other.workspace.id });
    const res = await post(hook.url, '{}');
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'The workspace is archived' });
    expect(await executionsOf(wf)).toEqual([]);
  });
});

describe('limits', () => {
  it("draws from the workspace's async bucket: 429 with Retry-After past it, 402 past the spend limit", async () => {
    const limited = await createTenant(svc.admin);
    await svc.admin.quotas.set.mutate({
      orgId: limited.org.id,
      async: { requestsPerMinute: 1, maxBurst: 2 },
      sync: { requestsPerMinute: 1, maxBurst: 1 },
    });
    const wf = await deployWorkflow(svc.admin, limited.workspace.id, ECHO);
    const hook = await webhook(wf);
    expect((await post(hook.url, '{}')).status).toBe(202);
    const second = await post(hook.url, '{}');
    expect(second.status).toBe(202);
    expect(second.headers.get('X-RateLimit-Remaining')).toBe('0');
    const refused = await post(hook.url, '{}');
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatch(/^Rate limit exceeded/);
    expect(Number(refused.headers.get('Retry-After'))).toBeGreaterThanOrEqual(1);
    for (const name of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'])
      expect(refused.headers.get(name), name).toMatch(/^\d+$/);
    expect(await executionsOf(wf)).toHaveLength(2);

    // The same workspace's sync webhook draws from the sync bucket, apart.
    const syncHook = await webhook(wf, { mode: 'sync' });
    expect((await post(syncHook.url, '{}')).status).toBe(200);
    expect((await post(syncHook.url, '{}')).status).toBe(429);

    await svc.admin.quotas.set.mutate({
      orgId: limited.org.id,
      usageLimit: 0,
      async: { requestsPerMinute: 1000, maxBurst: 1000 },
    });
    const broke = await post(hook.url, '{}');
    expect(broke.status).toBe(402);
    expect(broke.body.error).toMatch(/^Usage limit exceeded/);
    expect(await executionsOf(wf)).toHaveLength(3);
  });
});

describe('secrecy', () => {
  it('stores the token as its SHA-256 only, and the secret sealed', async () => {
    const hook = await webhook(greet, { secret: SECRET });
    const [row] = await svc.db.query<Record<string, unknown>>('select * from webhooks where id = $1', [
      hook.id,
    ]);
    const stored = JSON.stringify(row, (_k, v) =>
      v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v,
    );
    expect(stored).not.toContain(hook.token);
    expect(stored).not.toContain(SECRET);
    expect(Buffer.from(row?.token_hash as Uint8Array)).toEqual(
      createHash('sha256').update(hook.token).digest(),
    );
    expect(hook.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('keeps the token out of the log lines', async () => {
    const raw: string[] = [];
    const log = createLogger('debug', {}, { destination: { write: (s: string) => void raw.push(s) } });
    const api = await startApi({ db: svc.db, config: svc.config, log, queue: svc.queue, clock: () => NOW });
    try {
      const hook = await webhook(greet, { secret: SECRET });
      const body = JSON.stringify({ name: 'Ada' });
      expect(
        (await post(hook.url, body, { 'X-Webhook-Signature': sign(SECRET, body) }, api.app)).status,
      ).toBe(202);
      expect((await post(hook.url, body, {}, api.app)).status).toBe(401);
      expect((await post(`${hook.url}x`, body, {}, api.app)).status).toBe(404);
      const text = raw.join('');
      expect(text).toContain('/api/webhooks/[REDACTED]');
      expect(text).not.toContain(hook.token);
      expect(text).not.toContain(SECRET);
    } finally {
      await api.close();
    }
  });
});
