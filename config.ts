// Parses the environment once, with zod, into the typed configuration every process shares.
// A wrong value stops start-up with one line that names the variable, before anything listens.
import { z } from 'zod';
import { decodeKey } from './config/kinds.ts';
import { outboundEnv } from './config/outbound-env.ts';
import { runnerEnv } from './config/runner-env.ts';
import { serviceEnv } from './config/service-env.ts';
import { storageEnv } from './config/storage-env.ts';

// Each entry (in config/, by area): the variable, its schema (with its default), and its
// `.describe()` text, which docs/configuration.md shows; scripts/config-docs.ts generates that
// table from this schema and test/config-docs.test.ts fails when the two differ.
export const envSchema = z.object({ ...serviceEnv, ...runnerEnv, ...outboundEnv, ...storageEnv });

// db/ decodes stored keys through this module (the one of config it may import).
export { decodeKey };

// Rules across variables, named by the variable to fix.
const checkedEnvSchema = envSchema.superRefine((env, ctx) => {
  if (env.STORAGE_DRIVER === 's3' && !env.S3_BUCKET)
    ctx.addIssue({ code: 'custom', path: ['S3_BUCKET'], message: 'is required when STORAGE_DRIVER is s3' });
  // One without the other would silently fall back to the SDK's default credentials.
  if (!env.S3_ACCESS_KEY_ID !== !env.S3_SECRET_ACCESS_KEY) {
    const missing = env.S3_ACCESS_KEY_ID ? 'S3_SECRET_ACCESS_KEY' : 'S3_ACCESS_KEY_ID';
    ctx.addIssue({ code: 'custom', path: [missing], message: 'is required with the other S3 credential' });
  }
});

export type Env = z.input<typeof envSchema>;
export type Config = Omit<z.output<typeof envSchema>, 'ENCRYPTION_KEY'> & {
  /** Decoded ENCRYPTION_KEY; undefined until resolved (embedded mode keeps one under DATA_DIR). */
  ENCRYPTION_KEY?: Buffer;
};

/**
 * A start-up failure the operator fixes in the configuration (a variable, a port taken, a DATA_DIR in
 * use): its message is one line naming what to change, shown without a stack.
 */
export class ConfigError extends Error {}

/** Parses an environment (process.env by default); throws ConfigError with one line naming the variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // An empty variable means unset, as shells and .env files commonly produce them.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = checkedEnvSchema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = String(issue?.path[0] ?? 'environment');
    const value = env[name];
    const secret = [
      'ADMIN_TOKEN',
      'ENCRYPTION_KEY',
      'APPROVAL_LINK_SECRET',
      'BOOTSTRAP_API_KEY',
      'OPENAI_API_KEY',
      'RERANK_API_KEY',
      'S3_SECRET_ACCESS_KEY',
    ].includes(name);
    // A variable that must be set but is not has no value to show.
    const shown = secret || value === undefined ? '' : ` (got "${value}")`;
    throw new ConfigError(`Invalid configuration: ${name} ${issue?.message ?? 'is invalid'}${shown}`);
  }
  const { ENCRYPTION_KEY, ...rest } = parsed.data;
  const key = ENCRYPTION_KEY ? decodeKey(ENCRYPTION_KEY) : null;
  if (rest.DATABASE_URL && !key) {
    // Every process against a shared server must decrypt the same keys, so none may invent its own.
    throw new ConfigError('Invalid configuration: ENCRYPTION_KEY is required when DATABASE_URL is set');
  }
  return { ...rest, ...(key ? { ENCRYPTION_KEY: key } : {}) };
}

/** Loads process.env, or prints the one-line reason and exits: the start-up path of every entry point. */
export function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    return exitOnConfigError(err);
  }
}

/**
 * For an entry point's start-up steps (`await step.catch(exitOnConfigError)`): a ConfigError ends the
 * process with its one line and status 1; anything else is thrown on, a bug to see with its stack.
 */
export function exitOnConfigError(err: unknown): never {
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(1);
  }
  throw err;
}

/**
 * The single-role entry points (api, runner, admin) are for production on a shared server; the
 * embedded database belongs to one process, which `npm start` runs with every role in it.
 */
export function requireServerDatabase(config: Config, role: string): Config {
  if (!config.DATABASE_URL) {
    console.error(
      `Invalid configuration: DATABASE_URL is required to run the ${role} alone (the embedded database serves one process: use npm start)`,
    );
    process.exit(1);
  }
  return config;
}
