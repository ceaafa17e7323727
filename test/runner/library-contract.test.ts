// The library internals the speed and fault tricks of docs/performance.md lean on ("Speed tricks: the
// ledger" and "Library internals to check on upgrade"): the versions of pg-boss and postgres.js they
// were checked on, the driver patch applied to the installed postgres.js, and the shapes the runner
// reaches inside pg-boss (its SQL captured through a database whose `executeSql` only keeps it, calls
// fenced to the fetched attempt, the methods the job pump calls instead of `work()`). An upgrade fails
// here, loudly and with what to re-check, rather than quietly in the hot path.
import { existsSync, readFileSync } from 'node:fs';
import * as pgBossModule from 'pg-boss';
import { PgBoss } from 'pg-boss';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completeJobsStatement, sendInTransaction, startBoss } from '../../jobs/boss.ts';
import { QUEUES } from '../../jobs/queues.ts';
import { createLogger } from '../../logger.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

/** The versions the tricks were measured and checked on: move them only after re-checking. */
const CHECKED = { 'pg-boss': '12.35.0', postgres: '3.4.9' } as const;

/** What to re-check for each library, named in the failure message. */
const RECHECK: Record<keyof typeof CHECKED, string> = {
  'pg-boss':
    'complete() running its one statement through options.db.executeSql (jobs/boss.ts completeJobsStatement), ' +
    'insert/fetch/touch/complete/fail taking {id, retryCount} attempts and a db option (runner/job-pump.ts, ' +
    'jobs/boss.ts sendInTransaction), and its queue cache (startBoss warms it); run test/runner/job-pump.test.ts, ' +
    'test/e2e/execute.test.ts and test/reliability/faults.test.ts, and bench/execute.ts against the figures in the ledger',
  postgres:
    'rebase patches/postgres+<version>.patch (npx patch-package postgres) and run test/db/connection-loss.test.ts; ' +
    'check that queries made in one event-loop turn still leave in one write, answered in order, and that ' +
    'query.execute() sends at once (Db.atomically, Db.transaction: test/db/atomically.test.ts, ' +
    'test/db/transactions.test.ts); and the prepare option of sql.unsafe (db/client.ts)',
};

const root = new URL('../../', import.meta.url);

function installedVersion(name: keyof typeof CHECKED): string {
  const manifest = JSON.parse(readFileSync(new URL(`node_modules/${name}/package.json`, root), 'utf8'));
  return String(manifest.version);
}

function versionProblem(name: keyof typeof CHECKED): string | null {
  const installed = installedVersion(name);
  if (installed === CHECKED[name]) return null;
  return (
    `${name} ${installed} is installed, but the tricks in docs/performance.md were checked on ${name} ` +
    `${CHECKED[name]}. Re-check: ${RECHECK[name]}. Then update CHECKED in test/runner/library-contract.test.ts, ` +
    `the versions in docs/performance.md ("Library internals to check on upgrade") and package.json's pin.`
  );
}

describe('the library versions the tricks were checked on', () => {
  it(`pg-boss is ${CHECKED['pg-boss']}`, () => {
    expect(versionProblem('pg-boss'), 'pg-boss version').toBeNull();
  });

  it(`postgres (postgres.js) is ${CHECKED.postgres}`, () => {
    expect(versionProblem('postgres'), 'postgres version').toBeNull();
  });
});

