// Property-based fuzzing of every procedure of the admin plane, enumerated from its router, over raw
// HTTP with the admin token: inputs of the wrong shape, fields of the wrong type, text Postgres cannot
// store, 10,000 levels of nesting, huge strings, invalid UTF-8, malformed JSON and batches of them.
// Every answer is a 4xx tRPC error (`{error: {message, code, data: {code, httpStatus}}}`), never a
// 5xx, and nothing stored changes. Queries may also answer 200 when what they were given is valid.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { adminRouter } from '../../admin/router.ts';
import { ADMIN_TOKEN } from '../helpers/service.ts';
import { type Fixture, fingerprint, startFixture } from './fuzz-helpers.ts';

const SEED = 20261122;
const RUNS = 16;

// biome-ignore lint/suspicious/noExplicitAny: JSON schemas and answers are walked as plain JSON
type Json = any;

interface Procedure {
  path: string;
  type: 'query' | 'mutation';
  /** The JSON schema of its input (an object's properties are what the fuzz aims at). */
  input: Json;
}

function procedures(): Procedure[] {
  const all = adminRouter._def.procedures as Record<string, Json>;
  return Object.entries(all).map(([path, proc]) => {
    const schema = proc._def.inputs[0];
    return {
      path,
      type: proc._def.type,
      input: schema ? z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) : {},
    };
  });
}

let fx: Fixture;
let tried = 0;
const failures: string[] = [];

beforeAll(async () => {
  fx = await startFixture();
});
afterAll(async () => {
  // The number of inputs tried, for the report.
  console.log(`admin fuzz: ${tried} inputs tried, ${failures.length} not a clean 4xx`);
  await fx.svc.close();
});

interface Answer {
  status: number;
  body: Json;
  text: string;
}

async function send(proc: Procedure, raw: string | Uint8Array<ArrayBuffer>, batch = false): Promise<Answer> {
  const path = batch ? `${proc.path},${proc.path}` : proc.path;
  const query = batch ? '?batch=1' : '';
  const headers = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
  const res =
    proc.type === 'query'
      ? await fx.svc.adminApp.request(
          `http://admin.test/trpc/${path}${query}${query ? '&' : '?'}input=${encodeURIComponent(
            typeof raw === 'string' ? raw : Buffer.from(raw).toString('latin1'),
          )}`,
          { headers },
        )
      : await fx.svc.adminApp.request(`http://admin.test/trpc/${path}${query}`, {
          method: 'POST',
          headers,
          body: raw,
        });
  const text = await res.text();
  let body: Json;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  tried++;
  return { status: res.status, body, text };
}

/** A tRPC refusal: 4xx with the error's message, code and HTTP status (each call of a batch alike). */
function isCleanRefusal(a: Answer): boolean {
  if (a.status < 400 || a.status >= 500) return false;
  const errors = Array.isArray(a.body) ? a.body.map((b: Json) => b?.error) : [a.body?.error];
  return errors.every(
    (e: Json) =>
      typeof e?.message === 'string' &&
      e.message !== '' &&
      e.message !== 'Internal server error' &&
      typeof e?.data?.code === 'string' &&
      e.data.httpStatus >= 400 &&
      e.data.httpStatus < 500,
  );
}

/** Judges one answer: a clean refusal, or (for a query only) a 200 to input that happened to be valid. */
function judge(proc: Procedure, what: string, a: Answer) {
  const ok = isCleanRefusal(a) || (proc.type === 'query' && a.status === 200);
  if (!ok) failures.push(`${proc.path} ${what} -> ${a.status} ${a.text.slice(0, 240)}`);
}

/** A value of a type the property does not take. */
function wrongValue(prop: Json): fc.Arbitrary<unknown> {
  const type = Array.isArray(prop?.type) ? prop.type[0] : prop?.type;
  if (type === 'string')
    return fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 3 }));
  if (type === 'number' || type === 'integer')
    return fc.oneof(fc.string({ maxLength: 5 }), fc.constant(1e308), fc.constant(-1), fc.constant({}));
  if (type === 'boolean') return fc.oneof(fc.string({ maxLength: 5 }), fc.integer(), fc.constant(null));
  if (type === 'array') return fc.oneof(fc.string({ maxLength: 5 }), fc.integer(), fc.constant({ a: 1 }));
  if (type === 'object') return fc.oneof(fc.string({ maxLength: 5 }), fc.integer(), fc.constant([1, 2]));
  return fc.oneof(fc.integer(), fc.constant(null), fc.string({ maxLength: 5 }));
}

/** Inputs that must be refused for a procedure, as JSON text. */
function malformed(proc: Procedure): fc.Arbitrary<[string, string]> {
  const props: Record<string, Json> = proc.input?.properties ?? {};
  const names = Object.keys(props);
  const deep = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
  const families: fc.Arbitrary<[string, string]>[] = [
    // Not an object at all (every procedure that takes input takes an object).
    fc
      .oneof(
        fc.integer(),
        fc.string({ maxLength: 8 }),
        fc.array(fc.integer(), { maxLength: 3 }),
        fc.boolean(),
      )
      .map((v) => ['not an object', JSON.stringify(v)]),
    fc.constantFrom<[string, string]>(
      ['malformed JSON', '{"a":'],
      ['deep nesting', deep],
      ['NUL text', '{"name":"a\\u0000b","id":"\\u0000","workspaceId":"\\u0000"}'],
      ['lone surrogate', '{"name":"\\ud800","email":"\\udfff@example.com"}'],
    ),
  ];
  if (names.length) {
    // One property of the wrong type, and extra unknown fields beside it.
    families.push(
      fc
        .constantFrom(...names)
        .chain((name) =>
          fc
            .tuple(
              wrongValue(props[name]),
              fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 })),
            )
            .map(([v, extra]): [string, string] => [
              `${name} of a wrong type`,
              JSON.stringify({ ...extra, [name]: v }),
            ]),
        ),
    );
    // Every property a huge string, or deeply nested.
    families.push(
      fc.constantFrom<[string, string]>(
        ['huge strings', JSON.stringify(Object.fromEntries(names.map((n) => [n, 'x'.repeat(2_000_000)])))],
        ['nested values', `{${names.map((n) => `${JSON.stringify(n)}:${deep}`).join(',')}}`],
      ),
    );
  }
  return fc.oneof(...families);
}

describe('every procedure of the admin plane', () => {
  it('enumerates the router', () => {
    const all = procedures();
    expect(all.length).toBeGreaterThan(60);
    expect(all.map((p) => p.path)).toContain('orgs.create');
  });

  it('refuses malformed input with a 4xx tRPC error, never a 5xx, changing nothing', async () => {
    const before = await fingerprint(fx.svc);
    for (const proc of procedures()) {
      await fc.assert(
        fc.asyncProperty(malformed(proc), async ([what, text]) => {
          const a = await send(proc, text);
          // A query given valid input (a list with all-optional filters) may answer it.
          judge(proc, what, a);
        }),
        { seed: SEED, numRuns: RUNS },
      );
      // Invalid UTF-8 and a batch of two malformed calls.
      judge(
        proc,
        'invalid UTF-8',
        await send(proc, new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])),
      );
      judge(proc, 'batch', await send(proc, '{"0":7,"1":"x"}', true));
    }
    expect(failures).toEqual([]);
    expect(await fingerprint(fx.svc)).toEqual(before);
    expect(tried).toBeGreaterThan(1000);
  }, 240_000);
});
