// The agent block against a local OpenAI-compatible server: what it sends, how it reads the answer
// and prices the tokens, and how provider failures become errors that never carry the API key.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AgentConfig, type AgentOutput, agentBlock } from '../../runner/blocks/agent.ts';
import type { BlockContext, RunnerSettings } from '../../runner/blocks/block.ts';
import { priceOf } from '../../runner/blocks/model-prices.ts';
import { blockContext } from '../helpers/block-context.ts';

const API_KEY = 'sk-test-0123456789abcdef';

interface ChatRequest {
  model: string;
  messages: { role: string; content: string }[];
  temperature?: number;
  max_tokens?: number;
  response_format?: { type: string; json_schema?: { name: string; schema: unknown } };
}

let server: Server;
let baseUrl: string;
const received: { authorization?: string; body: ChatRequest }[] = [];
let requestArrived: () => void = () => {};

// Answers like OpenAI: dated model snapshots, usage counts, and errors in OpenAI's shape. The 401
// echoes the key it was given, as some providers do, so the test sees that the block strips it.
function startProvider(): Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        return send(404, { error: { message: 'not found', type: 'invalid_request_error' } });
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest;
      const authorization = req.headers.authorization;
      received.push({ ...(authorization ? { authorization } : {}), body });
      const key = authorization?.replace(/^Bearer /, '') ?? '';
      if (key !== API_KEY) {
        return send(401, {
          error: {
            message: `Incorrect API key provided: ${key}.`,
            type: 'invalid_request_error',
            code: 'invalid_api_key',
          },
        });
      }
      if (body.model === 'explode') {
        return send(500, { error: { message: 'upstream exploded', type: 'server_error' } });
      }
      if (body.model === 'hang') {
        requestArrived();
        return;
      }
      const question = body.messages.at(-1)?.content ?? '';
      let content = `You said: ${question}`;
      if (body.response_format?.type === 'json_schema') {
        content =
          body.model === 'sloppy'
            ? 'Sure! {"city": '
            : JSON.stringify({ city: 'Paris', population: 2_100_000 });
      }
      send(200, {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1_700_000_000,
        model: body.model === 'gpt-4o-mini' ? 'gpt-4o-mini-2024-07-18' : body.model,
        choices: [
          { index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null },
        ],
        usage: { prompt_tokens: 1200, completion_tokens: 300, total_tokens: 1500 },
      });
    });
  });
}

beforeAll(async () => {
  server = startProvider();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  server.close();
  await once(server, 'close');
});

beforeEach(() => {
  received.length = 0;
});

function context(
  settings: Partial<RunnerSettings> = {},
  signal = new AbortController().signal,
): BlockContext {
  return blockContext({ openaiBaseUrl: baseUrl, openaiApiKey: API_KEY, ...settings }, signal);
}

async function ask(config: Partial<AgentConfig>, ctx = context()) {
  const parsed = agentBlock.schema.parse({ model: 'gpt-4o-mini', prompt: 'Hello there', ...config });
  return agentBlock.run(parsed, ctx);
}

