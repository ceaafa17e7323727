// The `openai` embedding provider: OpenAIEmbeddings from @langchain/openai against OpenAI or any
// compatible server (OPENAI_BASE_URL: Ollama, vLLM, TEI…). Vectors are checked (1536 finite numbers)
// and L2-normalised here, since some compatible servers do not normalise theirs.
import { OpenAIEmbeddings } from '@langchain/openai';
import { providerLocation, redactKeys } from '../provider-errors.ts';
import { untilAborted } from '../until-aborted.ts';
import { EMBEDDING_DIMENSIONS, type Embedder } from './embedder.ts';

export const DEFAULT_OPENAI_EMBEDDING_MODEL = 'text-embedding-3-small';

export interface OpenAIEmbedderOptions {
  model?: string;
  apiKey?: string;
  baseUrl?: string;
  /** Texts per request (OpenAI accepts up to 2048). */
  batchSize?: number;
  /** Retries of a failed request (5xx, 429, network), with exponential backoff from about a second. */
  maxRetries?: number;
  timeoutMs?: number;
}

// Servers without a key check still need the client to send one (as in runner/blocks/agent.ts).
const PLACEHOLDER_KEY = 'not-needed';

export function createOpenAIEmbedder(options: OpenAIEmbedderOptions): Embedder {
  const model = options.model ?? DEFAULT_OPENAI_EMBEDDING_MODEL;
  const client = new OpenAIEmbeddings({
    model,
    dimensions: EMBEDDING_DIMENSIONS,
    apiKey: options.apiKey || PLACEHOLDER_KEY,
    ...(options.baseUrl ? { configuration: { baseURL: options.baseUrl } } : {}),
    batchSize: options.batchSize ?? 512,
    maxRetries: options.maxRetries ?? 3,
    timeout: options.timeoutMs ?? 60_000,
    // Newlines are meaningful to current models; the replacement was a workaround for old ones.
    stripNewLines: false,
  });
  const fail = (error: unknown) => embeddingError(error, model, options);

  // OpenAIEmbeddings takes no AbortSignal: on abort the caller stops waiting (untilAborted), and the
  // request in flight finishes on its own.
  return {
    model,
    async embedDocuments(texts, signal) {
      if (texts.length === 0) return [];
      const vectors = await untilAborted(client.embedDocuments(texts).catch(fail), signal);
      if (vectors.length !== texts.length) {
        throw new Error(
          `Embedding model ${model} returned ${vectors.length} vectors for ${texts.length} texts`,
        );
      }
      return vectors.map((vector) => unitVector(vector, model));
    },
    async embedQuery(text, signal) {
      const vector = await untilAborted(client.embedQuery(text).catch(fail), signal);
      return unitVector(vector, model);
    },
  };
}

function unitVector(values: ArrayLike<number>, model: string): Float32Array {
  if (values.length !== EMBEDDING_DIMENSIONS) {
    throw new Error(
      `Embedding model ${model} returned vectors of ${values.length} dimensions; this service stores ${EMBEDDING_DIMENSIONS}`,
    );
  }
  const vector = Float32Array.from(values);
  let sum = 0;
  for (const value of vector) sum += value * value;
  if (!Number.isFinite(sum) || sum === 0) {
    throw new Error(`Embedding model ${model} returned a vector that cannot be normalised`);
  }
  const scale = 1 / Math.sqrt(sum);
  for (let i = 0; i < vector.length; i++) vector[i] = (vector[i] as number) * scale;
  return vector;
}

/** A provider failure as a message for the document's status: status, the provider's reason, never the key. */
function embeddingError(error: unknown, model: string, options: OpenAIEmbedderOptions): never {
  const e = (error ?? {}) as { status?: unknown; message?: unknown; error?: unknown; name?: unknown };
  const status = typeof e.status === 'number' ? e.status : undefined;
  const body = e.error as { message?: unknown } | undefined;
  const raw =
    typeof body?.message === 'string'
      ? body.message
      : typeof e.message === 'string'
        ? e.message
        : String(error);
  const reason = redactKeys(raw, options.apiKey);
  const at = providerLocation(options.baseUrl);
  if (status === 401 || status === 403) {
    throw new Error(`The embedding provider at ${at} rejected the API key (HTTP ${status}): ${reason}`);
  }
  if (status !== undefined) {
    throw new Error(`The embedding provider at ${at} answered HTTP ${status} for model ${model}: ${reason}`);
  }
  throw new Error(`The embedding provider at ${at} could not be reached: ${reason}`);
}
