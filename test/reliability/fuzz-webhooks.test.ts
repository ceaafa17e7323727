// Fuzzing an inbound webhook with a valid token: the body is the workflow's inputs, so any JSON object
// (or form fields) is accepted, and everything else (invalid UTF-8, text Postgres cannot store, JSON
// that is not an object, 10,000 levels of nesting, multipart, oversized) is a 4xx `{error}` that
// runs and stores nothing. A signed webhook judges the body only after a valid signature.
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployWorkflow } from '../helpers/workflows.ts';
import { expectCleanRefusal, type Fixture, fingerprint, rawRequest, startFixture } from './fuzz-helpers.ts';

const SEED = 20261122;
const SECRET = 'fuzz-webhook-secret-0123456789';
let fx: Fixture;
let open: string;
let signed: string;
let sent = 0;

beforeAll(async () => {
  fx = await startFixture();
  // A workflow with no declared inputs: any object is valid inputs, so only the body's form is judged.
  const workflowId = await deployWorkflow(fx.svc.admin, fx.workspaceId, {
    blocks: [{ id: 'done', type: 'response', data: 'ok' }],
    edges: [],
  });
  open = (await fx.svc.admin.webhooks.create.mutate({ workflowId })).url;
  signed = (await fx.svc.admin.webhooks.create.mutate({ workflowId, secret: SECRET })).url;
});
afterAll(async () => {
  // The number of requests sent, for the report.
  console.log(`webhook fuzz: ${sent} requests sent`);
  await fx.svc.close();
});

const sign = (body: Uint8Array<ArrayBuffer>) =>
  `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;

/** Posts the same bytes to both webhooks, the signed one with a valid signature. */
async function postBoth(body: Uint8Array<ArrayBuffer>, contentType: string) {
  sent += 2;
  return Promise.all(
    [open, signed].map((url) =>
      rawRequest(fx.svc, 'POST', url, {
        headers: {
          'Content-Type': contentType,
          ...(url === signed ? { 'X-Webhook-Signature': sign(body) } : {}),
        },
        body,
      }),
    ),
  );
}

const bytes = (text: string) => new Uint8Array(Buffer.from(text, 'utf8'));
const DEEP = 10_000;

/** Bodies no webhook may run: [what, bytes, content type]. */
const REFUSED: [string, Uint8Array<ArrayBuffer>, string][] = [
  [
    'invalid UTF-8 in JSON',
    new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]),
    'application/json',
  ],
  [
    'a lone surrogate encoded in UTF-8',
    new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]),
    'application/json',
  ],
  [
    'invalid UTF-8 in form fields',
    new Uint8Array([0x61, 0x3d, 0xc3, 0x28]),
    'application/x-www-form-urlencoded',
  ],
  ['a NUL in a JSON value', bytes('{"a":"x\\u0000y"}'), 'application/json'],
  ['a NUL in a JSON key', bytes('{"\\u0000":1}'), 'application/json'],
  ['an escaped lone surrogate', bytes('{"a":"\\ud800"}'), 'application/json'],
  ['a NUL in a nested value', bytes('{"a":{"b":["\\u0000"]}}'), 'application/json'],
  ['a percent-encoded NUL in a form value', bytes('a=x%00y'), 'application/x-www-form-urlencoded'],
  ['a percent-encoded NUL in a form name', bytes('%00=1'), 'application/x-www-form-urlencoded'],
  [
    'a percent-encoded lone surrogate in a form value',
    bytes('a=%ED%A0%80'),
    'application/x-www-form-urlencoded',
  ],
  [
    '10,000 levels of objects',
    bytes(`{"a":${'{"a":'.repeat(DEEP)}1${'}'.repeat(DEEP)}}`),
    'application/json',
  ],
  ['10,000 levels of arrays', bytes(`{"a":${'['.repeat(DEEP)}${']'.repeat(DEEP)}}`), 'application/json'],
  ['malformed JSON', bytes('{"a":'), 'application/json'],
  ['a JSON array', bytes('[1,2]'), 'application/json'],
  ['a JSON string', bytes('"inputs"'), 'application/json'],
  ['JSON null', bytes('null'), 'application/json'],
  [
    'multipart',
    bytes('--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--\r\n'),
    'multipart/form-data; boundary=x',
  ],
  ['a body over the JSON limit', bytes(`{"a":"${'x'.repeat(11 * 1024 * 1024)}"}`), 'application/json'],
];

describe('an inbound webhook with a valid token (and signature)', () => {
  it('refuses every body that is not storable workflow inputs with a 4xx {error}, running nothing', async () => {
    const before = await fingerprint(fx.svc);
    for (const [what, body, type] of REFUSED) {
      for (const a of await postBoth(body, type)) {
        expect(a.status, `${what} -> ${a.status} ${a.text.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
        expectCleanRefusal(a, what);
      }
    }
    expect(await fingerprint(fx.svc)).toEqual(before);
  });

  it('refuses every JSON value that is not an object with 400, running nothing', async () => {
    const before = await fingerprint(fx.svc);
    await fc.assert(
      fc.asyncProperty(
        fc.jsonValue({ maxDepth: 3 }).filter((v) => v === null || typeof v !== 'object' || Array.isArray(v)),
        async (value) => {
          for (const a of await postBoth(bytes(JSON.stringify(value)), 'application/json')) {
            expect(a.status).toBe(400);
            expectCleanRefusal(a, `body ${JSON.stringify(value).slice(0, 80)}`);
          }
        },
      ),
      { seed: SEED, numRuns: 40 },
    );
    expect(await fingerprint(fx.svc)).toEqual(before);
  });

  it('accepts any JSON object of storable text, and any form fields, as the inputs', async () => {
    const storable = fc.string({ unit: 'grapheme', maxLength: 12 }).filter((s) => !s.includes('\u0000'));
    const objects = fc.dictionary(storable, fc.jsonValue({ maxDepth: 3, stringUnit: 'grapheme' }), {
      maxKeys: 5,
    });
    const forms = fc.array(fc.tuple(storable, storable), { maxLength: 5 });
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(objects, forms), async (value) => {
        const form = Array.isArray(value);
        const text = form ? new URLSearchParams(value).toString() : JSON.stringify(value);
        const type = form ? 'application/x-www-form-urlencoded' : 'application/json';
        for (const a of await postBoth(bytes(text), type)) {
          expect(a.status, `${text.slice(0, 120)} -> ${a.status} ${a.text.slice(0, 200)}`).toBe(202);
          accepted++;
        }
      }),
      { seed: SEED, numRuns: 40 },
    );
    expect(accepted).toBe(80);
  });
});
