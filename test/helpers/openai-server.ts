// A small OpenAI-compatible chat server for tests: echoes the last user message, with usage counts.
// Asked to stream (`stream: true`), it sends the answer word by word as chat.completion.chunk events
// (and the usage in a last chunk when `stream_options.include_usage` asks); `holdStreams()` makes
// streams stop after their first chunk until `release()`, so a test can act mid-stream.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function startChatServer() {
  const requests: { model: string; messages: { role: string; content: string }[]; stream?: boolean }[] = [];
  /** performance.now() when each stream's first chunk was written (the bench's reference). */
  const firstChunkAt: number[] = [];
  let held: Promise<void> | null = null;
  let release = () => {};
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      const request = JSON.parse(body || '{}');
      requests.push(request);
      const content = `echo: ${request.messages?.at(-1)?.content}`;
      const usage = { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 };
      if (request.stream) {
        void streamAnswer(res, request, content, usage);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-test',
          object: 'chat.completion',
          created: 1_700_000_000,
          model: request.model,
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
          usage,
        }),
      );
    });
  });

  async function streamAnswer(
    res: ServerResponse,
    request: { model: string; stream_options?: { include_usage?: boolean } },
    content: string,
    usage: object,
  ) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (delta: object, finish: string | null, extra: object = {}) =>
      `data: ${JSON.stringify({
        id: 'chatcmpl-test',
        object: 'chat.completion.chunk',
        created: 1_700_000_000,
        model: request.model,
        choices: [{ index: 0, delta, finish_reason: finish }],
        ...extra,
      })}\n\n`;
    const words = content.split(/(?<= )/);
    for (const [i, word] of words.entries()) {
      res.write(chunk(i === 0 ? { role: 'assistant', content: word } : { content: word }, null));
      if (i === 0) {
        firstChunkAt.push(performance.now());
        if (held) await held;
      }
      if (res.destroyed) return;
    }
    res.write(chunk({}, 'stop'));
    if (request.stream_options?.include_usage) {
      res.write(
        `data: ${JSON.stringify({ id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 1_700_000_000, model: request.model, choices: [], usage })}\n\n`,
      );
    }
    res.end('data: [DONE]\n\n');
  }

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    firstChunkAt,
    /** Streams from now on pause after their first chunk until release(). */
    holdStreams() {
      held = new Promise((r) => {
        release = () => {
          held = null;
          r();
        };
      });
    },
    release: () => release(),
    close: () =>
      new Promise<void>((r) => {
        release();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export interface EmbeddingServerOptions {
  /** Dimensions of the vectors answered (default: the request's `dimensions`, else 1536). */
  dimensions?: number;
  /** Answer float arrays whatever encoding the request asks for, as some compatible servers do. */
  alwaysFloat?: boolean;
}

/**
 * A small OpenAI-compatible embeddings server for tests: POST /v1/embeddings answers, for each input,
 * a deterministic vector that is not unit length (`rawEmbedding`), as floats or base64 float32 as the
 * request's `encoding_format` asks. Records each request; `failNext(n, status)` makes the next n
 * requests fail.
 */
export async function startEmbeddingServer(options: EmbeddingServerOptions = {}) {
  const requests: {
    model: string;
    input: string | string[];
    dimensions?: number;
    encoding_format?: string;
    authorization?: string;
  }[] = [];
  let failures: { count: number; status: number } = { count: 0, status: 500 };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'not found' } }));
        return;
      }
      const request = JSON.parse(body || '{}');
      requests.push({ ...request, authorization: req.headers.authorization });
      if (failures.count > 0) {
        failures.count--;
        res.writeHead(failures.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `failure on purpose (${failures.status})` } }));
        return;
      }
      const inputs: string[] = Array.isArray(request.input) ? request.input : [request.input];
      const dimensions = options.dimensions ?? request.dimensions ?? 1536;
      const base64 = request.encoding_format === 'base64' && !options.alwaysFloat;
      const data = inputs.map((text, index) => {
        const vector = rawEmbedding(text, dimensions);
        const embedding = base64 ? Buffer.from(Float32Array.from(vector).buffer).toString('base64') : vector;
        return { object: 'embedding', index, embedding };
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          object: 'list',
          data,
          model: request.model,
          usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    failNext(count: number, status = 500) {
      failures = { count, status };
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** The vector the embedding server answers for a text: deterministic, distinct per text, length ≠ 1. */
export function rawEmbedding(text: string, dimensions = 1536): number[] {
  let seed = 2166136261;
  for (let i = 0; i < text.length; i++) seed = Math.imul(seed ^ text.charCodeAt(i), 16777619) >>> 0;
  return Array.from({ length: dimensions }, (_, j) => (((seed >>> (j % 24)) + j) % 17) - 8 + 0.5);
}
