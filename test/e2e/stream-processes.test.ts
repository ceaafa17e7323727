// A streamed execution whose runner is another process (server database only: PGlite is one
// process): its events reach the API's stream through Postgres (execution_events and NOTIFY).
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startChatServer } from '../helpers/openai-server.ts';
import { killAll, startServiceRunner } from '../helpers/runner-processes.ts';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';
import { sseReader } from '../helpers/sse.ts';
import { deployWorkflow } from '../helpers/workflows.ts';

const onServer = Boolean(process.env.TEST_DATABASE_URL);
let svc: TestService;
let tenant: Tenant;
let chat: Awaited<ReturnType<typeof startChatServer>>;
const children: ChildProcess[] = [];

beforeAll(async () => {
  if (!onServer) return;
  chat = await startChatServer();
  svc = await startTestService({});
  tenant = await createTenant(svc.admin);
  await startServiceRunner(svc, children, { OPENAI_BASE_URL: chat.url, OPENAI_API_KEY: 'sk-test' });
});
afterAll(async () => {
  await killAll(children);
  await svc?.close();
  await chat?.close();
});

it.runIf(onServer)('streams the tokens of a run in another process', async () => {
  const workflowId = await deployWorkflow(svc.admin, tenant.workspace.id, {
    inputs: { text: { type: 'string', required: true } },
    blocks: [{ id: 'agent', type: 'agent', model: 'gpt-4o-mini', prompt: '<start.text>' }],
    edges: [],
  });
  const res = await svc.app.request(`/api/workflows/${workflowId}/execute`, {
    method: 'POST',
    headers: { 'X-API-Key': tenant.key, 'Content-Type': 'application/json' },
    body: JSON.stringify({ inputs: { text: 'from afar' }, stream: true }),
  });
  const events = await sseReader(res).all();
  expect(
    events
      .filter((e) => e.event === 'token')
      .map((e) => e.data.chunk)
      .join(''),
  ).toBe('echo: from afar');
  expect(events.at(-1)).toMatchObject({
    event: 'execution.completed',
    data: { output: { agent: { content: 'echo: from afar' } } },
  });
});
