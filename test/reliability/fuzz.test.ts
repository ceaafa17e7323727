// Property-based fuzzing of every operation of the public API, enumerated from its OpenAPI
// document: malformed bodies (wrong types, missing and extra fields, huge strings, 10,000 levels of
// nesting, invalid UTF-8, wrong content types), duplicate multipart parts on the uploads, fuzzed
// query strings and bad path ids. Each answer must be a 4xx `{error, details?}` (reads of fuzzed
// query strings may also answer 2xx), never a 5xx, and the stored data must not change.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  expectCleanRefusal,
  type Fixture,
  fingerprint,
  isCleanRefusal,
  type RawAnswer,
  rawRequest,
  startFixture,
} from './fuzz-helpers.ts';

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is walked as plain JSON
type Json = any;

const SEED = 20261122;
/** Runs per operation and family: bounded so the file stays well under a minute per backend. */
const RUNS = 30;
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
/** Operations that are not the API's resources: answered without a key, nothing to refuse. */
const PUBLIC_READS = new Set(['GET /', 'GET /health', 'GET /ready', 'GET /api/openapi.json']);

let fx: Fixture;
let doc: Json;
let tried = 0;
const fiveHundreds: string[] = [];

interface Operation {
  method: string;
  path: string;
  name: string;
  params: { in: string; name: string; required?: boolean }[];
  contentTypes: string[];
  body?: Json;
}

function resolve(schema: Json): Json {
  let s = schema;
  while (s?.$ref) s = doc.components.schemas[String(s.$ref).split('/').pop() as string];
  if (s?.allOf) return Object.assign({}, ...s.allOf.map(resolve));
  return s;
}

function operations(): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const m of METHODS) {
      const op = item[m];
      if (!op) continue;
      const content = op.requestBody?.content ?? {};
      const first = Object.values<Json>(content)[0];
      ops.push({
        method: m.toUpperCase(),
        path,
        name: `${m.toUpperCase()} ${path}`,
        params: [...(item.parameters ?? []), ...(op.parameters ?? [])],
        contentTypes: Object.keys(content),
        body: first ? resolve(first.schema) : undefined,
      });
    }
  }
  return ops;
}

/** The real id for a path parameter, so a body's faults (not a missing resource) are what is judged. */
function realId(op: Operation, param: string): string {
  if (param === 'tableId') return fx.tableId;
  if (param === 'fileId') return fx.fileId;
  if (param === 'documentId') return fx.documentId;
  // A chunk id of the right shape (the fixture's document is pending: it has none).
  if (param === 'chunkId') return '1';
  if (param === 'workspaceId') return fx.workspaceId;
  if (param === 'workflowId') return fx.workflowId;
  if (param === 'token') return 'no-such-webhook-token';
  if (param === 'jobId' || param === 'rowId') return '00000000-0000-4000-8000-000000000000';
  if (op.path.startsWith('/api/v1/knowledge/')) return fx.knowledgeBaseId;
  if (op.path.startsWith('/api/workflows/')) return fx.workflowId;
  return '00000000-0000-4000-8000-000000000000';
}

function urlOf(op: Operation, ids: Record<string, string> = {}, query = ''): string {
  const path = op.path.replace(/\{(\w+)\}/g, (_, p: string) => ids[p] ?? encodeURIComponent(realId(op, p)));
  return query ? `${path}?${query}` : path;
}

const headersFor = (op: Operation, extra: Record<string, string> = {}) =>
  PUBLIC_READS.has(op.name) ? extra : { 'X-API-Key': fx.key, ...extra };

/** A value of a type the property does not take (a string where a number goes, and so on). */
function wrongValue(prop: Json): fc.Arbitrary<unknown> {
  const p = resolve(prop) ?? {};
  const type = Array.isArray(p.type) ? p.type[0] : p.type;
  if (type === 'string')
    return p.format === 'uuid' || p.enum || p.pattern
      ? fc.oneof(
          fc.integer(),
          fc.constant(null),
          fc.string({ maxLength: 8 }).map((s) => `not-a-uuid ${s}`),
        )
      : fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 3 }));
  if (type === 'number' || type === 'integer')
    return fc.oneof(fc.string({ maxLength: 5 }), fc.boolean(), fc.constant(null), fc.constant({}));
  if (type === 'boolean') return fc.oneof(fc.string({ maxLength: 5 }), fc.integer(), fc.constant(null));
  if (type === 'array') return fc.oneof(fc.string({ maxLength: 5 }), fc.integer(), fc.constant({ a: 1 }));
  if (type === 'object') return fc.oneof(fc.string({ maxLength: 5 }), fc.integer(), fc.constant([1, 2]));
  return fc.oneof(fc.integer(), fc.constant(null), fc.string({ maxLength: 5 }));
}

