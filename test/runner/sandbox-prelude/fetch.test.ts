// runner/sandbox/prelude/fetch.ts: Headers, Request and Response as the sandbox builds them, and a fetch
// whose answer comes back from the host whole and becomes a Response of the sandbox.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandbox } from './sandbox.ts';

const { value, error } = sandbox({ httpAllowList: ['127.0.0.1'] });
let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'x-method': req.method ?? '' });
    req.pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

describe('prelude: fetch, Headers, Request, Response', () => {
  it('validates headers, joins repeated ones and keeps set-cookie apart', async () => {
    const result = await value(`const headers = new Headers({ 'X-A': ' 1 ' });
      headers.append('x-a', '2');
      headers.append('Set-Cookie', 'a=1');
      headers.append('set-cookie', 'b=2');
      let bad = null;
      try { headers.set('bad name', 'x') } catch (e) { bad = e.name }
      return [headers.get('x-a'), headers.getSetCookie(), [...headers.keys()], bad]`);
    expect(result).toEqual(['1, 2', ['a=1', 'b=2'], ['set-cookie', 'set-cookie', 'x-a'], 'TypeError']);
  });

  it('refuses bodies where fetch does, and reads a body only once', async () => {
    const result = await value(`const refused = [];
      try { new Request('https://x.example', { body: 'b' }) } catch (e) { refused.push(e.message) }
      try { new Response('b', { status: 204 }) } catch (e) { refused.push(e.message) }
      try { new Response(null, { status: 99 }) } catch (e) { refused.push(e.name) }
      const response = new Response(new URLSearchParams('a=1'));
      const type = response.headers.get('content-type');
      await response.text();
      try { await response.text() } catch (e) { refused.push(e.name) }
      return [refused, type, Response.redirect('https://x.example/', 301).headers.get('location')]`);
    expect(result).toEqual([
      [
        'Request with GET/HEAD method cannot have body.',
        'Response with null body status cannot have body',
        'RangeError',
        'TypeError',
      ],
      'application/x-www-form-urlencoded;charset=UTF-8',
      'https://x.example/',
    ]);
  });

  it('sends a request through the host and answers with a Response of the sandbox', async () => {
    const result =
      await value(`const response = await fetch(new Request('${base}/echo', { method: 'PUT', body: new Uint8Array([104, 105]) }));
      return [response instanceof Response, response.status, response.url, response.type, response.headers.get('x-method'), await response.text()]`);
    expect(result).toEqual([true, 200, `${base}/echo`, 'basic', 'PUT', 'hi']);
    expect(await error("await fetch('ftp://example.com/')")).toMatch(/^TypeError: fetch refused/);
  });
});