describe('a completion', () => {
  it('sends the model, messages and sampling options', async () => {
    await ask({ systemPrompt: 'Be brief.', prompt: 'What is 2+2?', temperature: 0.2, maxTokens: 50 });
    expect(received).toHaveLength(1);
    expect(received[0]?.authorization).toBe(`Bearer ${API_KEY}`);
    expect(received[0]?.body).toMatchObject({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'What is 2+2?' },
      ],
      temperature: 0.2,
      max_tokens: 50,
    });
    expect(received[0]?.body.response_format).toBeUndefined();
  });

  it('returns the content, token counts and priced cost', async () => {
    const result = await ask({ prompt: 'ping' });
    // gpt-4o-mini: $0.15 / 1M input, $0.60 / 1M output.
    const cost = (1200 * 0.15 + 300 * 0.6) / 1_000_000;
    expect(result.output).toEqual({
      content: 'You said: ping',
      model: 'gpt-4o-mini-2024-07-18',
      tokens: { prompt: 1200, completion: 300, total: 1500 },
      cost: expect.closeTo(cost, 12),
    } satisfies AgentOutput);
    expect(result.cost).toBeCloseTo(cost, 12);
    expect(result.usage).toEqual({
      model: 'gpt-4o-mini-2024-07-18',
      promptTokens: 1200,
      completionTokens: 300,
    });
    expect(received[0]?.body.messages).toEqual([{ role: 'user', content: 'ping' }]);
  });

  it('prices unknown models at the default rate', async () => {
    const result = await ask({ model: 'llama3.1:8b' });
    expect(result.cost).toBeCloseTo(priceOf('some-unknown-model', 1200, 300), 12);
    expect((result.output as AgentOutput).model).toBe('llama3.1:8b');
  });

  it('asks for JSON by schema and parses the answer', async () => {
    const schema = {
      title: 'City facts',
      type: 'object',
      properties: { city: { type: 'string' }, population: { type: 'number' } },
      required: ['city', 'population'],
    };
    const result = await ask({ prompt: 'Largest city in France?', responseFormat: schema });
    expect((result.output as AgentOutput).content).toEqual({ city: 'Paris', population: 2_100_000 });
    expect(received[0]?.body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'City_facts', schema },
    });
  });

  it('fails on an answer that is not the JSON asked for', async () => {
    await expect(ask({ model: 'sloppy', responseFormat: { type: 'object' } })).rejects.toThrow(
      'model answered invalid JSON for the requested responseFormat',
    );
    // LangChain asks once more (a model may well answer properly the second time), no more.
    expect(received.length).toBeLessThanOrEqual(2);
  });

  it('talks to a keyless server with a placeholder key', async () => {
    await expect(ask({}, context({ openaiApiKey: undefined }))).rejects.toThrow(/rejected the API key/);
    expect(received[0]?.authorization).toBe('Bearer not-needed');
  });
});

describe('provider failures', () => {
  it('reports a provider 500 clearly, after at most one retry', async () => {
    await expect(ask({ model: 'explode' })).rejects.toThrow(
      'model provider answered HTTP 500: upstream exploded',
    );
    expect(received.length).toBeGreaterThanOrEqual(1);
    expect(received.length).toBeLessThanOrEqual(2);
  });

  it('reports a rejected key without the key', async () => {
    const wrongKey = 'sk-wrong-key-abcdef123456';
    const error = await ask({}, context({ openaiApiKey: wrongKey })).catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(
      /^model provider rejected the API key \(HTTP 401\): Incorrect API key/,
    );
    expect((error as Error).message).not.toContain(wrongKey);
    expect((error as Error).message).not.toContain('abcdef123456');
    expect(received).toHaveLength(1);
  });

  it('reports an unreachable provider', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as AddressInfo).port;
    closed.close();
    await once(closed, 'close');
    await expect(ask({}, context({ openaiBaseUrl: `http://127.0.0.1:${port}/v1` }))).rejects.toThrow(
      `model provider unreachable at http://127.0.0.1:${port}/v1: ECONNREFUSED`,
    );
  });

  it('stops when the execution is cancelled', async () => {
    const controller = new AbortController();
    const arrived = new Promise<void>((resolve) => {
      requestArrived = resolve;
    });
    const pending = ask({ model: 'hang' }, context({}, controller.signal));
    await arrived;
    controller.abort();
    await expect(pending).rejects.toThrow('model call aborted');
  });

  it('refuses to run without any provider configured', async () => {
    await expect(ask({}, context({ openaiBaseUrl: undefined, openaiApiKey: undefined }))).rejects.toThrow(
      'no model provider configured',
    );
    expect(received).toHaveLength(0);
  });
});

describe('config schema and prices', () => {
  it('rejects a temperature out of range and a missing prompt', () => {
    expect(agentBlock.schema.safeParse({ model: 'm', prompt: 'p', temperature: 2.5 }).success).toBe(false);
    expect(agentBlock.schema.safeParse({ model: 'm' }).success).toBe(false);
    expect(agentBlock.schema.safeParse({ model: 'm', prompt: 'p', maxTokens: 0 }).success).toBe(false);
  });

  it('prices dated snapshots and provider-prefixed names by their base model', () => {
    expect(priceOf('gpt-4.1-mini-2025-04-14', 1_000_000, 0)).toBe(0.4);
    expect(priceOf('openai/gpt-4.1', 0, 1_000_000)).toBe(8);
    expect(priceOf('gpt-4.1-nano', 1_000_000, 1_000_000)).toBe(0.5);
    expect(priceOf('o3-mini', 1_000_000, 1_000_000)).toBe(5.5);
    expect(priceOf('gpt-4o', 1_000_000, 1_000_000)).toBe(12.5);
  });
});