const extraFields = fc.dictionary(
  fc.string({ minLength: 1, maxLength: 12 }).map((k) => `x_${k}`),
  fc.jsonValue({ maxDepth: 2 }),
  { maxKeys: 3 },
);

/** The invalid UTF-8 sequences a body or URL may carry. */
const BAD_UTF8 = [
  [0xff],
  [0xfe, 0xff],
  [0xc3, 0x28],
  [0xe2, 0x82],
  [0xf0, 0x28, 0x8c, 0x28],
  [0xed, 0xa0, 0x80],
];

const DEEP = 10_000;
const deepArray = `${'['.repeat(DEEP)}${']'.repeat(DEEP)}`;
const deepObject = `${'{"a":'.repeat(DEEP)}1${'}'.repeat(DEEP)}`;

interface Malformed {
  kind: string;
  contentType?: string;
  body: string | Uint8Array<ArrayBuffer>;
}

/**
 * Malformed JSON bodies for an operation whose body is JSON with required fields: each is invalid
 * whatever the operation (no required field is ever given a value of its type).
 */
function malformedJson(schema: Json): fc.Arbitrary<Malformed> {
  const props: Record<string, Json> = schema?.properties ?? {};
  const required: string[] = schema?.required ?? [];
  const wrongTypes =
    required.length > 0
      ? fc
          .tuple(fc.record(Object.fromEntries(required.map((r) => [r, wrongValue(props[r])]))), extraFields)
          .map(([w, extra]) => ({ ...extra, ...w }))
      : fc.constant({});
  const bad = fc.constantFrom(...BAD_UTF8);
  return fc.oneof(
    // Not an object at all.
    fc
      .oneof(
        fc.string({ maxLength: 20 }),
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
      )
      .map((v) => ({ kind: 'not an object', body: JSON.stringify(v) })),
    // Required fields missing; unknown fields present.
    extraFields.map((e) => ({ kind: 'missing fields', body: JSON.stringify(e) })),
    // Required fields of the wrong type.
    wrongTypes.map((w) => ({ kind: 'wrong types', body: JSON.stringify(w) })),
    // Huge strings: a huge top-level string, or huge values where required fields go.
    fc.integer({ min: 10_000, max: 300_000 }).map((n) => ({
      kind: 'huge string',
      body: JSON.stringify(
        required.length ? Object.fromEntries(required.map((r) => [r, 'x'.repeat(n)])) : 'x'.repeat(n),
      ),
    })),
    // 10,000 levels of nesting.
    fc.constantFrom(
      { kind: 'deep array', body: deepArray },
      { kind: 'deep object', body: deepObject },
      {
        kind: 'deep value',
        body: `{"workspaceId":${deepArray},"data":${deepObject},"filter":${deepObject},"query":${deepArray}}`,
      },
    ),
    // Invalid UTF-8: raw, inside a string, and inside a key.
    fc.tuple(bad, fc.constantFrom('raw', 'value', 'key')).map(([bytes, where]) => {
      const b = Buffer.from(bytes);
      const body =
        where === 'raw'
          ? Buffer.concat([Buffer.from('{"'), b, Buffer.from('":1')])
          : where === 'value'
            ? Buffer.concat([Buffer.from(`{"${required[0] ?? 'x'}":"`), b, Buffer.from('"}')])
            : Buffer.concat([Buffer.from('{"'), b, Buffer.from('":"v"}')]);
      return { kind: `invalid utf-8 (${where})`, body: new Uint8Array(body) };
    }),
    // Broken JSON text, under various content types (or none).
    fc
      .tuple(
        fc.constantFrom('{', '{"a":', '[1,', '{"a" 1}', "{'a':1}", 'undefined', 'NaN', '{"a":1}}', '\u0000'),
        fc.constantFrom('application/json', 'text/plain', undefined, 'application/x-www-form-urlencoded'),
      )
      .map(([body, contentType]) => ({ kind: `broken json (${contentType})`, contentType, body })),
    // A multipart body where JSON is expected.
    fc.constant({
      kind: 'multipart where json is expected',
      contentType: 'multipart/form-data; boundary=XyZ',
      body: '--XyZ\r\nContent-Disposition: form-data; name="workspaceId"\r\n\r\nabc\r\n--XyZ--\r\n',
    }),
  );
}

