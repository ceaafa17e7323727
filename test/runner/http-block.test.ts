// The http block against a local server: requests as configured, answers as output, failures as
// errors, and the SSRF guard refusing internal destinations (on every redirect hop) unless allowed.
import { lookup } from 'node:dns/promises';
import { once } from 'node:events';
import { createServer, get, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { blockedReason, parseAllowList, pinnedLookup, vetHost } from '../../net/network-guard.ts';
import type { BlockContext, RunnerSettings } from '../../runner/blocks/block.ts';
import { type HttpConfig, type HttpOutput, httpBlock } from '../../runner/blocks/http.ts';
import { blockContext } from '../helpers/block-context.ts';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

let server: Server;
let base: string;
let port: number;
const seen: Seen[] = [];
let requestArrived: () => void = () => {};
// Names in /etc/hosts differ between machines: the machine's own name often maps to loopback.
const loopbackName = await resolvesToLoopback(hostname());

function handle(req: IncomingMessage, res: ServerResponse, body: string) {
  const url = new URL(req.url ?? '/', base);
  const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(value));
  };
  switch (url.pathname) {
    case '/json':
      return json(200, { hello: 'world', n: 1 });
    case '/echo':
      return json(200, {
        method: req.method,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body,
      });
    case '/text':
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'x-custom': 'yes' });
      return res.end('plain words');
    case '/missing':
      return json(404, { error: 'no such thing' });
    case '/broken':
      res.writeHead(500, { 'content-type': 'text/plain' });
      return res.end('it broke');
    case '/hang':
      requestArrived();
      return; // never answers
    case '/big':
      // No content-length: the cap must stop the streamed read itself.
      res.writeHead(200, { 'content-type': 'text/plain' });
      for (let i = 0; i < 20; i++) res.write('x'.repeat(100));
      return res.end();
    case '/big-declared':
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '5000' });
      return res.end('y'.repeat(5000));
    case '/redirect':
      res.writeHead(302, { location: '/json' });
      return res.end();
    case '/see-other':
      res.writeHead(303, { location: '/echo' });
      return res.end();
    case '/to-metadata':
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
      return res.end();
    case '/to-ipv6':
      res.writeHead(307, { location: `http://[::1]:${port}/json` });
      return res.end();
    case '/to-localhost':
      res.writeHead(307, { location: `http://localhost:${port}/json` });
      return res.end();
    case '/loop':
      res.writeHead(302, { location: `/loop?n=${Number(url.searchParams.get('n') ?? 0) + 1}` });
      return res.end();
    default:
      return json(404, { error: 'unknown route' });
  }
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handle(req, res, body);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  server.close();
  await once(server, 'close');
});

beforeEach(() => {
  seen.length = 0;
});

function context(
  settings: Partial<RunnerSettings> = {},
  signal = new AbortController().signal,
): BlockContext {
  return blockContext({ httpAllowList: ['127.0.0.1'], ...settings }, signal);
}

async function request(config: Partial<HttpConfig> & { url: string }, ctx = context()) {
  const parsed = httpBlock.schema.parse(config);
  const result = await httpBlock.run(parsed, ctx);
  return result.output as HttpOutput;
}

