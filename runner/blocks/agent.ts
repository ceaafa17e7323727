// The `agent` block: one chat completion from an OpenAI-compatible model provider, its token usage
// priced into the execution's cost. Optionally asks for JSON matching a schema and parses it. When the
// execution streams (ctx.onToken), the answer is streamed and each text delta handed on as it arrives.
import { z } from 'zod';
import { providerLocation, redactKeys } from '../provider-errors.ts';
import type { BlockType, RunnerSettings } from './block.ts';
import { isTransientStatus, parseRetryAfter, TransientFailure } from './failures.ts';
import { priceOf } from './model-prices.ts';

const schema = z.object({
  model: z.string().min(1),
  systemPrompt: z.string().optional(),
  prompt: z.string().min(1),
  temperature: z.number().min(0).max(2).optional(),
  maxTokens: z.number().int().positive().optional(),
  /** A JSON schema the answer must follow; the answer is then parsed into a value. */
  responseFormat: z.record(z.string(), z.unknown()).optional(),
});

export type AgentConfig = z.infer<typeof schema>;

export interface AgentOutput {
  /** The answer's text, or the parsed value when a responseFormat was given. */
  content: unknown;
  /** The model that answered, as the provider names it. */
  model: string;
  tokens: { prompt: number; completion: number; total: number };
  cost: number;
}

// Servers without a key check still need the client to send one.
const PLACEHOLDER_KEY = 'not-needed';

export const agentBlock: BlockType<AgentConfig> = {
  type: 'agent',
  schema,
  async run(config, ctx) {
    const { openaiBaseUrl, openaiApiKey } = ctx.settings;
    if (!openaiBaseUrl && !openaiApiKey) {
      throw new Error(
        'no model provider configured: set OPENAI_API_KEY, or OPENAI_BASE_URL for an OpenAI-compatible server',
      );
    }
    // Imported here: @langchain/openai adds some 50 MB to a process's heap, and the API and admin
    // processes load this module only to validate workflow definitions.
    // ChatOpenAICompletions is ChatOpenAI pinned to /chat/completions: ChatOpenAI switches some model
    // names to the Responses API, which most OpenAI-compatible servers do not implement.
    const { ChatOpenAICompletions } = await import('@langchain/openai');
    const chat = new ChatOpenAICompletions({
      model: config.model,
      apiKey: openaiApiKey || PLACEHOLDER_KEY,
      ...(openaiBaseUrl ? { configuration: { baseURL: openaiBaseUrl } } : {}),
      ...(config.temperature === undefined ? {} : { temperature: config.temperature }),
      ...(config.maxTokens === undefined ? {} : { maxTokens: config.maxTokens }),
      // One retry at most: a failing provider should fail the block quickly, not after minutes. With
      // `retry` on the block, the executor makes every attempt (each a span, with its own delays).
      maxRetries: ctx.retried ? 0 : 1,
    });

    const messages: [string, string][] = [];
    if (config.systemPrompt) messages.push(['system', config.systemPrompt]);
    messages.push(['user', config.prompt]);

    let answer: Awaited<ReturnType<typeof chat.invoke>>;
    try {
      const options = {
        signal: ctx.signal,
        ...(config.responseFormat
          ? {
              response_format: {
                type: 'json_schema' as const,
                json_schema: { name: schemaName(config.responseFormat), schema: config.responseFormat },
              },
            }
          : {}),
      };
      const onToken = ctx.onToken;
      if (onToken && !config.responseFormat) {
        // A streaming caller sees each delta as it arrives; the chunks add up to the same answer,
        // usage included (the client asks the server for it with stream_options).
        let whole: typeof answer | undefined;
        for await (const chunk of await chat.stream(messages, options)) {
          const delta = typeof chunk.content === 'string' ? chunk.content : chunk.text;
          if (delta) onToken(delta);
          whole = whole ? whole.concat(chunk) : chunk;
        }
        if (!whole) throw new Error('model call failed: the stream ended without an answer');
        answer = whole;
      } else answer = await chat.invoke(messages, options);
    } catch (err) {
      if (ctx.signal.aborted) throw new Error('model call aborted: the execution was cancelled or timed out');
      throw providerError(err, ctx.settings);
    }

    const text = typeof answer.content === 'string' ? answer.content : answer.text;
    const content = config.responseFormat ? parseJsonAnswer(text) : text;
    const usage = answer.usage_metadata;
    const promptTokens = usage?.input_tokens ?? 0;
    const completionTokens = usage?.output_tokens ?? 0;
    const reported = answer.response_metadata?.model_name;
    const model = typeof reported === 'string' && reported ? reported : config.model;
    const cost = priceOf(model, promptTokens, completionTokens);
    const output: AgentOutput = {
      content,
      model,
      tokens: {
        prompt: promptTokens,
        completion: completionTokens,
        total: usage?.total_tokens ?? promptTokens + completionTokens,
      },
      cost,
    };
    return { output, cost, usage: { model, promptTokens, completionTokens } };
  },
};