/** A multipart body of these parts. */
function multipartBody(
  parts: ({ field: string; value: string } | { file: string; name: string; content: string })[],
  boundary = 'fuzzBoundary42',
): Malformed {
  let s = '';
  for (const p of parts) {
    s +=
      'field' in p
        ? `--${boundary}\r\nContent-Disposition: form-data; name="${p.field}"\r\n\r\n${p.value}\r\n`
        : `--${boundary}\r\nContent-Disposition: form-data; name="${p.file}"; filename="${p.name}"\r\nContent-Type: text/plain\r\n\r\n${p.content}\r\n`;
  }
  return {
    kind: 'multipart',
    contentType: `multipart/form-data; boundary=${boundary}`,
    body: `${s}--${boundary}--\r\n`,
  };
}

/** Malformed uploads: duplicate parts, missing parts, bad workspace ids, JSON and text instead, broken framing. */
function malformedUpload(): fc.Arbitrary<Malformed> {
  const ws = fx.workspaceId;
  const file = (name = 'a.txt') => ({ file: 'file', name, content: 'hello' });
  return fc.oneof(
    fc.constantFrom(
      {
        ...multipartBody([{ field: 'workspaceId', value: ws }, file(), file('b.txt')]),
        kind: 'two file parts',
      },
      {
        ...multipartBody([{ field: 'workspaceId', value: ws }, { field: 'workspaceId', value: ws }, file()]),
        kind: 'two workspaceId fields',
      },
      { ...multipartBody([{ field: 'workspaceId', value: ws }]), kind: 'no file part' },
      { ...multipartBody([file()]), kind: 'no workspaceId' },
      { ...multipartBody([]), kind: 'no parts' },
      {
        kind: 'truncated multipart',
        contentType: 'multipart/form-data; boundary=q',
        body: `--q\r\nContent-Disposition: form-data; name="workspaceId"\r\n\r\n${ws}\r\n--q\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhel`,
      },
      { kind: 'multipart without boundary', contentType: 'multipart/form-data', body: 'x' },
      {
        kind: 'json where multipart is expected',
        contentType: 'application/json',
        body: JSON.stringify({ workspaceId: ws }),
      },
      { kind: 'text where multipart is expected', contentType: 'text/plain', body: 'hello' },
      { kind: 'no content type', body: 'hello' },
    ),
    fc
      .oneof(fc.string({ maxLength: 40 }), fc.constant(''), fc.constant('x'.repeat(10_000)))
      .filter((s) => !/^[0-9a-f-]{36}$/i.test(s))
      .map((v) => ({
        ...multipartBody([{ field: 'workspaceId', value: v.replace(/[\r\n-]/g, '') || 'none' }, file()]),
        kind: 'bad workspaceId',
      })),
  );
}

/** A fuzzed query string: each parameter absent or given a strange value, repeats, unknown names. */
function fuzzQuery(op: Operation): fc.Arbitrary<string> {
  const names = op.params.filter((p) => p.in === 'query').map((p) => p.name);
  const value = fc.oneof(
    fc.string({ maxLength: 20 }).map(encodeURIComponent),
    fc.string({ unit: 'grapheme', maxLength: 10 }).map(encodeURIComponent),
    fc.constantFrom(
      '%FF',
      '%C3%28',
      '%ED%A0%80',
      '%',
      '%zz',
      '-1',
      '1e309',
      'NaN',
      '99999999999999999999',
      '[]',
    ),
    fc.constantFrom('{', '{"a":1}', '[{"column":"x"}]', "'%20or%201=1--", '%00').map((s) => s),
    fc.constant('x'.repeat(20_000)),
  );
  const pairs = fc.array(
    fc.tuple(
      names.length ? fc.oneof(fc.constantFrom(...names), fc.constant('unknown')) : fc.constant('unknown'),
      value,
    ),
    { maxLength: 5 },
  );
  return pairs.map((ps) => ps.map(([k, v]) => `${k}=${v}`).join('&'));
}

/** A bad path id: not a UUID, a UUID of nothing, invalid UTF-8, huge. */
const badId = fc.oneof(
  fc.uuid({ version: 4 }),
  fc.constantFrom('not-a-uuid', '%FF%FE', '%C3%28', "1'%20or%20'1'='1", '..', '%00', '-1', 'x'.repeat(5000)),
  fc.string({ minLength: 1, maxLength: 20 }).map(encodeURIComponent),
);

function record(op: Operation, kind: string, a: RawAnswer) {
  tried++;
  if (a.status >= 500) fiveHundreds.push(`${op.name} [${kind}] -> ${a.status} ${a.text.slice(0, 200)}`);
}

