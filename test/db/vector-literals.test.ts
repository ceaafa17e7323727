// Vectors travel to the database as pgvector's text (db/vectors.ts): every float32 must read back as
// itself, whatever its magnitude or sign, and zeros, which a local-model vector is a third made of,
// stay zero. Both backends parse the same text.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { isSparse, sparseVectorLiteral, vectorLiteral } from '../../db/vectors.ts';
import { embedLocal } from '../../runner/embeddings/local.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let tdb: TestDatabase;

beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb?.close();
});

/** The vector as the database holds it, read back as float32 values (sent as `sparsevec` text). */
async function stored(v: Float32Array, sparse = false): Promise<Float32Array> {
  const [row] = await tdb.db.query<{ values: string }>(
    sparse
      ? 'select ($1::sparsevec::vector)::real[]::text as values'
      : 'select ($1::vector)::real[]::text as values',
    [sparse ? sparseVectorLiteral(v) : vectorLiteral(v)],
  );
  if (!row) throw new Error('no row');
  return Float32Array.from(row.values.slice(1, -1).split(','), Number);
}

it('reads every float32 back exactly: extremes, tiny and negative values, zeros', async () => {
  const awkward = [
    0,
    -0,
    1,
    -1,
    0.1,
    -0.1,
    1 / 3,
    2 ** -126,
    2 ** -149,
    1.17549421e-38,
    3.4028234e38,
    -3.4028234e38,
    1e-7,
    9.99999975e-6,
    123456.789,
    0.000123456789,
    16777217,
    5e-324,
  ];
  const v = Float32Array.from(awkward);
  expect(Array.from(await stored(v))).toEqual(Array.from(v).map((x) => (x === 0 ? 0 : x)));
  expect(Array.from(await stored(v, true))).toEqual(Array.from(v).map((x) => (x === 0 ? 0 : x)));
  // Many random values over 80 binary orders of magnitude.
  let seed = 7;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const spread = Float32Array.from(
    { length: 1536 },
    () => (random() - 0.5) * 2 ** Math.floor(random() * 80 - 60),
  );
  expect(await stored(spread)).toEqual(spread);
  expect(await stored(spread, true)).toEqual(spread);
});

it('keeps a local-model vector as computed, with its zeros written as 0', async () => {
  const v = embedLocal('Bees make honey from the nectar of flowers, and store it in wax combs.');
  expect(await stored(v)).toEqual(v);
  const literal = vectorLiteral(v);
  const zeros = Array.from(v).filter((x) => x === 0).length;
  expect(zeros).toBeGreaterThan(0);
  expect(
    literal
      .slice(1, -1)
      .split(',')
      .filter((x) => x === '0'),
  ).toHaveLength(zeros);
});

it('writes a sparse vector as sparsevec text: only the values set, indices from 1, read back the same', async () => {
  const v = embedLocal('Bees make honey from the nectar of flowers, and store it in wax combs.');
  expect(isSparse(v)).toBe(true);
  expect(await stored(v, true)).toEqual(v);
  const literal = sparseVectorLiteral(v);
  const set = Array.from(v).flatMap((x, i) => (x === 0 ? [] : [i + 1]));
  expect(literal.endsWith('}/1536')).toBe(true);
  expect(
    literal
      .slice(1, literal.indexOf('}'))
      .split(',')
      .map((e) => Number(e.split(':')[0])),
  ).toEqual(set);
  // A vector of zeros alone, and one with a single value on each edge.
  expect(Array.from(await stored(new Float32Array(8), true))).toEqual(new Array(8).fill(0));
  const edges = Float32Array.from([0.5, 0, 0, -0.25]);
  expect(sparseVectorLiteral(edges)).toBe('{1:0.500000000,4:-0.250000000}/4');
  expect(await stored(edges, true)).toEqual(edges);
  // A provider's dense vector is not written sparse.
  expect(isSparse(Float32Array.from({ length: 1536 }, (_, i) => (i % 2 ? 0.01 : -0.01)))).toBe(false);
});

it('is refused by the database when a value is not a number', async () => {
  await expect(
    tdb.db.query('select $1::vector', [vectorLiteral(Float32Array.from([1, Number.NaN]))]),
  ).rejects.toThrow(/NaN/);
});
