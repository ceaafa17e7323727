// Parses the environment once, with zod, into the typed configuration every process shares.
// A wrong value stops start-up with one line that names the variable, before anything listens.
import { z } from 'zod';

// 0 asks the system for a free port (the address printed at start-up is the real one).
const port = z.coerce.number().int().min(0).max(65535);
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

// Each entry: the variable, its schema (with its default), and the line the README's table shows.
const envSchema = z.object({
  PORT: port.default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  ADMIN_PORT: port.default(3001),
  // The admin plane holds every key and quota: loopback unless an operator opens it on purpose.
  ADMIN_HOST: z.string().min(1).default('127.0.0.1'),
  ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional(),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  DATA_DIR: z.string().min(1).default('./.data'),
  // 32 bytes, as 64 hex characters or base64; encrypts stored API keys and secrets.
  ENCRYPTION_KEY: z
    .string()
    .refine((v) => decodeKey(v) !== null, 'must be 32 bytes as 64 hex characters or base64')
    .optional(),
  BOOTSTRAP_API_KEY: z
    .string()
    .regex(
      /^sk-service-[A-Za-z0-9_-]{16,}$/,
      'must be sk-service- followed by at least 16 base64url characters',
    )
    .optional(),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  // A listener of its own for GET /metrics (admin token required), so Prometheus can scrape a process
  // without the admin plane being opened: the only way to scrape an API process started alone.
  METRICS_PORT: port.optional(),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  // Runners: how many executions one runner process works at once, and its worker threads.
  RUNNER_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(32),
  WORKER_THREADS: z.coerce.number().int().min(1).max(256).optional(),
  WORKFLOW_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(300_000),
  // How long a sync execute call waits before answering with the job to poll instead.
  SYNC_WAIT_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(300_000),
  FUNCTION_TIMEOUT_MS: z.coerce.number().int().min(10).max(300_000).default(10_000),
  FUNCTION_MEMORY_MB: z.coerce.number().int().min(16).max(4096).default(128),
  // A runner that stops sending heartbeats (killed, hung) loses its jobs to another after this.
  QUEUE_HEARTBEAT_SECONDS: z.coerce.number().int().min(10).max(3600).default(30),
  QUEUE_SUPERVISE_SECONDS: z.coerce.number().int().min(1).max(3600).default(10),
  // Schedules: how often runners look for due occurrences (pg-boss's cron pass, claimed by one
  // runner at a time); a firing lands at most this many seconds (plus a poll) after its time.
  SCHEDULE_CHECK_SECONDS: z.coerce.number().int().min(1).max(45).default(10),
  HTTP_ALLOW_LIST: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  HTTP_MAX_RESPONSE_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(1_073_741_824)
    .default(10 * 1024 * 1024),
  // Completion callbacks (runner/callback-jobs.ts): a failed delivery is retried after about
  // DELAY × 2^n seconds (with jitter), at most DELAY_MAX apart, LIMIT times. The defaults (30 s,
  // 1 h, 29 retries) keep retrying for about 24 h.
  CALLBACK_RETRY_DELAY_SECONDS: z.coerce.number().int().min(1).max(86_400).default(30),
  CALLBACK_RETRY_DELAY_MAX_SECONDS: z.coerce.number().int().min(1).max(86_400).default(3600),
  CALLBACK_RETRY_LIMIT: z.coerce.number().int().min(0).max(100).default(29),
  CALLBACK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  OPENAI_BASE_URL: z.url().optional(),
  OPENAI_API_KEY: z.string().min(1).optional(),
  // Knowledge bases embed with `local` (offline, lexical) or `openai` (OPENAI_BASE_URL serves any
  // compatible server); unset: openai when OPENAI_API_KEY is set, else local.
  EMBEDDING_PROVIDER: z.enum(['local', 'openai']).optional(),
  EMBEDDING_MODEL: z.string().min(1).default('text-embedding-3-small'),
  // Documents one runner ingests at once (parsing and chunking take a worker thread each).
  INGEST_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  INGEST_MEMORY_MB: z.coerce.number().int().min(128).max(16384).default(1024),
  RUN_MIGRATIONS: bool.default(true),
  // Rate limits, spend limits and spend accounting; a self-hosted service may turn them off.
  BILLING_ENABLED: bool.default(true),
  // Where uploaded files are kept: local disk under DATA_DIR, or an S3-compatible bucket shared
  // by several API processes.
  STORAGE_DRIVER: z.enum(['local', 's3']).default('local'),
  S3_ENDPOINT: z.url().optional(),
  S3_REGION: z.string().min(1).default('us-east-1'),
  S3_BUCKET: z.string().min(1).optional(),
  S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  S3_FORCE_PATH_STYLE: bool.default(true),
});

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

/** Decodes a 32-byte key from hex or base64; null when it is neither. */
export function decodeKey(value: string): Buffer | null {
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  const buf = Buffer.from(value, 'base64');
  return buf.length === 32 ? buf : null;
}

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
      'BOOTSTRAP_API_KEY',
      'OPENAI_API_KEY',
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