beforeAll(async () => {
  fx = await startFixture();
  doc = (await rawRequest(fx.svc, 'GET', '/api/openapi.json')).json;
}, 60_000);

afterAll(async () => {
  // The number of inputs tried, for the report.
  console.log(`fuzz: ${tried} inputs tried, ${fiveHundreds.length} answered 5xx`);
  await fx?.svc.close();
});

describe('every operation of the OpenAPI document', () => {
  it('enumerates the API', () => {
    const ops = operations();
    expect(ops.length).toBeGreaterThanOrEqual(30);
    // The table routes with bodies of their own kind: the upload, the streamed answer, the schema.
    expect(ops.map((o) => o.name)).toEqual(
      expect.arrayContaining([
        'POST /api/v1/tables/{tableId}/rows/import',
        'GET /api/v1/tables/{tableId}/rows/export',
        'POST /api/v1/tables/{tableId}/columns',
        'PATCH /api/v1/tables/{tableId}/columns',
        'DELETE /api/v1/tables/{tableId}/columns',
      ]),
    );
  });

  it('refuses malformed bodies, fuzzed queries and bad path ids with a 4xx {error}, changing nothing', async () => {
    const ops = operations();
    const before = await fingerprint(fx.svc);
    for (const op of ops) {
      const isRead = op.method === 'GET';
      const pathParams = op.params.filter((p) => p.in === 'path').map((p) => p.name);
      const hasBody = op.contentTypes.length > 0;
      const isUpload = op.contentTypes.includes('multipart/form-data');

      // Bodies: every malformed body is refused.
      if (hasBody && !op.name.startsWith('POST /api/webhooks')) {
        const gen = isUpload ? malformedUpload() : malformedJson(op.body);
        await fc.assert(
          fc.asyncProperty(gen, async (m) => {
            const headers = headersFor(op, m.contentType ? { 'Content-Type': m.contentType } : {});
            if (!isUpload && m.contentType === undefined && !m.kind.startsWith('broken'))
              headers['Content-Type'] = 'application/json';
            if (op.name.startsWith('POST /api/mcp')) headers.Accept = 'application/json, text/event-stream';
            const a = await rawRequest(fx.svc, op.method, urlOf(op), { headers, body: m.body });
            record(op, m.kind, a);
            expectCleanRefusal(a, `${op.name} [${m.kind}]`);
          }),
          { seed: SEED, numRuns: RUNS * 2 },
        );
      }

      // Query strings: a read answers 2xx or a clean refusal; never a 5xx.
      await fc.assert(
        fc.asyncProperty(fuzzQuery(op), async (q) => {
          const a = await rawRequest(fx.svc, op.method, urlOf(op, {}, q), {
            headers: headersFor(op, hasBody && !isUpload ? { 'Content-Type': 'application/json' } : {}),
            ...(hasBody ? { body: '[]' } : {}),
          });
          record(op, `query ${q.slice(0, 80)}`, a);
          expect(
            a.status,
            `${op.name}?${q.slice(0, 200)} -> ${a.status} ${a.text.slice(0, 300)}`,
          ).toBeLessThan(500);
          if (a.status >= 400 || !isRead) expectCleanRefusal(a, `${op.name}?${q.slice(0, 200)}`);
        }),
        { seed: SEED, numRuns: RUNS },
      );

      // Path ids: a bad id is refused (or not found).
      for (const param of pathParams) {
        await fc.assert(
          fc.asyncProperty(badId, async (id) => {
            const url = urlOf(
              op,
              { [param]: id },
              op.params.some((p) => p.name === 'workspaceId' && p.in === 'query')
                ? `workspaceId=${fx.workspaceId}`
                : '',
            );
            const headers = headersFor(
              op,
              hasBody && !isUpload ? { 'Content-Type': 'application/json' } : {},
            );
            if (op.name.startsWith('POST /api/mcp')) headers.Accept = 'application/json, text/event-stream';
            const a = await rawRequest(fx.svc, op.method, url, {
              headers,
              ...(hasBody ? { body: JSON.stringify({ workspaceId: fx.workspaceId }) } : {}),
            });
            record(op, `path ${param}=${id.slice(0, 60)}`, a);
            expectCleanRefusal(a, `${op.name} ${param}=${id.slice(0, 80)}`);
          }),
          { seed: SEED, numRuns: RUNS },
        );
      }
    }
    expect(fiveHundreds).toEqual([]);
    expect(await fingerprint(fx.svc)).toEqual(before);
  }, 120_000);
});