describe('requests and answers', () => {
  it('GETs JSON and parses it', async () => {
    const out = await request({ url: `${base}/json` });
    expect(out.status).toBe(200);
    expect(out.statusText).toBe('OK');
    expect(out.data).toEqual({ hello: 'world', n: 1 });
    expect(out.headers['content-type']).toBe('application/json');
    expect(seen).toHaveLength(1);
    expect(seen[0]?.method).toBe('GET');
  });

  it('POSTs a JSON body with a JSON content type', async () => {
    const out = await request({ method: 'POST', url: `${base}/echo`, body: { a: [1, 2], b: 'x' } });
    expect(out.data).toMatchObject({ method: 'POST', body: '{"a":[1,2],"b":"x"}' });
    expect(seen[0]?.headers['content-type']).toBe('application/json');
  });

  it('keeps a content type the config sets, and sends a string body as it is', async () => {
    await request({
      method: 'PUT',
      url: `${base}/echo`,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'a=1&b=2',
    });
    expect(seen[0]?.method).toBe('PUT');
    expect(seen[0]?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(seen[0]?.body).toBe('a=1&b=2');
  });

  it('appends query parameters to those already in the URL', async () => {
    const out = await request({ url: `${base}/echo?keep=1`, query: { q: 'a b', n: 5, flag: true } });
    expect(out.data).toMatchObject({ query: { keep: '1', q: 'a b', n: '5', flag: 'true' } });
    expect(seen[0]?.url).toBe('/echo?keep=1&q=a+b&n=5&flag=true');
  });

  it('sends the configured headers', async () => {
    await request({ url: `${base}/echo`, headers: { Authorization: 'Bearer t0k', 'X-Trace': 'abc' } });
    expect(seen[0]?.headers).toMatchObject({ authorization: 'Bearer t0k', 'x-trace': 'abc' });
  });

  it('returns text for non-JSON answers, with the response headers', async () => {
    const out = await request({ url: `${base}/text` });
    expect(out.data).toBe('plain words');
    expect(out.headers['x-custom']).toBe('yes');
  });

  it('answers a non-2xx status as output, not as an error', async () => {
    const missing = await request({ url: `${base}/missing` });
    expect(missing).toMatchObject({ status: 404, statusText: 'Not Found', data: { error: 'no such thing' } });
    const broken = await request({ method: 'DELETE', url: `${base}/broken` });
    expect(broken).toMatchObject({ status: 500, data: 'it broke' });
  });

  it('answers HEAD without a body', async () => {
    const out = await request(
      { method: 'HEAD', url: `${base}/big-declared` },
      context({ httpMaxResponseBytes: 100 }),
    );
    expect(out.status).toBe(200);
    expect(out.data).toBe('');
  });
});

describe('failures', () => {
  it('times out on a server that never answers', async () => {
    await expect(request({ url: `${base}/hang`, timeoutMs: 50 })).rejects.toThrow(
      'request timed out after 50 ms',
    );
  });

  it('stops when the execution is cancelled', async () => {
    const controller = new AbortController();
    const arrived = new Promise<void>((resolve) => {
      requestArrived = resolve;
    });
    const pending = request({ url: `${base}/hang` }, context({}, controller.signal));
    await arrived;
    controller.abort();
    await expect(pending).rejects.toThrow(/request aborted/);
  });

  it('refuses a streamed response larger than the cap', async () => {
    await expect(request({ url: `${base}/big` }, context({ httpMaxResponseBytes: 1000 }))).rejects.toThrow(
      'response larger than 1000 bytes',
    );
  });

  it('refuses a declared response larger than the cap', async () => {
    await expect(
      request({ url: `${base}/big-declared` }, context({ httpMaxResponseBytes: 1000 })),
    ).rejects.toThrow('response larger than 1000 bytes');
  });

  it('reports a connection refused', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const closedPort = (closed.address() as AddressInfo).port;
    closed.close();
    await once(closed, 'close');
    await expect(request({ url: `http://127.0.0.1:${closedPort}/` })).rejects.toThrow(
      `request to http://127.0.0.1:${closedPort} failed: connection refused`,
    );
  });
});

