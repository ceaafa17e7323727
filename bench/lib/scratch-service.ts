// A scratch copy of the service's database on a Postgres server, for benches that need real
// connections: a new database, migrated and bootstrapped, dropped again by dispose().
// BENCH_DATABASE_URL names the server (default: the local one).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Config, loadConfig } from '../../config.ts';
import { bootstrap } from '../../db/bootstrap.ts';
import { type Db, openPostgres } from '../../db/client.ts';
import { migrate } from '../../db/migrate.ts';

const SERVER = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface ScratchService {
  db: Db;
  config: Config;
  workspaceId: string;
  organizationId: string;
  apiKey: string;
  dispose(): Promise<void>;
}

export async function startScratchService(env: Record<string, string> = {}): Promise<ScratchService> {
  const dbName = `wfs_bench_${randomBytes(4).toString('hex')}`;
  const adminDb = openPostgres(SERVER, { max: 1 });
  await adminDb.query(`create database ${dbName}`);
  const url = new URL(SERVER);
  url.pathname = `/${dbName}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'wfs-bench-'));
  const config = loadConfig({
    DATABASE_URL: url.toString(),
    ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'error',
    DATABASE_POOL_SIZE: '20',
    RUNNER_CONCURRENCY: '64',
    ...env,
  });
  const db = openPostgres(config.DATABASE_URL as string, { max: config.DATABASE_POOL_SIZE });
  const dispose = async () => {
    await db.close();
    await adminDb.query(`drop database if exists ${dbName} with (force)`);
    await adminDb.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await migrate(db);
    const boot = await bootstrap(db, {
      encryptionKey: config.ENCRYPTION_KEY as Buffer,
      adminToken: 'bench-admin-token-000',
    });
    const [ws] = await db.query<{ organization_id: string }>(
      'select organization_id from workspaces where id = $1',
      [boot.workspaceId],
    );
    return {
      db,
      config,
      workspaceId: boot.workspaceId as string,
      organizationId: ws?.organization_id as string,
      apiKey: boot.apiKey as string,
      dispose,
    };
  } catch (err) {
    await dispose();
    throw err;
  }
}
