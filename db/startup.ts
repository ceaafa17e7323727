// The first steps of every process: open the configured database, bring its schema up to date,
// resolve the encryption key, and on an empty database create the first organization and key.
import { type Config, ConfigError, exitOnConfigError } from '../config.ts';
import type { Logger } from '../logger.ts';
import { type BootstrapResult, bootstrap } from './bootstrap.ts';
import { type Db, openDatabase } from './client.ts';
import { resolveEncryptionKey } from './encryption-key.ts';
import { configureVectorMemory, vectorMemoryOptions } from './knowledge/vector-memory.ts';
import { migrate } from './migrate.ts';

export interface StartedDatabase {
  db: Db;
  encryptionKey: Buffer;
  bootstrapped: BootstrapResult;
}

/**
 * What every entry point does first: start the database (a ConfigError is one line and exit 1),
 * then print the bootstrap banner at once, so a start that fails later (a port taken) does not lose
 * the key and token it created.
 */
export async function startDatabaseAnnounced(config: Config, log: Logger): Promise<StartedDatabase> {
  const started = await startDatabase(config, log).catch(exitOnConfigError);
  for (const line of bootstrapBanner(started.bootstrapped)) console.log(line);
  return started;
}

export async function startDatabase(config: Config, log: Logger): Promise<StartedDatabase> {
  const encryptionKey = resolveEncryptionKey(config);
  const db = await openDatabase(config);
  configureVectorMemory(db, vectorMemoryOptions(config));
  try {
    if (config.RUN_MIGRATIONS) {
      const applied = await migrate(db);
      if (applied.length) log.info('migrations applied', { versions: applied });
    }
    const bootstrapped = await bootstrap(db, {
      encryptionKey,
      ...(config.BOOTSTRAP_API_KEY ? { bootstrapApiKey: config.BOOTSTRAP_API_KEY } : {}),
      ...(config.ADMIN_TOKEN ? { adminToken: config.ADMIN_TOKEN } : {}),
    });
    return { db, encryptionKey, bootstrapped };
  } catch (err) {
    await db.close().catch(() => {});
    const e = err as { code?: string; message?: string };
    // The failures an operator most often meets first, each answered in one line.
    if (/extension "vector"/.test(e.message ?? '')) {
      throw new ConfigError(
        'The database server has no pgvector: install the `vector` extension (docs/operations.md, "Postgres")',
      );
    }
    if (config.DATABASE_URL && UNREACHABLE.includes(e.code ?? '')) {
      throw new ConfigError(
        `Cannot use the database at DATABASE_URL (${serverOf(config.DATABASE_URL)}): ${e.message}; check that the server runs and the URL is right`,
      );
    }
    throw err;
  }
}

// No server there, no such host, no answer, no such database, or credentials refused.
const UNREACHABLE = [
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'CONNECT_TIMEOUT',
  '3D000',
  '28P01',
  '28000',
];

/** Host, port and database of a URL: never its password. */
function serverOf(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || 5432}${u.pathname}`;
}

/** The lines printed once, on the start that created the bootstrap key or admin token. */
export function bootstrapBanner(b: BootstrapResult): string[] {
  const lines: string[] = [];
  if (b.apiKey) {
    lines.push(`Bootstrap API key (personal, shown once): ${b.apiKey}`);
    lines.push(`Default workspace id: ${b.workspaceId}`);
  }
  if (b.adminToken) lines.push(`Admin token (shown once; set ADMIN_TOKEN to use the CLI): ${b.adminToken}`);
  return lines;
}
