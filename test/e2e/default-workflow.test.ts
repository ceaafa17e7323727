// The agent workflow every new workspace starts with runs end to end against an OpenAI-compatible
// server, and its token cost is kept with the execution.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startChatServer } from '../helpers/openai-server.ts';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';

let svc: TestService;
let tenant: Tenant;
let chat: Awaited<ReturnType<typeof startChatServer>>;

beforeAll(async () => {
  chat = await startChatServer();
  svc = await startTestService({ OPENAI_BASE_URL: chat.url, OPENAI_API_KEY: 'sk-test' }, { runner: true });
  tenant = await createTenant(svc.admin);
});
afterAll(async () => {
  await svc.close();
  await chat.close();
});

it('deploys and executes the default agent workflow of a new workspace', async () => {
  const ws = (await svc.call('POST', '/api/v1/workspaces', { key: tenant.key, body: { name: 'Agents' } }))
    .body.data.workspace;
  const [wf] = await svc.admin.workflows.list.query({ workspaceId: ws.id });
  await svc.admin.workflows.deploy.mutate({ id: wf?.id as string });
  const res = await svc.call('POST', `/api/workflows/${wf?.id}/execute`, {
    key: tenant.key,
    body: { inputs: { message: 'hi there' } },
  });
  expect(res.body).toMatchObject({
    success: true,
    output: { content: 'echo: hi there', model: 'gpt-4o-mini' },
  });
  expect(chat.requests.at(-1)?.messages.map((m) => m.role)).toEqual(['system', 'user']);
  // The log's cost: the flat $0.005 plus gpt-4o-mini's 20 prompt tokens at $0.15/M and 5
  // completion tokens at $0.60/M.
  const [row] = await svc.db.query<{ cost: unknown }>('select cost from executions where id = $1', [
    res.body.executionId,
  ]);
  expect(row?.cost).toEqual({
    total: 0.005006,
    base: 0.005,
    tokens: { prompt: 20, completion: 5, total: 25 },
    models: {
      'gpt-4o-mini': {
        input: 0.000003,
        output: 0.000003,
        total: 0.000006,
        tokens: { prompt: 20, completion: 5, total: 25 },
      },
    },
  });
});
