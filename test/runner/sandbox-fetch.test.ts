// The function sandbox's fetch goes through the http block's SSRF guard (net/network-guard.ts):
// loopback, private and link-local destinations are refused unless the pool's allow-list names them,
// on every redirect hop too, and the refusal reaches user code as a sandbox-realm TypeError.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createFunctionPool, type FunctionOutcome, type FunctionTask } from '../../runner/sandbox/pool.ts';

// No allow-list: only public addresses.
const guarded = createFunctionPool({ minThreads: 1, maxThreads: 2 });
const allowed = createFunctionPool({ minThreads: 1, maxThreads: 2, httpAllowList: ['127.0.0.1'] });
let server: Server;
let base = '';
let port = 0;
let connections = 0;
let requests: string[] = [];
const hangingClosed: Promise<void>[] = [];

beforeAll(async () => {
  server = createServer((req, res) => answer(req, res));
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

beforeEach(() => {
  connections = 0;
  requests = [];
});

afterAll(async () => {
  await Promise.all([guarded.destroy(), allowed.destroy()]);
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function answer(req: IncomingMessage, res: ServerResponse) {
  const url = req.url ?? '/';
  requests.push(url);
  if (url === '/json') {
    res.writeHead(200, { 'content-type': 'application/json', 'x-answer': '42' }).end('{"hello":"world"}');
  } else if (url === '/gzip') {
    res
      .writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
      .end(gzipSync('{"zipped":true}'));
  } else if (url === '/bytes') {
    res.writeHead(200).end(Buffer.from([0, 1, 2, 250, 255]));
  } else if (url === '/redirect-local') {
    res.writeHead(302, { location: '/json' }).end();
  } else if (url.startsWith('/redirect?to=')) {
    res.writeHead(302, { location: decodeURIComponent(url.slice('/redirect?to='.length)) }).end();
  } else if (url === '/huge') {
    const chunk = Buffer.alloc(1024 * 1024, 120);
    res.writeHead(200);
    for (let i = 0; i < 17; i++) res.write(chunk);
    res.end();
  } else if (url === '/hang') {
    hangingClosed.push(new Promise((resolve) => res.once('close', () => resolve())));
    res.writeHead(200);
    res.write('partial');
  } else {
    res.writeHead(404).end('not here');
  }
}

function task(code: string, options: Partial<FunctionTask> = {}): FunctionTask {
  return { code, language: 'javascript', scope: { base, port }, timeoutMs: 5000, ...options };
}

async function value(target: typeof guarded, code: string, options: Partial<FunctionTask> = {}) {
  const outcome: FunctionOutcome = await target.run(task(code, options));
  if (!outcome.ok) throw new Error(`expected ok, got: ${outcome.error}`);
  return outcome.value;
}

/** What user code sees when it catches the fetch's rejection. */
const caught = (url: string, init = '{}') =>
  `try { await fetch(${url}, ${init}); return 'fetched' } catch (e) { return [e instanceof TypeError, e.name, e.message] }`;

describe('without an allow-list', () => {
  it('refuses loopback, private and link-local destinations before connecting', async () => {
    const cases: [string, RegExp][] = [
      ['base + "/json"', /^fetch refused: 127\.0\.0\.1: loopback addresses are not allowed/],
      ['`http://localhost:${port}/json`', /^fetch refused: localhost \(resolves to .+\): loopback addresses/],
      ['`http://[::1]:${port}/json`', /^fetch refused: ::1: loopback addresses are not allowed/],
      [
        '"http://169.254.169.254/latest/meta-data/"',
        /^fetch refused: 169\.254\.169\.254: link-local addresses/,
      ],
      ['"http://10.0.0.1/"', /^fetch refused: 10\.0\.0\.1: private addresses are not allowed/],
      ['"http://[::ffff:127.0.0.1]/"', /^fetch refused: ::ffff:7f00:1: loopback addresses/],
      ['"http://0x7f.1/"', /^fetch refused: 127\.0\.0\.1: loopback addresses/],
    ];
    for (const [url, message] of cases) {
      expect(await value(guarded, caught(url)), url).toEqual([
        true,
        'TypeError',
        expect.stringMatching(message),
      ]);
    }
    expect(connections).toBe(0);
    expect(requests).toEqual([]);
  });

  it('fails the function with the refusal when it is not caught', async () => {
    const outcome = await guarded.run(task('return await (await fetch(base + "/json")).json()'));
    expect(outcome).toMatchObject({
      ok: false,
      error: expect.stringMatching(
        /^TypeError: fetch refused: 127\.0\.0\.1: loopback addresses are not allowed \(not in the HTTP allow-list\)$/,
      ),
    });
    expect(connections).toBe(0);
  });

  it('refuses other URL schemes', async () => {
    expect(await value(guarded, caught('"file:///etc/passwd"'))).toEqual([
      true,
      'TypeError',
      'fetch refused: only http: and https: URLs are allowed, not file:',
    ]);
  });

  it('gives user code no way back to the host through the refusal', async () => {
    const code = `try { await fetch(base + '/json') } catch (e) {
      const viaConstructor = (() => { try { return typeof e.constructor.constructor('return process')() } catch (x) { return 'threw ' + x.name + ': ' + x.message } })();
      const viaProto = Object.getPrototypeOf(e).constructor.constructor('return typeof process')();
      return [viaConstructor, viaProto, Object.getPrototypeOf(e) === TypeError.prototype, e.cause === undefined, typeof e.stack]
    }`;
    expect(await value(guarded, code)).toEqual([
      'threw ReferenceError: process is not defined',
      'undefined',
      true,
      true,
      'string',
    ]);
  });
});

describe('with the allow-list', () => {
  it('fetches from an allowed address: status, headers, text, json and bytes', async () => {
    const code = `const r = await fetch(base + '/json');
      const missing = await fetch(base + '/missing');
      const bytes = new Uint8Array(await (await fetch(base + '/bytes')).arrayBuffer());
      const zipped = await (await fetch(base + '/gzip')).json();
      return [r.status, r.ok, r.headers.get('x-answer'), r.url, r.redirected, await r.json(),
        missing.status, await missing.text(), Array.from(bytes), zipped]`;
    expect(await value(allowed, code)).toEqual([
      200,
      true,
      '42',
      `${base}/json`,
      false,
      { hello: 'world' },
      404,
      'not here',
      [0, 1, 2, 250, 255],
      { zipped: true },
    ]);
  });

  it('follows a redirect within allowed addresses, and honours manual and error modes', async () => {
    const code = `const followed = await fetch(base + '/redirect-local');
      const manual = await fetch(base + '/redirect-local', { redirect: 'manual' });
      let error = null;
      try { await fetch(base + '/redirect-local', { redirect: 'error' }) } catch (e) { error = e.message }
      return [followed.redirected, followed.url, await followed.json(), manual.status, manual.headers.get('location'), error]`;
    expect(await value(allowed, code)).toEqual([
      true,
      `${base}/json`,
      { hello: 'world' },
      302,
      '/json',
      'fetch failed: unexpected redirect',
    ]);
  });

  it('refuses a redirect from an allowed server to a refused address', async () => {
    const targets = [
      ['http://169.254.169.254/latest/meta-data/', /^fetch refused: 169\.254\.169\.254: link-local/],
      ['http://10.0.0.1/admin', /^fetch refused: 10\.0\.0\.1: private addresses/],
      [`http://[::1]:${port}/json`, /^fetch refused: ::1: loopback addresses/],
    ] as const;
    for (const [to, message] of targets) {
      const url = JSON.stringify(`${base}/redirect?to=${encodeURIComponent(to)}`);
      expect(await value(allowed, caught(url)), to).toEqual([
        true,
        'TypeError',
        expect.stringMatching(message),
      ]);
    }
    // Only the redirecting hops reached the local server.
    expect(requests.every((path) => path.startsWith('/redirect?'))).toBe(true);
  });

  it('still refuses what the allow-list does not name', async () => {
    expect(await value(allowed, caught('"http://10.0.0.1/"'))).toEqual([
      true,
      'TypeError',
      expect.stringMatching(/^fetch refused: 10\.0\.0\.1: private addresses are not allowed/),
    ]);
  });

  it('keeps the 16 MB response cap', async () => {
    expect(await value(allowed, caught('base + "/huge"'))).toEqual([
      true,
      'TypeError',
      'response body exceeds 16777216 bytes',
    ]);
  });

  it('cancels a request in flight when the function ends', async () => {
    const outcome = await allowed.run(task('await fetch(base + "/hang")', { timeoutMs: 300 }));
    expect(outcome).toMatchObject({ ok: false, error: 'Function exceeded its time limit of 300 ms' });
    expect(hangingClosed).toHaveLength(1);
    await hangingClosed[0];
  });

  it('reports a failed connection as a failed fetch', async () => {
    expect(await value(allowed, caught('"http://127.0.0.1:1/"'))).toEqual([
      true,
      'TypeError',
      expect.stringMatching(/^fetch failed: request to http:\/\/127\.0\.0\.1:1 failed: connection refused/),
    ]);
  });
});

describe('configuration', () => {
  it('rejects an invalid allow-list when the pool is created', () => {
    expect(() => createFunctionPool({ httpAllowList: ['http://x'] })).toThrow('invalid allow-list entry');
  });
});
