// Migrates one database per test run, which every test file then copies: a PGlite data-dir dump
// (embedded, the default), or a template database on TEST_DATABASE_URL's server.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { type Db, openPglite, openPostgres } from '../../db/client.ts';
import { migrate } from '../../db/migrate.ts';
import { startBoss } from '../../jobs/boss.ts';
import { createLogger } from '../../logger.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    testDatabase:
      | { kind: 'pglite'; dumpFile: string }
      | { kind: 'postgres'; serverUrl: string; template: string };
  }
}

export default async function setup(project: TestProject) {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (serverUrl) {
    const template = `wfs_template_${randomBytes(4).toString('hex')}`;
    const admin = openPostgres(serverUrl, { max: 1 });
    await admin.query(`create database ${template}`);
    const tpl = openPostgres(withDatabase(serverUrl, template), { max: 1 });
    await migrate(tpl);
    await installQueues(tpl);
    // A template with open connections cannot be copied.
    await tpl.close();
    project.provide('testDatabase', { kind: 'postgres', serverUrl, template });
    return async () => {
      await admin.query(`drop database if exists ${template} with (force)`);
      await admin.close();
    };
  }
  const db = await openPglite();
  await migrate(db);
  await installQueues(db);
  const dir = mkdtempSync(join(tmpdir(), 'wfs-test-'));
  const dumpFile = join(dir, 'migrated.tar');
  const dump = await db.pglite?.dumpDataDir('none');
  if (!dump) throw new Error('PGlite dump failed');
  writeFileSync(dumpFile, Buffer.from(await dump.arrayBuffer()));
  await db.close();
  project.provide('testDatabase', { kind: 'pglite', dumpFile });
  return () => rmSync(dir, { recursive: true, force: true });
}

export function withDatabase(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

// pg-boss's schema and our queues go into the template too, so no test file pays for creating them.
async function installQueues(db: Db) {
  const boss = await startBoss(db, { log: createLogger('silent'), supervise: false });
  await boss.stop({ graceful: false, close: false });
}
