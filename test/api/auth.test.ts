// The auth matrix of the public API: every request is judged by its X-API-Key before any route runs,
// and a key acts only where its scope reaches.
import { describe, expect, it } from 'vitest';
import { listen } from '../../http/serve.ts';
import { addPerson } from '../helpers/service.ts';
import { useService } from '../helpers/use-service.ts';

const { svc, tenant, other } = useService({ plan: 'enterprise' });

const audit = (key: string | undefined, workspaceId: string) =>
  svc.call('GET', '/api/v1/audit-logs', { ...(key === undefined ? {} : { key }), query: { workspaceId } });
const createWs = (key: string | undefined, body: unknown = { name: 'Auth test' }) =>
  svc.call('POST', '/api/v1/workspaces', { ...(key === undefined ? {} : { key }), body });

describe('API keys', () => {
  it('refuses a request without a key with 401 {error}', async () => {
    for (const res of [await createWs(undefined), await audit(undefined, tenant.workspace.id)]) {
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: expect.stringContaining('X-API-Key') });
    }
  });

  it('refuses unknown keys, keys of the wrong shape, and an empty header', async () => {
    const forged = `sk-service-${'A'.repeat(32)}`;
    for (const key of [forged, 'not-a-key', tenant.key.slice(0, -1), `${tenant.key}x`, '']) {
      const res = await createWs(key);
      expect(res.status, key).toBe(401);
      expect(res.body.error).toEqual(expect.any(String));
    }
  });

  it('accepts the key with surrounding whitespace trimmed', async () => {
    const res = await audit(` ${tenant.key} `, tenant.workspace.id);
    expect(res.status).toBe(200);
  });

  it('refuses a revoked key, and only that key', async () => {
    const person = await addPerson(svc.admin, tenant, { role: 'admin', permission: 'read' });
    expect((await audit(person.key, tenant.workspace.id)).status).toBe(200);
    await svc.admin.keys.revoke.mutate({ id: person.keyId });
    const res = await audit(person.key, tenant.workspace.id);
    expect(res.status).toBe(401);
    expect(res.body.error).toMatch(/revoked/i);
    expect((await audit(tenant.key, tenant.workspace.id)).status).toBe(200);
  });

  it('never echoes the key in an error', async () => {
    const res = await createWs(tenant.key, { name: 42 });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).not.toContain(tenant.key);
  });
});

describe('key scopes', () => {
  it('refuses a personal key in a workspace that disallows personal keys (403), and allows it again after', async () => {
    await svc.admin.workspaces.update.mutate({
      workspaceId: tenant.workspace.id,
      allowPersonalApiKeys: false,
    });
    try {
      const res = await audit(tenant.key, tenant.workspace.id);
      expect(res.status).toBe(403);
      expect(res.body.error).toMatch(/personal/i);
    } finally {
      await svc.admin.workspaces.update.mutate({
        workspaceId: tenant.workspace.id,
        allowPersonalApiKeys: true,
      });
    }
    expect((await audit(tenant.key, tenant.workspace.id)).status).toBe(200);
  });

  it('refuses a workspace key in another workspace with 403', async () => {
    const { key } = await svc.admin.keys.create.mutate({
      type: 'workspace',
      workspaceId: tenant.workspace.id,
      name: 'ci',
    });
    const res = await audit(key, other.workspace.id);
    expect(res.status).toBe(403);
    expect(res.body.error).toMatch(/another workspace/i);
  });

  it('refuses a workspace key where a personal key is required (workspace creation) and creates nothing', async () => {
    const { key } = await svc.admin.keys.create.mutate({
      type: 'workspace',
      workspaceId: tenant.workspace.id,
      name: 'ci',
    });
    const before = await svc.admin.workspaces.list.query({ orgId: tenant.org.id });
    const res = await createWs(key, { name: 'Should not exist' });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatch(/personal/i);
    expect(await svc.admin.workspaces.list.query({ orgId: tenant.org.id })).toHaveLength(before.length);
  });

  it("never shows another organization's data: its workspace is outside the caller's organization", async () => {
    const res = await audit(tenant.key, other.workspace.id);
    // As a workspace that does not exist: nothing tells the two apart.
    expect(res.status).toBe(404);
    expect(res.body).toEqual((await audit(tenant.key, '00000000-0000-4000-8000-000000000000')).body);
    expect(JSON.stringify(res.body)).not.toContain(other.org.id);
  });

  it('refuses to create a workspace in another organization named by organizationId', async () => {
    const res = await createWs(tenant.key, { name: 'Intruder', organizationId: other.org.id });
    expect(res.status).toBe(403);
    const names = (await svc.admin.workspaces.list.query({ orgId: other.org.id })).map((w) => w.name);
    expect(names).not.toContain('Intruder');
  });
});

