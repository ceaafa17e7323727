// Parses the environment once, with zod, into the typed configuration every process shares.
// A wrong value stops start-up with one line that names the variable, before anything listens.
import { z } from 'zod';

// 0 asks the system for a free port (the address printed at start-up is the real one).
const port = z.coerce.number().int().min(0).max(65535);
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

// What a variable without a default means when it is unset, for the documentation's Default column
// (a `.meta()` key beside the `.describe()` text); a variable with a default shows its default.
const whenUnset = (text: string) => ({ whenUnset: text });

// Each entry: the variable, its schema (with its default), and its `.describe()` text, which
// docs/configuration.md shows; scripts/config-docs.ts generates that table from this schema and
// test/config-docs.test.ts fails when the two differ.
export const envSchema = z.object({
  PORT: port.default(3000).describe('Port of the public API'),
  HOST: z.string().min(1).default('0.0.0.0').describe('Interface of the public API'),
  // Behind a proxy or a load balancer, the address clients really reach; /docs samples then paste.
  PUBLIC_URL: z
    .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
    .transform((v) => v.replace(/\/+$/, ''))
    .optional()
    .describe(
      'The address clients reach the API at (`https://api.example.com`, or with a path behind a proxy): the server the OpenAPI document names, so the samples on `/docs` work when pasted',
    )
    .meta(
      whenUnset(
        'unset: the address each request reached (`X-Forwarded-Proto`/`X-Forwarded-Host` through a proxy)',
      ),
    ),
  ADMIN_PORT: port.default(3001).describe('Port of the admin plane (also read by the CLI)'),
  // The admin plane holds every key and quota: loopback unless an operator opens it on purpose.
  ADMIN_HOST: z.string().min(1).default('127.0.0.1').describe('Interface of the admin plane'),
  ADMIN_TOKEN: z
    .string()
    .min(16, 'must be at least 16 characters')
    .optional()
    .describe(
      'Bearer token of the admin plane; when unset, one is generated once and only its hash is stored',
    )
    .meta(whenUnset('generated at first start')),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional()
    .describe('`postgres://` URL of a server with pgvector')
    .meta(whenUnset('unset: embedded PGlite')),
  DATABASE_POOL_SIZE: z.coerce
    .number()
    .int()
    .min(1)
    .max(200)
    .default(10)
    .describe('Connections per process to `DATABASE_URL`'),
  DATA_DIR: z
    .string()
    .min(1)
    .default('./.data')
    .describe('Embedded database, generated encryption key, local storage'),
  // 32 bytes, as 64 hex characters or base64; encrypts stored API keys and secrets.
  ENCRYPTION_KEY: z
    .string()
    .refine((v) => decodeKey(v) !== null, 'must be 32 bytes as 64 hex characters or base64')
    .optional()
    .describe('32 bytes as 64 hex characters or base64; seals stored API keys. Required with `DATABASE_URL`')
    .meta(whenUnset('generated under `DATA_DIR` when embedded')),
  BOOTSTRAP_API_KEY: z
    .string()
    .regex(
      /^sk-service-[A-Za-z0-9_-]{16,}$/,
      'must be sk-service- followed by at least 16 base64url characters',
    )
    .optional()
    .describe(
      'The personal key created on an empty database (`sk-service-` + 16 or more base64url characters)',
    )
    .meta(whenUnset('generated')),
  LOG_LEVEL: z
    .enum(['debug', 'info', 'warn', 'error', 'silent'])
    .default('info')
    .describe('Least severe level logged: JSON lines on stderr, one access line per request at `info`'),
  // A listener of its own for GET /metrics (admin token required), so Prometheus can scrape a process
  // without the admin plane being opened: the only way to scrape an API process started alone.
  METRICS_PORT: port
    .optional()
    .describe(
      'A listener of its own serving only `GET /metrics` (admin token required); the way to scrape `npm run api`',
    ),
  METRICS_HOST: z
    .string()
    .min(1)
    .default('127.0.0.1')
    .describe('Interface of that listener (`0.0.0.0` for a Prometheus on another host)'),
  // Runners: how many executions one runner process works at once, and its worker threads.
  RUNNER_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(32)
    .describe('Executions one runner process works at once'),
  WORKER_THREADS: z.coerce
    .number()
    .int()
    .min(1)
    .max(256)
    .optional()
    .describe("Threads of the runner's sandbox pool (function code)")
    .meta(whenUnset('number of cores')),
  WORKFLOW_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(3_600_000)
    .default(300_000)
    .describe("Time limit of an execution (a workflow's `timeoutMs` overrides it)"),
  // How long a sync execute call waits before answering with the job to poll instead.
  SYNC_WAIT_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(3_600_000)
    .default(300_000)
    .describe('How long a sync execute call waits before answering with the job'),
  // An SSE stream with nothing to send for this long sends a comment, so proxies keep it open.
  STREAM_HEARTBEAT_MS: z.coerce
    .number()
    .int()
    .min(10)
    .max(300_000)
    .default(15_000)
    .describe('How often an idle execution event stream sends a heartbeat comment'),
  EXECUTION_EVENTS_RETENTION_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(720)
    .default(24)
    .describe('How long the events of a streamed execution are kept for clients that reconnect'),
  FUNCTION_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(10)
    .max(300_000)
    .default(10_000)
    .describe('Default time limit of a function block'),
  FUNCTION_MEMORY_MB: z.coerce
    .number()
    .int()
    .min(16)
    .max(4096)
    .default(128)
    .describe('Memory limit of a function block'),
  // A runner that stops sending heartbeats (killed, hung) loses its jobs to another after this.
  QUEUE_HEARTBEAT_SECONDS: z.coerce
    .number()
    .int()
    .min(10)
    .max(3600)
    .default(30)
    .describe('A runner silent this long (killed, hung) has its executions retried by another'),
  QUEUE_SUPERVISE_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3600)
    .default(10)
    .describe('How often runners look for such executions'),
  // Schedules: how often runners look for due occurrences (pg-boss's cron pass, claimed by one
  // runner at a time); a firing lands at most this many seconds (plus a poll) after its time.
  SCHEDULE_CHECK_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(45)
    .default(10)
    .describe(
      'How often runners look for due schedules; a firing lands at most this late, plus a couple of seconds',
    ),
  HTTP_ALLOW_LIST: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .describe(
      'Comma-separated hosts, addresses or CIDRs the http block, function fetch and callbacks may reach although they are loopback or private',
    ),
  HTTP_MAX_RESPONSE_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(1_073_741_824)
    .default(10 * 1024 * 1024)
    .describe('Largest response body the http block reads'),
  // Completion callbacks (runner/callback-jobs.ts): a failed delivery is retried after about
  // DELAY × 2^n seconds (with jitter), at most DELAY_MAX apart, LIMIT times. The defaults (30 s,
  // 1 h, 29 retries) keep retrying for about 24 h.
  CALLBACK_RETRY_DELAY_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(86_400)
    .default(30)
    .describe(
      'First retry delay of a failed callback (up to twice that, with jitter); each next one about doubles',
    ),
  CALLBACK_RETRY_DELAY_MAX_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(86_400)
    .default(3600)
    .describe('Longest delay between two callback attempts'),
  CALLBACK_RETRY_LIMIT: z.coerce
    .number()
    .int()
    .min(0)
    .max(100)
    .default(29)
    .describe('Retries before a callback is given up (with the defaults, about 24 hours of retrying)'),
  CALLBACK_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(60_000)
    .default(10_000)
    .describe("How long one completion-callback attempt waits for the receiver's answer"),
  // Approval links (jobs/approval-links.ts): HMAC-signed, expiring, single-use URLs a person without
  // an API key answers a paused execution with.
  APPROVAL_LINK_SECRET: z
    .string()
    .min(32, 'must be at least 32 characters')
    .optional()
    .describe(
      'Signs the approval links of paused executions (HMAC-SHA256); changing it voids the links given out',
    )
    .meta(whenUnset('derived from the encryption key')),
  APPROVAL_LINK_TTL_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(720)
    .default(168)
    .describe('How long an approval link works when its approval has no earlier timeout'),
  OPENAI_BASE_URL: z
    .url()
    .optional()
    .describe('Any OpenAI-compatible server for agent blocks (Ollama, vLLM, …)')
    .meta(whenUnset('OpenAI')),
  OPENAI_API_KEY: z.string().min(1).optional().describe('Key for that server'),
  // Knowledge bases embed with `local` (offline, lexical) or `openai` (OPENAI_BASE_URL serves any
  // compatible server); unset: openai when OPENAI_API_KEY is set, else local.
  EMBEDDING_PROVIDER: z
    .enum(['local', 'openai'])
    .optional()
    .describe(
      'Embedding model of new knowledge bases: `local` (offline, lexical) or `openai` (through `OPENAI_BASE_URL`)',
    )
    .meta(whenUnset('`openai` with a key, else `local`')),
  EMBEDDING_MODEL: z
    .string()
    .min(1)
    .default('text-embedding-3-small')
    .describe("The `openai` provider's model (1,536 dimensions)"),
  // Knowledge search's optional reranking (`rerank: {model, topN}`): a /rerank endpoint of the kind
  // Cohere, Jina and text-embeddings-inference serve; unset, a search asking for reranking is a 400.
  RERANK_BASE_URL: z
    .url()
    .optional()
    .describe('Server whose `/rerank` endpoint reorders knowledge search results (Cohere, Jina, TEI)')
    .meta(whenUnset('reranking off')),
  RERANK_API_KEY: z.string().min(1).optional().describe('Bearer key for that server'),
  RERANK_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(60_000)
    .default(5_000)
    .describe('How long a search waits for the rerank server before answering 502'),
  // Documents one runner ingests at once (parsing and chunking take a worker thread each).
  INGEST_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(64)
    .default(2)
    .describe(
      'Documents one runner processes at once (each takes a worker thread while parsing and chunking)',
    ),
  INGEST_MEMORY_MB: z.coerce
    .number()
    .int()
    .min(128)
    .max(16384)
    .default(1024)
    .describe('Heap limit of an ingestion worker thread; a document that needs more ends `failed`'),
  RUN_MIGRATIONS: bool.default(true).describe('Apply pending migrations at start-up'),
  // Rate limits, spend limits and spend accounting; a self-hosted service may turn them off.
  BILLING_ENABLED: bool
    .default(true)
    .describe('Rate limits, spend limits and spend accounting; `false` turns them off'),
  // Where uploaded files are kept: local disk under DATA_DIR, or an S3-compatible bucket shared
  // by several API processes.
  STORAGE_DRIVER: z
    .enum(['local', 's3'])
    .default('local')
    .describe('Where uploaded files go: `local` (under `DATA_DIR/files`) or `s3`'),
  S3_ENDPOINT: z
    .url()
    .optional()
    .describe('URL of an S3-compatible server (MinIO, R2, Ceph…)')
    .meta(whenUnset('AWS')),
  S3_REGION: z.string().min(1).default('us-east-1').describe('Region of the bucket'),
  S3_BUCKET: z.string().min(1).optional().describe('Bucket of the files; required with `STORAGE_DRIVER=s3`'),
  S3_ACCESS_KEY_ID: z
    .string()
    .min(1)
    .optional()
    .describe('Access key; set with `S3_SECRET_ACCESS_KEY`, or neither (environment, instance role)')
    .meta(whenUnset('SDK default chain')),
  S3_SECRET_ACCESS_KEY: z
    .string()
    .min(1)
    .optional()
    .describe('Secret of that access key')
    .meta(whenUnset('SDK default chain')),
  S3_FORCE_PATH_STYLE: bool
    .default(true)
    .describe(
      '`<endpoint>/<bucket>/<key>` URLs, as most S3-compatible servers want; `false` for virtual hosts',
    ),
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
