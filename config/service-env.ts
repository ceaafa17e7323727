// The service's own variables: its listeners (API, admin, metrics), database, secrets, logs,
// migrations and billing.
import { z } from 'zod';
import { bool, decodeKey, port, whenUnset } from './kinds.ts';

export const serviceEnv = {
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
    .describe(
      'Connections per process to `DATABASE_URL` (each process may open one more: docs/operations.md)',
    ),
  // Searches of lexical (sparse) embeddings are answered from postings each process keeps in memory
  // (db/knowledge/vector-memory.ts): 1.2 to 2.7 KB a chunk; bases beyond the budget use the HNSW index.
  KNOWLEDGE_INDEX_MEMORY_MB: z.coerce
    .number()
    .int()
    .min(0)
    .max(65536)
    .default(256)
    .describe(
      "Memory per process for knowledge bases' in-memory search postings (1.2 KB a chunk of 150 tokens to 2.7 KB of 1,024, for a lexical model); 0 leaves every search to the HNSW index",
    ),
  KNOWLEDGE_INDEX_WAIT_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(60_000)
    .default(250)
    .describe(
      "How long a search waits for its knowledge base's postings to load into this process's memory before the HNSW index answers it",
    ),
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
  RUN_MIGRATIONS: bool.default(true).describe('Apply pending migrations at start-up'),
  // Rate limits, spend limits and spend accounting; a self-hosted service may turn them off.
  BILLING_ENABLED: bool
    .default(true)
    .describe('Rate limits, spend limits and spend accounting; `false` turns them off'),
};
