// How the admin plane words a caller's input mistakes, as the public API does: malformed JSON names
// the line and column of its first error, and a missing field reads "<field> is required".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, adminError, startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.close());

// biome-ignore lint/suspicious/noExplicitAny: tRPC error answers are read as plain JSON
const send = async (path: string, init: RequestInit = {}): Promise<{ status: number; body: any }> => {
  const res = await svc.adminApp.request(`http://admin.test/trpc/${path}`, {
    ...init,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json', ...init.headers },
  });
  return { status: res.status, body: await res.json() };
};

describe('malformed JSON on the admin plane', () => {
  it('names the line and column of a mutation body’s first error, and creates nothing', async () => {
    const before = await svc.admin.users.list.query();
    const res = await send('users.create', {
      method: 'POST',
      body: '{\n  "name": "Eve",\n  "email": \n}',
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      message: 'Malformed JSON body: Unexpected token } at line 4, column 1: expected a value',
      data: { code: 'BAD_REQUEST', httpStatus: 400, path: 'users.create' },
    });
    expect(await svc.admin.users.list.query()).toEqual(before);
  });

  it('names the position in a query’s input parameter, and in a batch', async () => {
    const query = await send(`workspaces.list?input=${encodeURIComponent('{"orgId": }')}`);
    expect(query.status).toBe(400);
    expect(query.body.error.message).toBe(
      'Malformed JSON input parameter: Unexpected token } at line 1, column 11: expected a value',
    );
    const batch = await send('users.create,users.create?batch=1', { method: 'POST', body: '{"0": {' });
    expect(batch.status).toBe(400);
    expect(batch.body.map((a: { error: { message: string } }) => a.error.message)).toEqual([
      'Malformed JSON body: Unexpected end of input at line 1, column 8: expected a property name in double quotes',
      'Malformed JSON body: Unexpected end of input at line 1, column 8: expected a property name in double quotes',
    ]);
  });

  it('checks the token first: a malformed body without it is a 401', async () => {
    const res = await send('users.create', {
      method: 'POST',
      headers: { authorization: 'Bearer wrong' },
      body: '{',
    });
    expect(res.status).toBe(401);
    expect(res.body.error.data.code).toBe('UNAUTHORIZED');
  });
});

describe('missing fields on the admin plane', () => {
  it('reads "<field> is required", with the issue code and path kept', async () => {
    const failure = await adminError(
      svc.admin.workspaces.create.mutate({ name: 'No org' } as unknown as Parameters<
        typeof svc.admin.workspaces.create.mutate
      >[0]),
    );
    expect(failure).toMatchObject({ code: 'BAD_REQUEST', httpStatus: 400, message: 'Invalid input' });
    expect(failure.details).toEqual(
      expect.arrayContaining([
        { code: 'invalid_type', path: ['orgId'], message: 'orgId is required' },
        { code: 'invalid_type', path: ['ownerId'], message: 'ownerId is required' },
      ]),
    );
  });
});
