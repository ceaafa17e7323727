// Applies the numbered .sql files of db/migrations in order, each once, under an advisory lock,
// so several processes starting at once against one server migrate exactly once.
import { readdirSync, readFileSync } from 'node:fs';
import type { Db } from './client.ts';

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);
// An arbitrary constant shared by every process of this service: the key of the migration lock.
const MIGRATION_LOCK_KEY = 7_310_412_001;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function listMigrations(): Migration[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 4)),
      name: file.slice(5, -4),
      sql: readFileSync(new URL(file, MIGRATIONS_DIR), 'utf8'),
    }));
}

/**
 * Runs fn holding the migration lock: the other installs every process makes at start-up (pg-boss's
 * schema and queues) wait for one another as migrations do. Each statement fn runs starts after the
 * lock is held, so it sees what the previous holder committed: pg-boss's own lock, taken inside the
 * transaction that installs, was not enough (the second installer's session still believed the schema
 * absent and failed on a duplicate key of pg_namespace).
 */
export async function withMigrationLock<T>(db: Db, fn: () => Promise<T>): Promise<T> {
  const release = await db.holdAdvisoryLock(MIGRATION_LOCK_KEY);
  try {
    return await fn();
  } finally {
    await release();
  }
}

/** Brings the schema up to date; returns the versions it applied (none when already current). */
export async function migrate(db: Db): Promise<number[]> {
  return db.transaction(async (tx) => {
    // Transaction-scoped: released at commit, and never left behind by a crashed process.
    await tx.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await tx.query(`create table if not exists schema_migrations (
      version integer primary key, name text not null, applied_at timestamptz not null default now())`);
    const done = new Set(
      (await tx.query<{ version: number }>('select version from schema_migrations')).map((r) => r.version),
    );
    const applied: number[] = [];
    for (const m of listMigrations()) {
      if (done.has(m.version)) continue;
      await tx.exec(m.sql);
      await tx.query('insert into schema_migrations (version, name) values ($1, $2)', [m.version, m.name]);
      applied.push(m.version);
    }
    return applied;
  });
}