describe('redirects', () => {
  it('follows a redirect to an allowed address', async () => {
    const out = await request({ url: `${base}/redirect` });
    expect(out).toMatchObject({ status: 200, data: { hello: 'world', n: 1 } });
    expect(seen.map((s) => s.url)).toEqual(['/redirect', '/json']);
  });

  it('turns a POST into a GET without body on 303', async () => {
    const out = await request({ method: 'POST', url: `${base}/see-other`, body: { x: 1 } });
    expect(out.data).toMatchObject({ method: 'GET', body: '' });
    expect(seen[1]?.headers['content-type']).toBeUndefined();
  });

  it('refuses a redirect to the metadata address', async () => {
    await expect(request({ url: `${base}/to-metadata` })).rejects.toThrow(
      'refused to connect to 169.254.169.254: link-local addresses are not allowed',
    );
    expect(seen.map((s) => s.url)).toEqual(['/to-metadata']);
  });

  it('refuses a redirect to a loopback address the allow-list does not name', async () => {
    await expect(request({ url: `${base}/to-ipv6` })).rejects.toThrow('refused to connect to ::1: loopback');
    expect(seen.map((s) => s.url)).toEqual(['/to-ipv6']);
  });

  it('checks a redirect by the addresses its host resolves to', async () => {
    // Whatever localhost resolves to on this machine (127.0.0.1, perhaps ::1 too), the list names it.
    const out = await request(
      { url: `${base}/to-localhost` },
      context({ httpAllowList: ['127.0.0.1', '[::1]'] }),
    );
    expect(out.status).toBe(200);
    expect(seen.map((s) => s.url)).toEqual(['/to-localhost', '/json']);
  });

  it('gives up after 5 redirects', async () => {
    await expect(request({ url: `${base}/loop` })).rejects.toThrow('too many redirects (more than 5)');
    expect(seen).toHaveLength(6);
  });
});

describe('the SSRF guard', () => {
  const strict = () => context({ httpAllowList: [] });

  it.each([
    ['127.0.0.1', () => `http://127.0.0.1:${port}/json`, 'refused to connect to 127.0.0.1: loopback'],
    [
      'localhost',
      () => `http://localhost:${port}/json`,
      /refused to connect to localhost \(resolves to (127\.0\.0\.1|::1)\): loopback/,
    ],
    ['a decimal IPv4', () => `http://2130706433:${port}/json`, 'refused to connect to 127.0.0.1: loopback'],
    ['IPv6 loopback', () => `http://[::1]:${port}/json`, 'refused to connect to ::1: loopback'],
    [
      'IPv4-mapped IPv6',
      () => `http://[::ffff:127.0.0.1]:${port}/json`,
      'refused to connect to ::ffff:7f00:1: loopback',
    ],
    [
      'the metadata address',
      () => 'http://169.254.169.254/latest/meta-data/',
      'link-local addresses are not allowed',
    ],
    ['a private address', () => 'http://10.1.2.3/', 'refused to connect to 10.1.2.3: private'],
    ['the unspecified address', () => `http://0.0.0.0:${port}/json`, 'unspecified'],
    ['a CGNAT address', () => 'https://100.64.1.1/', 'shared/CGNAT'],
  ])('refuses %s', async (_name, url, message) => {
    await expect(request({ url: url() }, strict())).rejects.toThrow(message);
    expect(seen).toHaveLength(0);
  });

  it.skipIf(!loopbackName)('refuses a host name that resolves to loopback', async () => {
    await expect(request({ url: `http://${hostname()}:${port}/json` }, strict())).rejects.toThrow(
      /refused to connect to .* \(resolves to 127\.\d+\.\d+\.\d+\): loopback/,
    );
    expect(seen).toHaveLength(0);
  });

  it('permits hosts and ranges on the allow-list', async () => {
    for (const entries of [['localhost'], ['127.0.0.0/8', '::1/128'], ['127.0.0.1', '[::1]']]) {
      const out = await request(
        { url: `http://localhost:${port}/json` },
        context({ httpAllowList: entries }),
      );
      expect(out.status).toBe(200);
    }
    expect(seen).toHaveLength(3);
  });

  it('connects to the vetted address without asking DNS again', async () => {
    // pinned.invalid cannot resolve: only the pinned lookup can take this request anywhere.
    const status = await new Promise<number | undefined>((resolve, reject) => {
      get(
        `http://pinned.invalid:${port}/json`,
        { lookup: pinnedLookup([{ address: '127.0.0.1', family: 4 }]), agent: false },
        (res) => {
          res.resume();
          resolve(res.statusCode);
        },
      ).on('error', reject);
    });
    expect(status).toBe(200);
    expect(seen[0]?.headers.host).toBe(`pinned.invalid:${port}`);
  });

  it('classifies addresses', () => {
    expect(blockedReason('8.8.8.8')).toBeNull();
    expect(blockedReason('2606:4700:4700::1111')).toBeNull();
    expect(blockedReason('172.16.0.1')).toBe('private');
    expect(blockedReason('172.32.0.1')).toBeNull();
    expect(blockedReason('192.168.1.1')).toBe('private');
    expect(blockedReason('100.127.255.255')).toBe('shared/CGNAT');
    expect(blockedReason('100.128.0.0')).toBeNull();
    expect(blockedReason('::')).toBe('unspecified');
    expect(blockedReason('fd12:3456::1')).toBe('private');
    expect(blockedReason('fe80::1%eth0')).toBe('link-local');
    expect(blockedReason('::ffff:169.254.169.254')).toBe('link-local');
    expect(blockedReason('::ffff:a9fe:a9fe')).toBe('link-local');
    expect(blockedReason('::ffff:10.0.0.1')).toBe('private');
    expect(blockedReason('::ffff:8.8.8.8')).toBeNull();
    expect(blockedReason('64:ff9b::7f00:1')).toBe('loopback');
  });

  it('parses allow-list entries and rejects malformed ones', async () => {
    const list = parseAllowList(['LOCALHOST', '[::1]', '10.0.0.0/8']);
    expect([...list.hosts]).toEqual(['localhost']);
    await expect(vetHost('[::1]', list)).resolves.toEqual([{ address: '::1', family: 6 }]);
    await expect(vetHost('10.200.0.1', list)).resolves.toEqual([{ address: '10.200.0.1', family: 4 }]);
    await expect(vetHost('11.0.0.1', list)).resolves.toHaveLength(1);
    await expect(vetHost('192.168.0.1', list)).rejects.toThrow('private');
    expect(() => parseAllowList(['10.0.0.0/33'])).toThrow('invalid allow-list entry');
    expect(() => parseAllowList(['http://x'])).toThrow('invalid allow-list entry');
  });
});

