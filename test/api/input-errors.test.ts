// How the public API words a client's input mistakes: malformed JSON names the line and column of
// its first error (in a body, and in a JSON query parameter), and a missing field reads as such.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';

let svc: TestService;
let tenant: Tenant;

beforeAll(async () => {
  svc = await startTestService();
  tenant = await createTenant(svc.admin, { plan: 'enterprise' });
});
afterAll(() => svc.close());

const post = (path: string, body: string) =>
  svc.app.request(path, {
    method: 'POST',
    headers: { 'X-API-Key': tenant.key, 'Content-Type': 'application/json' },
    body,
  });

describe('malformed JSON', () => {
  it('names the line and column of the first error, and what was expected there', async () => {
    const body = '{\n  "name": "Marketing",\n  "color": \n}';
    const res = await post('/api/v1/workspaces', body);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: 'Malformed JSON body: Unexpected token } at line 4, column 1: expected a value',
    });
  });

  it('names the offending token, counting columns in characters', async () => {
    const cases: [string, string][] = [
      ["{'name': 'x'}", "Unexpected token ' at line 1, column 2: expected a property name in double quotes"],
      [
        '{"name": "x",}',
        'Unexpected token } at line 1, column 14: expected a property name in double quotes',
      ],
      ['{"name": undefined}', 'Unexpected token undefined at line 1, column 10: expected a value'],
      ['{"name": "é"} x', 'Unexpected token x at line 1, column 15: expected nothing after the JSON value'],
      ['{"name": "a\nb"}', 'Unescaped control character U+000A in string at line 1, column 12'],
      ['{"name": "x"', "Unexpected end of input at line 1, column 13: expected ',' or '}'"],
    ];
    for (const [body, message] of cases) {
      const res = await post('/api/v1/workspaces', body);
      expect(res.status, body).toBe(400);
      expect(await res.json(), body).toEqual({ error: `Malformed JSON body: ${message}` });
    }
  });

  it('names the position in a JSON query parameter too', async () => {
    const table = await svc.call('POST', '/api/v1/tables', {
      key: tenant.key,
      body: {
        workspaceId: tenant.workspace.id,
        name: 'people',
        schema: { columns: [{ name: 'email', type: 'string' }] },
      },
    });
    expect(table.status).toBe(200);
    const res = await svc.call('GET', `/api/v1/tables/${table.body.data.table.id}/rows`, {
      key: tenant.key,
      query: { workspaceId: tenant.workspace.id, filter: '{"email": {"$eq": "a"}' },
    });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([
      {
        code: 'custom',
        path: ['filter'],
        message: "Must be JSON: Unexpected end of input at line 1, column 23: expected ',' or '}'",
      },
    ]);
  });
});

describe('missing fields', () => {
  it('reads "<field> is required" in the body, keeping the issue code and path', async () => {
    const res = await svc.call('POST', '/api/v1/workspaces', { key: tenant.key, body: { color: '#3972F6' } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'Invalid request body',
      details: [{ code: 'invalid_type', path: ['name'], message: 'name is required' }],
    });
  });

  it('reads the same for a missing query parameter and a missing nested field', async () => {
    const list = await svc.call('GET', '/api/v1/tables', { key: tenant.key });
    expect(list.status).toBe(400);
    expect(list.body.details).toEqual([
      { code: 'invalid_type', path: ['workspaceId'], message: 'workspaceId is required' },
    ]);
    const created = await svc.call('POST', '/api/v1/tables', {
      key: tenant.key,
      body: { workspaceId: tenant.workspace.id, name: 'nested', schema: { columns: [{ name: 'a' }] } },
    });
    expect(created.status).toBe(400);
    expect(created.body.details).toContainEqual(
      expect.objectContaining({ path: ['schema', 'columns', 0, 'type'], message: 'type is required' }),
    );
  });

  it('keeps zod’s words for a value that is there but wrong', async () => {
    const res = await svc.call('POST', '/api/v1/workspaces', { key: tenant.key, body: { name: 42 } });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([
      { code: 'invalid_type', path: ['name'], message: 'Invalid input: expected string, received number' },
    ]);
  });
});