describe('10,000 levels of nesting where JSON is stored or compared', () => {
  it('is refused with a 400 naming the column, never a 5xx, changing nothing', async () => {
    const before = await fingerprint(fx.svc);
    const rows = `/api/v1/tables/${fx.tableId}/rows`;
    const headers = { 'X-API-Key': fx.key, 'Content-Type': 'application/json' };
    const ws = JSON.stringify(fx.workspaceId);
    const cases: [string, string, string][] = [
      ['POST', rows, `{"workspaceId":${ws},"data":{"email":"deep@example.com","meta":${deepObject}}}`],
      ['POST', rows, `{"workspaceId":${ws},"data":{"email":"deeper@example.com","meta":${deepArray}}}`],
      ['PUT', rows, `{"workspaceId":${ws},"filter":{"meta":${deepObject}},"data":{"age":1}}`],
      ['PUT', rows, `{"workspaceId":${ws},"filter":{"email":"nobody"},"data":{"meta":${deepArray}}}`],
      ['DELETE', rows, `{"workspaceId":${ws},"filter":{"meta":${deepArray}}}`],
      [
        'POST',
        `${rows}/upsert`,
        `{"workspaceId":${ws},"data":{"email":"deep3@example.com","meta":${deepObject}}}`,
      ],
      // A column's default fills every row; a select column's options are stored with the schema.
      [
        'POST',
        `/api/v1/tables/${fx.tableId}/columns`,
        `{"workspaceId":${ws},"column":{"name":"deep","type":"json"},"default":${deepObject}}`,
      ],
      [
        'POST',
        `/api/v1/tables/${fx.tableId}/columns`,
        `{"workspaceId":${ws},"column":{"name":"deep","type":"select","options":${deepArray}}}`,
      ],
      [
        'PATCH',
        `/api/v1/tables/${fx.tableId}/columns`,
        `{"workspaceId":${ws},"columnName":"meta","updates":{"options":${deepArray}}}`,
      ],
      // The export's filter is JSON in the query string, compared as GET …/rows compares it.
      [
        'GET',
        `${rows}/export?workspaceId=${fx.workspaceId}&filter=${encodeURIComponent(`{"meta":${deepObject}}`)}`,
        '',
      ],
    ];
    for (const [method, url, body] of cases) {
      const a = await rawRequest(fx.svc, method, url, { headers, body });
      tried++;
      const what = `${method} ${url} ${body.slice(0, 80)}`;
      // The store takes JSON values up to 100 levels deep (db/tables/values.ts): a 400 naming the column.
      expect(a.status, `${what} -> ${a.status} ${a.text.slice(0, 300)}`).toBe(400);
      expectCleanRefusal(a, what);
    }
    expect(await fingerprint(fx.svc)).toEqual(before);
  });
});

describe('query parameters Postgres text cannot hold', () => {
  it('are refused (or ignored) on every operation, never a 5xx', async () => {
    for (const op of operations()) {
      const names = op.params.filter((p) => p.in === 'query').map((p) => p.name);
      for (const name of names) {
        for (const v of ['%00', 'a%00b', '%ED%A0%80', '%FF']) {
          const others =
            names.includes('workspaceId') && name !== 'workspaceId' ? `&workspaceId=${fx.workspaceId}` : '';
          const a = await rawRequest(fx.svc, op.method, urlOf(op, {}, `${name}=${v}${others}`), {
            headers: headersFor(op),
          });
          record(op, `query ${name}=${v}`, a);
          expect(a.status, `${op.name}?${name}=${v} -> ${a.status} ${a.text.slice(0, 200)}`).toBeLessThan(
            500,
          );
          if (a.status >= 400) expectCleanRefusal(a, `${op.name}?${name}=${v}`);
        }
      }
    }
  });
});

describe('requests with no key or a bad key', () => {
  it('are refused with 401 {error} on every operation behind the key check', async () => {
    for (const op of operations()) {
      if (PUBLIC_READS.has(op.name) || op.name.startsWith('POST /api/webhooks')) continue;
      for (const key of [undefined, 'wrong', 'x'.repeat(5000), 'sk-\u00ff']) {
        const a = await rawRequest(fx.svc, op.method, urlOf(op), {
          headers: key === undefined ? {} : { 'X-API-Key': key },
        });
        record(op, 'bad key', a);
        expect(a.status, `${op.name} key=${key?.slice(0, 10)}`).toBe(401);
        expect(isCleanRefusal(a, op.path.startsWith('/api/mcp/'))).toBe(true);
      }
    }
  });
});
