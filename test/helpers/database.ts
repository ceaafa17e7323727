// A disposable database for one test file: a fresh PGlite loaded from the migrated dump, or a new
// database copied from the migrated template on the test server (dropped again on close).
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { inject } from 'vitest';
import { type Db, openPglite, openPostgres } from '../../db/client.ts';
import { withDatabase } from './global-setup.ts';

export interface TestDatabase {
  db: Db;
  /** The server URL of this database; undefined for PGlite. */
  url?: string;
  close(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const spec = inject('testDatabase');
  if (spec.kind === 'pglite') {
    const db = await openPglite({ loadDataDir: new Blob([readFileSync(spec.dumpFile)]) });
    return { db, close: () => db.close() };
  }
  const name = `wfs_test_${randomBytes(6).toString('hex')}`;
  const admin = openPostgres(spec.serverUrl, { max: 1 });
  await admin.query(`create database ${name} template ${spec.template}`);
  const url = withDatabase(spec.serverUrl, name);
  const db = openPostgres(url, { max: 5 });
  return {
    db,
    url,
    async close() {
      await db.close();
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.close();
    },
  };
}
