// Where the service reaches out: the outbound HTTP policy, completion callbacks, the model,
// embedding and rerank servers.
import { z } from 'zod';
import { whenUnset } from './kinds.ts';

export const outboundEnv = {
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
};
