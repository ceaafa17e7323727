// Migrations: applied once, in order, even when several processes start at the same moment.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { listMigrations, migrate } from '../../db/migrate.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(() => tdb.close());

it('numbers migrations uniquely and in order', () => {
  const versions = listMigrations().map((m) => m.version);
  expect(versions.length).toBeGreaterThan(0);
  expect(versions).toEqual([...new Set(versions)].sort((a, b) => a - b));
});

it('applies nothing to a database that is already current, even from racing starts', async () => {
  const results = await Promise.all([migrate(tdb.db), migrate(tdb.db), migrate(tdb.db)]);
  expect(results).toEqual([[], [], []]);
  const rows = await tdb.db.query<{ version: number }>(
    'select version from schema_migrations order by version',
  );
  expect(rows.map((r) => r.version)).toEqual(listMigrations().map((m) => m.version));
});

it('brings an empty schema up to date exactly once when racing', async () => {
  await tdb.db.exec('drop schema public cascade; create schema public;');
  const results = await Promise.all([migrate(tdb.db), migrate(tdb.db)]);
  const all = listMigrations().map((m) => m.version);
  expect(results.flat().sort((a, b) => a - b)).toEqual(all);
  const [row] = await tdb.db.query<{ n: number }>(
    "select count(*)::int as n from information_schema.tables where table_name = 'workspaces'",
  );
  expect(row?.n).toBe(1);
});