describe('responses', () => {
  it('carries a request id on success and on error, and keeps a valid one the client sent', async () => {
    const ok = await audit(tenant.key, tenant.workspace.id);
    const bad = await createWs(undefined);
    expect(ok.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(bad.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(ok.headers.get('x-request-id')).not.toBe(bad.headers.get('x-request-id'));
    const mine = await svc.call('GET', '/api/v1/audit-logs', {
      key: tenant.key,
      query: { workspaceId: tenant.workspace.id },
      headers: { 'X-Request-Id': 'trace-abc-123' },
    });
    expect(mine.headers.get('x-request-id')).toBe('trace-abc-123');
  });

  it('answers an unknown route with 404 {error}', async () => {
    const res = await svc.call('GET', '/api/v1/nothing-here', { key: tenant.key });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: expect.any(String) });
  });

  it('answers malformed JSON with 400 {error}', async () => {
    const res = await svc.app.request('/api/v1/workspaces', {
      method: 'POST',
      headers: { 'X-API-Key': tenant.key, 'Content-Type': 'application/json' },
      body: '{"name": "broken"',
    });
    expect(res.status).toBe(400);
    // The message names where the JSON breaks off.
    expect(await res.json()).toEqual({
      error: "Malformed JSON body: Unexpected end of input at line 1, column 18: expected ',' or '}'",
    });
  });

  it('gives zod issues (code, path, message) as details on 400', async () => {
    const res = await createWs(tenant.key, { name: '', color: 'blue' });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual(expect.any(String));
    const paths = res.body.details.map((d: { path: string[] }) => d.path.join('.'));
    expect(paths.sort()).toEqual(['color', 'name']);
    for (const d of res.body.details)
      expect(d).toEqual({ code: expect.any(String), path: expect.any(Array), message: expect.any(String) });
  });

  it('serves the health check without a key', async () => {
    const res = await svc.call('GET', '/health');
    expect(res.status).toBe(200);
  });
});

describe('body size', () => {
  const LIMIT = 10 * 1024 * 1024;
  const workspaceNames = async () =>
    (await svc.db.query<{ name: string }>('select name from workspaces')).map((w) => w.name);

  it('over HTTP, judges a declared length or counts a chunked body, and refuses past 10 MB with 413', async () => {
    const server = await listen(svc.app, 0, '127.0.0.1');
    try {
      const post = (body: string | ReadableStream<Uint8Array>) =>
        fetch(`${server.url}/api/v1/workspaces`, {
          method: 'POST',
          headers: { 'X-API-Key': tenant.key, 'Content-Type': 'application/json' },
          body,
          duplex: 'half',
        } as RequestInit);
      const json = (name: string, size: number) => {
        const text = JSON.stringify({ name, padding: '' });
        return `${text.slice(0, -2)}${'x'.repeat(size - text.length)}"}`;
      };
      const chunked = (text: string) =>
        new ReadableStream<Uint8Array>({
          start(controller) {
            const bytes = new TextEncoder().encode(text);
            for (let at = 0; at < bytes.length; at += 1 << 20)
              controller.enqueue(bytes.subarray(at, at + (1 << 20)));
            controller.close();
          },
        });

      const declared = await post(json('declared over', LIMIT + 1));
      expect(declared.status).toBe(413);
      expect(await declared.json()).toEqual({ error: expect.stringMatching(/over 10485760 bytes/) });
      const streamed = await post(chunked(json('chunked over', LIMIT + 1)));
      expect(streamed.status).toBe(413);
      await streamed.body?.cancel();

      // Exactly at the limit, both ways: admitted (the padding field is not part of a workspace).
      const atLimit = await post(json('declared at', LIMIT));
      expect(atLimit.status).toBe(200);
      const chunkedAt = await post(chunked(json('chunked at', LIMIT)));
      expect(chunkedAt.status).toBe(200);
      const names = await workspaceNames();
      expect(names).toEqual(expect.arrayContaining(['declared at', 'chunked at']));
      expect(names).not.toContain('declared over');
      expect(names).not.toContain('chunked over');
      // A request without a body is untouched by the limit.
      const list = await fetch(`${server.url}/api/v1/audit-logs?workspaceId=${tenant.workspace.id}`, {
        headers: { 'X-API-Key': tenant.key },
      });
      expect(list.status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('refuses a JSON body over 10 MB with 413 {error}', async () => {
    const res = await svc.app.request('/api/v1/workspaces', {
      method: 'POST',
      headers: { 'X-API-Key': tenant.key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'big', padding: 'x'.repeat(10 * 1024 * 1024) }),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: expect.any(String) });
  });
});
