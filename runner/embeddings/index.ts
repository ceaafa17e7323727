// The embedders a process can use, from its configuration: `local` always (runner/embeddings/local.ts),
// OpenAI's model when a key or a compatible server is configured. The runner passes its ingest pool's
// batch embedding so that a document's chunks embed off the event loop; a query is one short text and
// embeds inline.
import type { Config } from '../../config.ts';
import { ServiceError } from '../../errors.ts';
import type { Embedder, Embedders } from './embedder.ts';
import { embedLocal, LOCAL_EMBEDDING_MODEL } from './local.ts';
import type { OpenAIEmbedderOptions } from './openai.ts';
import { createReranker, type RerankConfig } from './rerank.ts';

export { LOCAL_EMBEDDING_MODEL } from './local.ts';

export type EmbeddingConfig = Pick<
  Config,
  'OPENAI_API_KEY' | 'OPENAI_BASE_URL' | 'EMBEDDING_PROVIDER' | 'EMBEDDING_MODEL'
> &
  Partial<RerankConfig>;

export interface EmbeddersOptions {
  /** Embeds many texts with the local model elsewhere (the runner's ingest pool). */
  embedLocalBatch?: (texts: string[], signal?: AbortSignal) => Promise<Float32Array[]>;
}

export function createEmbedders(config: EmbeddingConfig, options: EmbeddersOptions = {}): Embedders {
  const byModel = new Map<string, Embedder>();
  byModel.set(LOCAL_EMBEDDING_MODEL, localEmbedder(options.embedLocalBatch));
  const openaiConfigured = Boolean(config.OPENAI_API_KEY || config.OPENAI_BASE_URL);
  if (openaiConfigured) {
    const openai = lazyOpenAIEmbedder({
      model: config.EMBEDDING_MODEL,
      ...(config.OPENAI_API_KEY ? { apiKey: config.OPENAI_API_KEY } : {}),
      ...(config.OPENAI_BASE_URL ? { baseUrl: config.OPENAI_BASE_URL } : {}),
    });
    // A model named like the local one would shadow it: the local model keeps its name.
    if (!byModel.has(openai.model)) byModel.set(openai.model, openai);
  }
  const provider = config.EMBEDDING_PROVIDER ?? (config.OPENAI_API_KEY ? 'openai' : 'local');
  const defaultModel = provider === 'openai' ? config.EMBEDDING_MODEL : LOCAL_EMBEDDING_MODEL;
  const models = [...byModel.keys()];

  return {
    defaultModel,
    models,
    reranker: createReranker(config),
    get(model) {
      const embedder = byModel.get(model);
      if (embedder) return embedder;
      // The configured OpenAI model, without the settings to reach it.
      const hint =
        model === config.EMBEDDING_MODEL && !openaiConfigured
          ? '; set OPENAI_API_KEY, or OPENAI_BASE_URL for a compatible server'
          : '';
      throw new ServiceError(
        503,
        `Embedding model ${model} is not available on this service (available: ${models.join(', ')})${hint}`,
      );
    },
  };
}

/**
 * The OpenAI embedder, its module imported on first use: @langchain/openai adds some 50 MB to the
 * heap of every process that loads it, and the API and admin processes mostly never embed.
 */
function lazyOpenAIEmbedder(options: OpenAIEmbedderOptions & { model: string }): Embedder {
  let loaded: Promise<Embedder> | undefined;
  const embedder = () => {
    loaded ??= import('./openai.ts').then((m) => m.createOpenAIEmbedder(options));
    return loaded;
  };
  return {
    model: options.model,
    embedDocuments: async (texts, signal) => (await embedder()).embedDocuments(texts, signal),
    embedQuery: async (text, signal) => (await embedder()).embedQuery(text, signal),
  };
}

function localEmbedder(batch: EmbeddersOptions['embedLocalBatch']): Embedder {
  return {
    model: LOCAL_EMBEDDING_MODEL,
    async embedDocuments(texts, signal) {
      if (texts.length === 0) return [];
      if (batch) return batch(texts, signal);
      signal?.throwIfAborted();
      return texts.map(embedLocal);
    },
    async embedQuery(text, signal) {
      signal?.throwIfAborted();
      return embedLocal(text);
    },
  };
}
