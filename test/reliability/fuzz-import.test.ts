// Property-based fuzzing of CSV import (POST /api/v1/tables/{id}/rows/import) with files of every
// shape: good rows and bad values, quotes, separators and line breaks anywhere, text Postgres cannot
// store, 10,000 levels of JSON, headers that do not fit, bytes that are not UTF-8. Each answer is a
// 200 or a clean 4xx `{error, details?}`, never a 5xx; mode all keeps every row or none, and the
// table's rowCount moves by exactly what an answer says it imported.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectCleanRefusal, type Fixture, rawRequest, startFixture } from './fuzz-helpers.ts';

const SEED = 20261126;
const RUNS = 120;
const DEEP = 10_000;
const deepArray = `${'['.repeat(DEEP)}${']'.repeat(DEEP)}`;
const deepObject = `${'{"a":'.repeat(DEEP)}1${'}'.repeat(DEEP)}`;

let fx: Fixture;
let tried = 0;
const fiveHundreds: string[] = [];

beforeAll(async () => {
  fx = await startFixture();
}, 60_000);

afterAll(async () => {
  console.log(`fuzz (import): ${tried} files tried, ${fiveHundreds.length} answered 5xx`);
  await fx?.svc.close();
});

describe('CSV import of fuzzed files', () => {
  // Cells of every kind an import meets: good values, wrong types, quotes, separators, line breaks,
  // text Postgres cannot store, deep JSON; lines of any width; bytes that are not UTF-8.
  const cell = fc.oneof(
    fc.constantFrom(
      'a@x.org',
      '1',
      '-2.5e3',
      '{}',
      '[1,"a"]',
      'null',
      'true',
      '',
      ' ',
      'x"y',
      '"q""q"',
      '"a,b"',
    ),
    fc.constantFrom(
      '\u0000',
      '\uD800',
      '"\r\n"',
      '"open',
      deepArray,
      `"${deepObject.replaceAll('"', '""')}"`,
    ),
    fc.string({ unit: fc.constantFrom(',', '"', '\r', '\n', 'a', '1', 'é', '\uFEFF'), maxLength: 8 }),
  );
  // Mostly rows that fit the header (each value good or not), some lines of anything.
  const good = <T>(ok: fc.Arbitrary<T>) =>
    fc.oneof({ arbitrary: ok, weight: 4 }, { arbitrary: cell, weight: 1 });
  const row = fc
    .tuple(
      good(fc.stringMatching(/^[a-z]{1,6}@x\.org$/)),
      good(fc.double({ noNaN: true, noDefaultInfinity: true }).map(String)),
      good(fc.jsonValue({ maxDepth: 2 }).map((v) => `"${JSON.stringify(v).replaceAll('"', '""')}"`)),
    )
    .map((cells) => cells.join(','));
  const junk = fc.array(cell, { minLength: 0, maxLength: 5 }).map((cells) => cells.join(','));
  const line = fc.oneof({ arbitrary: row, weight: 4 }, { arbitrary: junk, weight: 1 });
  const header = fc.oneof(
    { arbitrary: fc.constant('email,age,meta'), weight: 6 },
    { arbitrary: fc.constantFrom('email', 'age,email', 'email,nope', '"email",age', ''), weight: 1 },
  );
  const file = fc
    .tuple(header, fc.array(line, { maxLength: 8 }), fc.constantFrom('\r\n', '\n'))
    .map(([h, lines, eol]) => [h, ...lines].join(eol));
  const bytes = fc.oneof(
    { arbitrary: file.map((t) => Buffer.from(t)), weight: 6 },
    { arbitrary: file.map((t) => Buffer.concat([Buffer.from(t), Buffer.from([0xc3])])), weight: 1 },
  );

  it('answers 200 or a clean 4xx, never a 5xx; mode all keeps all rows or none, skip counts each one', async () => {
    const svc = fx.svc;
    const created = await svc.call('POST', '/api/v1/tables', {
      key: fx.key,
      body: {
        workspaceId: fx.workspaceId,
        name: 'fuzz_import',
        schema: {
          columns: [
            { name: 'email', type: 'string', required: true, unique: true },
            { name: 'age', type: 'number' },
            { name: 'meta', type: 'json' },
          ],
        },
      },
    });
    const tableId = created.body.data.table.id as string;
    const count = async () =>
      (
        await svc.call('GET', `/api/v1/tables/${tableId}`, {
          key: fx.key,
          query: { workspaceId: fx.workspaceId },
        })
      ).body.data.table.rowCount as number;
    await fc.assert(
      fc.asyncProperty(bytes, fc.constantFrom('all', 'skip'), async (csv, mode) => {
        const before = await count();
        const boundary = 'csvFuzz7';
        const body = Buffer.concat([
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="workspaceId"\r\n\r\n${fx.workspaceId}\r\n` +
              `--${boundary}\r\nContent-Disposition: form-data; name="mode"\r\n\r\n${mode}\r\n` +
              `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="f.csv"\r\n\r\n`,
          ),
          csv,
          Buffer.from(`\r\n--${boundary}--\r\n`),
        ]);
        const a = await rawRequest(svc, 'POST', `/api/v1/tables/${tableId}/rows/import`, {
          headers: { 'X-API-Key': fx.key, 'Content-Type': `multipart/form-data; boundary=${boundary}` },
          body: new Uint8Array(body),
        });
        tried++;
        if (a.status >= 500) fiveHundreds.push(`import ${mode} -> ${a.status} ${a.text.slice(0, 200)}`);
        const after = await count();
        if (a.status === 200) {
          expect(after - before).toBe(a.json.data.insertedCount);
          if (mode === 'all') expect(a.json.data.skippedCount).toBe(0);
        } else {
          expectCleanRefusal(a, `import ${mode} ${JSON.stringify(csv.toString('latin1')).slice(0, 200)}`);
          expect(after).toBe(before);
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
    expect(fiveHundreds).toEqual([]);
  });
});
