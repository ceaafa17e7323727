// First contact with the API's address: the root answers a browser with a page pointing at the
// reference, the OpenAPI document and the admin console, and a program with the same as JSON; the
// OpenAPI document names the server the reader reached (or PUBLIC_URL), so /docs samples paste.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.close());

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8';

describe('the root, /', () => {
  it('answers a browser with a page pointing at /docs, the document and the admin console', async () => {
    const res = await svc.app.request('/', { headers: { Accept: BROWSER_ACCEPT } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('vary')).toContain('Accept');
    const html = await res.text();
    expect(html).toContain('<a href="/docs">');
    expect(html).toContain('<a href="/api/openapi.json">');
    expect(html).toMatch(/admin console[\s\S]*ADMIN_PORT[\s\S]*3001/);
    // Nothing from elsewhere: it works offline, as /docs does.
    expect(html).not.toMatch(/https?:\/\//);
  });

  it('answers a program with JSON, without a key', async () => {
    for (const accept of [undefined, '*/*', 'application/json']) {
      const res = await svc.app.request('/', accept ? { headers: { Accept: accept } } : {});
      expect(res.status, accept).toBe(200);
      expect(res.headers.get('content-type'), accept).toContain('application/json');
      expect(await res.json(), accept).toEqual({
        name: 'Workflow service API',
        docs: '/docs',
        openapi: '/api/openapi.json',
      });
    }
    // The pointers lead somewhere.
    expect((await svc.app.request('/docs')).status).toBe(200);
    expect((await svc.app.request('/api/openapi.json')).status).toBe(200);
  });
});

describe('the server the OpenAPI document names', () => {
  const serversOf = async (url: string, headers: Record<string, string> = {}) =>
    (await (await svc.app.request(url, { headers })).json()).servers;

  it('is the address the request reached', async () => {
    expect(await serversOf('http://10.0.0.7:3000/api/openapi.json')).toEqual([
      { url: 'http://10.0.0.7:3000', description: 'This service' },
    ]);
  });

  it('is the address a proxy in front reports, its first hop', async () => {
    expect(
      await serversOf('http://10.0.0.7:3000/api/openapi.json', {
        'X-Forwarded-Proto': 'https, http',
        'X-Forwarded-Host': 'api.example.org, 10.0.0.7:3000',
      }),
    ).toEqual([{ url: 'https://api.example.org', description: 'This service' }]);
    // Behind a TLS terminator that keeps the Host header: only the scheme changes.
    expect(
      await serversOf('http://api.example.org/api/openapi.json', { 'X-Forwarded-Proto': 'https' }),
    ).toEqual([{ url: 'https://api.example.org', description: 'This service' }]);
  });

  it('ignores forwarded values that are no scheme or host', async () => {
    expect(
      await serversOf('http://10.0.0.7:3000/api/openapi.json', {
        'X-Forwarded-Proto': 'javascript',
        'X-Forwarded-Host': 'evil.example/<script>',
      }),
    ).toEqual([{ url: 'http://10.0.0.7:3000', description: 'This service' }]);
  });

  it('is PUBLIC_URL when the operator set it, whatever the request says', async () => {
    const pinned = await startTestService({ PUBLIC_URL: 'https://workflows.example.org/base/' });
    try {
      const res = await pinned.app.request('http://10.0.0.7:3000/api/openapi.json', {
        headers: { 'X-Forwarded-Host': 'other.example.org' },
      });
      expect((await res.json()).servers).toEqual([
        { url: 'https://workflows.example.org/base', description: 'This service' },
      ]);
    } finally {
      await pinned.close();
    }
  });
});
