// Vectors travel to the database as pgvector's text (db/vectors.ts): every float32 must read back as
// itself, whatever its magnitude or sign, and zeros, which a local-model vector is a third made of,
// stay zero. Both backends parse the same text.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { vectorLiteral } from '../../db/vectors.ts';
import { embedLocal } from '../../runner/embeddings/local.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let tdb: TestDatabase;

beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb?.close();
});

/** The vector as the database holds it, read back as float32 values. */
async function stored(v: Float32Array): Promise<Float32Array> {
  const [row] = await tdb.db.query<{ values: string }>('select ($1::vector)::real[]::text as values', [
    vectorLiteral(v),
  ]);
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

it('is refused by the database when a value is not a number', async () => {
  await expect(
    tdb.db.query('select $1::vector', [vectorLiteral(Float32Array.from([1, Number.NaN]))]),
  ).rejects.toThrow(/NaN/);
});