function parseJsonAnswer(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const preview = text.length > 200 ? `${text.slice(0, 200)}…` : text;
    throw new Error(`model answered invalid JSON for the requested responseFormat: ${preview}`);
  }
}

// OpenAI requires a name of [A-Za-z0-9_-]{1,64}; a schema's title is the natural one.
function schemaName(jsonSchema: Record<string, unknown>): string {
  const title = typeof jsonSchema.title === 'string' ? jsonSchema.title : '';
  const name = title.replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 64);
  return name || 'response';
}

/**
 * A provider failure as a message for the execution log: status, the provider's reason, never the key.
 * Time-outs, unreachable providers and 408, 429 or 5xx answers are transient (retried with `retry`).
 */
function providerError(err: unknown, settings: RunnerSettings): Error {
  // With a json_schema format the OpenAI SDK parses the answer itself and throws this on bad JSON.
  if (err instanceof SyntaxError) {
    return new Error('model answered invalid JSON for the requested responseFormat');
  }
  const e = (err ?? {}) as { status?: unknown; message?: unknown; error?: unknown; name?: unknown };
  const status = typeof e.status === 'number' ? e.status : undefined;
  const body = e.error as { message?: unknown } | undefined;
  const reason = redactKeys(
    typeof body?.message === 'string'
      ? body.message
      : typeof e.message === 'string'
        ? e.message
        : String(err),
    settings.openaiApiKey,
  );
  if (status === 401 || status === 403) {
    return new Error(`model provider rejected the API key (HTTP ${status}): ${reason}`);
  }
  if (status !== undefined) {
    const message = `model provider answered HTTP ${status}: ${reason}`;
    if (!isTransientStatus(status)) return new Error(message);
    return new TransientFailure(message, `HTTP ${status}`, parseRetryAfter(headerOf(err, 'retry-after')));
  }
  if (e.name === 'TimeoutError') {
    return new TransientFailure(`model provider timed out: ${reason}`, 'timed out');
  }
  const cause = rootCause(err);
  if (/connection error/i.test(reason) || cause) {
    const why = redactKeys(cause ?? reason, settings.openaiApiKey);
    return new TransientFailure(
      `model provider unreachable at ${providerLocation(settings.openaiBaseUrl)}: ${why}`,
      `unreachable: ${why}`,
    );
  }
  return new Error(`model call failed: ${reason}`);
}

// The OpenAI SDK's errors carry the answer's headers as a Headers object.
function headerOf(err: unknown, name: string): string | undefined {
  const headers = (err as { headers?: unknown } | null)?.headers;
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  if (headers && typeof headers === 'object') {
    const value = (headers as Record<string, unknown>)[name];
    return typeof value === 'string' ? value : undefined;
  }
  return undefined;
}

function rootCause(err: unknown): string | undefined {
  let current = (err as { cause?: unknown } | undefined)?.cause;
  let found: string | undefined;
  for (let depth = 0; current && depth < 5; depth++) {
    const c = current as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof c.code === 'string') found = c.code;
    else if (typeof c.message === 'string' && !found) found = c.message;
    current = c.cause;
  }
  return found;
}
