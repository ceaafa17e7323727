// References into a block's output that name nothing (a typo, a field the block never gives) fail
// the run naming the reference and the keys that are there, wherever the reference is written: a
// block's fields, function code, a condition. Values legitimately empty still resolve to nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';
import { deployWorkflow } from '../helpers/workflows.ts';

let svc: TestService;
let tenant: Tenant;

beforeAll(async () => {
  svc = await startTestService({}, { runner: true });
  tenant = await createTenant(svc.admin);
});
afterAll(() => svc.close());

const run = async (definition: unknown, inputs: Record<string, unknown> = {}) => {
  const id = await deployWorkflow(svc.admin, tenant.workspace.id, definition);
  const res = await svc.call('POST', `/api/workflows/${id}/execute`, { key: tenant.key, body: { inputs } });
  expect(res.status).toBe(200);
  return res.body;
};

/** `greet` gives these outputs; `done` runs after it with the fields or code given. */
const GREET = {
  id: 'greet',
  type: 'function',
  code:
    'return { message: "Hello, Ada!", user: { name: "Ada", email: "ada@example.com" }, ' +
    'nothing: null, items: [{ sku: "a-1" }] }',
};
const withDone = (done: Record<string, unknown>) => ({
  inputs: { nickname: { type: 'string' } },
  blocks: [GREET, { id: 'done', ...done }],
  edges: [{ from: 'greet', to: 'done' }],
});

describe('a reference to an output that does not exist', () => {
  it('fails the run naming the reference and the outputs the block has', async () => {
    const body = await run(withDone({ type: 'response', data: { message: '<greet.mesage>' } }));
    expect(body.success).toBe(false);
    expect(body.error).toBe(
      'Block "done" failed: Reference <greet.mesage> not found: block "greet" has outputs message, user, nothing, items',
    );
  });

  it('names the part missing deeper in, with the keys at that level', async () => {
    const nested = await run(withDone({ type: 'response', data: { to: 'Mail <greet.user.emial> now' } }));
    expect(nested.error).toBe(
      'Block "done" failed: Reference <greet.user.emial> not found: <greet.user> has no "emial" (its keys: name, email)',
    );
    const inList = await run(withDone({ type: 'response', data: { sku: '<greet.items.0.skus>' } }));
    expect(inList.error).toBe(
      'Block "done" failed: Reference <greet.items.0.skus> not found: <greet.items.0> has no "skus" (its keys: sku)',
    );
  });

  it('fails the same in function code and in a condition', async () => {
    const code = await run(withDone({ type: 'function', code: 'return { m: <greet.mesage> }' }));
    expect(code.error).toBe(
      'Block "done" failed: Reference <greet.mesage> not found: block "greet" has outputs message, user, nothing, items',
    );
    const condition = await run(
      withDone({ type: 'condition', branches: [{ id: 'yes', if: '<greet.user.age> > 18' }, { id: 'no' }] }),
    );
    expect(condition.error).toBe(
      'Block "done" failed: Reference <greet.user.age> not found: <greet.user> has no "age" (its keys: name, email)',
    );
  });
});

describe('references that find nothing legitimately', () => {
  it('resolve to nothing: under a null, past the end of a list, an input not given', async () => {
    const body = await run(
      withDone({
        type: 'response',
        data: {
          underNull: '<greet.nothing.x>',
          pastEnd: '<greet.items.3>',
          nickname: '<start.nickname>',
          length: '<greet.message.length>',
          text: 'n=<greet.nothing>',
        },
      }),
    );
    expect(body).toMatchObject({ success: true, output: { length: 11, text: 'n=' } });
    expect(Object.keys(body.output).sort()).toEqual(['length', 'text']);
  });
});
