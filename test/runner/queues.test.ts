// The queues every runner consumes exist on both backends, and a job sent is fetched exactly once.
import type { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startBoss } from '../../jobs/boss.ts';
import { QUEUES } from '../../jobs/queues.ts';
import { createLogger } from '../../logger.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let tdb: TestDatabase;
let boss: PgBoss;

beforeAll(async () => {
  tdb = await createTestDatabase();
  boss = await startBoss(tdb.db, {
    log: createLogger('silent'),
  });
});
afterAll(async () => {
  await boss.stop({ graceful: false, close: false });
  await tdb.close();
});

it('creates every queue the runners consume', async () => {
  expect(await ourQueues(boss)).toEqual(Object.values(QUEUES).sort());
});

it('hands a sent job to exactly one fetch, under the id it was sent with', async () => {
  const id = crypto.randomUUID();
  expect(await boss.send(QUEUES.workflowExecute, { executionId: id }, { id })).toBe(id);
  const [first, second] = await Promise.all([
    boss.fetch(QUEUES.workflowExecute),
    boss.fetch(QUEUES.workflowExecute),
  ]);
  const fetched = [...first, ...second];
  expect(fetched).toHaveLength(1);
  expect(fetched[0]).toMatchObject({ id, data: { executionId: id } });
  await boss.complete(QUEUES.workflowExecute, id);
  expect(await boss.fetch(QUEUES.workflowExecute)).toEqual([]);
});

it('starts again on the same database without recreating anything', async () => {
  const again = await startBoss(tdb.db, {
    log: createLogger('silent'),
  });
  expect(await ourQueues(again)).toEqual(Object.values(QUEUES).sort());
  await again.stop({ graceful: false, close: false });
});

// pg-boss keeps internal queues of its own (`__pgboss__…`).
async function ourQueues(b: PgBoss) {
  return (await b.getQueues())
    .map((q) => q.name)
    .filter((n) => !n.startsWith('__pgboss'))
    .sort();
}
