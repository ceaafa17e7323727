// An `api` bucket's take committed without waiting for the disk (takeRateTokens `unflushed`): the
// setting is its own transaction's only, never left on a pooled connection for the statements
// that follow there, and never applied to a caller's transaction, whose commit must stay durable.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Db, openPostgres } from '../../db/client.ts';
import { takeRateTokens } from '../../db/rate-limits.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let tdb: TestDatabase;
/** One connection (on a server): the statement after the take runs where the take ran. */
let one: Db;

beforeAll(async () => {
  tdb = await createTestDatabase();
  one = tdb.url ? openPostgres(tdb.url, { max: 1 }) : tdb.db;
});
afterAll(async () => {
  if (one !== tdb?.db) await one?.close();
  await tdb?.close();
});

const rate = { requestsPerMinute: 60, maxBurst: 3 };
const ask = (subject: string, wanted = 1) => ({ subject, kind: 'api' as const, rate, wanted });
const now = new Date('2026-11-27T08:00:00Z');
const setting = async (db: Pick<Db, 'query'>) =>
  (await db.query<{ s: string }>("select current_setting('synchronous_commit') as s"))[0]?.s;

it('takes as a durable take does, and leaves the connection committing durably', async () => {
  const first = await takeRateTokens(one, [ask('user:a'), ask('user:a')], now, undefined, {
    unflushed: true,
  });
  expect(first.map((s) => s.granted)).toEqual([1, 1]);
  const second = await takeRateTokens(one, [ask('user:a', 2)], now, undefined, { unflushed: true });
  // A burst of 3 with no time passed: one token left for the two wanted.
  expect(second.map((s) => s.granted)).toEqual([1]);
  expect(await setting(one)).toBe('on');
});

it('is ignored inside a caller transaction, whose commit stays durable', async () => {
  const inside = await one.transaction(async (tx) => {
    const [state] = await takeRateTokens(tx, [ask('user:b')], now, undefined, { unflushed: true });
    return { granted: state?.granted, setting: await setting(tx) };
  });
  expect(inside).toEqual({ granted: 1, setting: 'on' });
  expect(await setting(one)).toBe('on');
});