describe('the postgres.js patch', () => {
  const patchPath = `patches/postgres+${CHECKED.postgres}.patch`;

  it('is written for the installed version', () => {
    const installed = installedVersion('postgres');
    const exists = existsSync(new URL(`patches/postgres+${installed}.patch`, root));
    expect(
      exists,
      `no patches/postgres+${installed}.patch for the installed postgres ${installed}: rebase ${patchPath} ` +
        '(npx patch-package postgres) and run test/db/connection-loss.test.ts (docs/performance.md, "The Postgres driver patch")',
    ).toBe(true);
  });

  it('is applied to the installed files', () => {
    expect(existsSync(new URL(patchPath, root)), `${patchPath} is missing (docs/performance.md)`).toBe(true);
    // Every line the patch adds must be in the file it patches (patch-package runs on npm install).
    const missing: string[] = [];
    let file = '';
    let checked = 0;
    for (const line of readFileSync(new URL(patchPath, root), 'utf8').split('\n')) {
      const header = /^diff --git a\/(\S+) /.exec(line);
      if (header) {
        file = readFileSync(new URL(header[1] as string, root), 'utf8');
        continue;
      }
      if (!line.startsWith('+') || line.startsWith('+++')) continue;
      const added = line.slice(1).trim();
      if (added.length < 4) continue;
      checked++;
      if (!file.includes(added)) missing.push(added);
    }
    expect(checked).toBeGreaterThan(20);
    expect(
      missing,
      `${patchPath} is not (fully) applied to node_modules/postgres: run npm install (patch-package runs on ` +
        'postinstall), or rebase the patch if postgres was upgraded (docs/performance.md, "The Postgres driver patch")',
    ).toEqual([]);
  });

  it('still finds the query and pool shapes Db.atomically and Db.transaction use', async () => {
    // Nothing is sent: a query leaves only when awaited or executed, and this pool never connects.
    const sql = postgres('postgres://127.0.0.1:1/none', { max: 1, connect_timeout: 1 });
    try {
      const query = sql.unsafe('select 1', [], { prepare: true });
      expect(typeof query.execute, 'postgres.js query.execute() (db/client.ts atomically, transaction)').toBe(
        'function',
      );
      expect(typeof sql.reserve, 'postgres.js sql.reserve() (db/client.ts)').toBe('function');
    } finally {
      await sql.end({ timeout: 0 });
    }
  });
});

describe('the pg-boss internals the runner reaches', () => {
  const QUEUE = QUEUES.workflowExecute;
  let tdb: TestDatabase;
  let boss: PgBoss;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    boss = await startBoss(tdb.db, { log: createLogger('silent'), supervise: false });
  });
  afterAll(async () => {
    await boss?.stop({ graceful: false, close: false });
    await tdb?.close();
  });

  it('exports and methods the runner calls instead of work()', () => {
    for (const method of ['insert', 'fetch', 'touch', 'complete', 'fail'] as const) {
      expect(
        typeof PgBoss.prototype[method],
        `PgBoss.prototype.${method} (runner/job-pump.ts, jobs/boss.ts)`,
      ).toBe('function');
    }
    expect(typeof pgBossModule.fromPglite, 'pg-boss fromPglite (jobs/boss.ts)').toBe('function');
    expect(typeof pgBossModule.CLOCK_OVERRIDE_SETTING, 'pg-boss CLOCK_OVERRIDE_SETTING (jobs/boss.ts)').toBe(
      'string',
    );
  });

  it('builds a completion as one statement through the db option, fenced to the fetched attempt', async () => {
    const id = crypto.randomUUID();
    await tdb.db.transaction((tx) => sendInTransaction(boss, tx, QUEUE, [{ id, data: { n: 1 } }]));
    const [job] = await boss.fetch(QUEUE, { batchSize: 1 });
    expect(job?.id).toBe(id);
    const attempt = { id, retryCount: (job as { retryCount: number }).retryCount };

    // completeJobsStatement keeps only the last statement handed to executeSql: there must be one.
    const calls: string[] = [];
    const keep = {
      async executeSql(text: string) {
        calls.push(text);
        return { rows: [{ count: 0, ids: [] }] };
      },
    };
    await boss.complete(QUEUE, [attempt], null, { db: keep });
    expect(
      calls.length,
      'pg-boss complete() no longer runs exactly one statement through options.db.executeSql: ' +
        'jobs/boss.ts completeJobsStatement would capture part of it (docs/performance.md)',
    ).toBe(1);

    const state = async () =>
      (await tdb.db.query<{ state: string }>('select state from pgboss.job where id = $1', [id]))[0]?.state;
    // Another attempt's completion leaves the job alone (a runner that lost its claim).
    const stale = await completeJobsStatement(boss, QUEUE, [{ id, retryCount: attempt.retryCount + 1 }]);
    await tdb.db.atomically([stale]);
    expect(await state(), 'a completion fenced to another attempt completed the job').toBe('active');
    // The fetched attempt's completion, run with statements of ours, completes it.
    await tdb.db.atomically([await completeJobsStatement(boss, QUEUE, [attempt])]);
    expect(await state(), 'the captured completion, run by us, did not complete the job').toBe('completed');
  });
});
