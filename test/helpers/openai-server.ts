// A small OpenAI-compatible chat server for tests: echoes the last user message, with usage counts.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function startChatServer() {
  const requests: { model: string; messages: { role: string; content: string }[] }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      const request = JSON.parse(body || '{}');
      requests.push(request);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-test',
          object: 'chat.completion',
          created: 1_700_000_000,
          model: request.model,
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: `echo: ${request.messages?.at(-1)?.content}` },
              finish_reason: 'stop',
            },
          ],
          usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