describe('config schema', () => {
  it('applies defaults', () => {
    expect(httpBlock.schema.parse({ url: 'https://example.com' })).toEqual({
      method: 'GET',
      url: 'https://example.com',
      timeoutMs: 30_000,
    });
  });

  it('rejects an unknown method, a non-http URL and an out-of-range timeout', () => {
    expect(httpBlock.schema.safeParse({ method: 'FETCH', url: 'https://example.com' }).success).toBe(false);
    expect(httpBlock.schema.safeParse({ url: 'ftp://example.com/file' }).success).toBe(false);
    expect(httpBlock.schema.safeParse({ url: 'not a url' }).success).toBe(false);
    expect(httpBlock.schema.safeParse({ url: 'https://example.com', timeoutMs: 0 }).success).toBe(false);
    expect(httpBlock.schema.safeParse({ url: 'https://example.com', timeoutMs: 300_001 }).success).toBe(
      false,
    );
  });

  it('accepts a templated URL, and checks it again once resolved', async () => {
    expect(httpBlock.schema.safeParse({ url: 'https://<start.host>/x' }).success).toBe(true);
    expect(httpBlock.schema.safeParse({ url: '<start.url>' }).success).toBe(true);
    await expect(
      httpBlock.run({ method: 'GET', url: 'file:///etc/passwd', timeoutMs: 1000 }, context()),
    ).rejects.toThrow('url must be http:// or https://, not file://');
  });
});

async function resolvesToLoopback(name: string): Promise<boolean> {
  try {
    const addresses = await lookup(name, { all: true });
    return addresses.length > 0 && addresses.every((a) => blockedReason(a.address) === 'loopback');
  } catch {
    return false;
  }
}
