// The local HTTP server that the park and approval tests' http blocks and completion callbacks call:
// it counts the hits of each path, holds `/hold…` requests until the test lets them go, answers
// `/flaky…` 503 the first time, records POSTed JSON bodies, and lets a test wait for a request to
// arrive (an event, not a poll).
import { EventEmitter, once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function startTargetServer() {
  const hits = new Map<string, number>();
  // biome-ignore lint/suspicious/noExplicitAny: callback bodies are read as JSON
  const posted: { path: string; body: any }[] = [];
  /** Requests to `/hold…`, answered when the test calls them. */
  const held: (() => void)[] = [];
  const arrivals = new EventEmitter();
  const server = createServer((req, res) => {
    const key = req.url ?? '/';
    const n = (hits.get(key) ?? 0) + 1;
    hits.set(key, n);
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      if (key.startsWith('/hold')) held.push(() => res.end('{}'));
      else {
        if (req.method === 'POST') posted.push({ path: key, body: JSON.parse(body) });
        res.statusCode = key.startsWith('/flaky') && n === 1 ? 503 : 200;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ hit: key, n }));
      }
      arrivals.emit('request');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    posted,
    held,
    /** What `probe` finds in what the server received, as soon as it has: checked at each request. */
    async received<T>(probe: () => T | undefined, what: string, timeoutMs = 20_000): Promise<T> {
      const signal = AbortSignal.timeout(timeoutMs);
      for (;;) {
        const found = probe();
        if (found !== undefined) return found;
        await once(arrivals, 'request', { signal }).catch(() => {
          throw new Error(`timed out waiting for ${what}`);
        });
      }
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
export type TargetServer = Awaited<ReturnType<typeof startTargetServer>>;
