// What embeds text for knowledge bases: one Embedder per model. Every model's vectors have 1536
// dimensions, so all of them share the one `vector(1536)` column; vectors of two models are still
// not comparable, so a knowledge base keeps the model it was created with.
export const EMBEDDING_DIMENSIONS = 1536;

export interface Embedder {
  /** The model name recorded on the knowledge bases embedded with it. */
  readonly model: string;
  /** One unit-length vector per text, in order. */
  embedDocuments(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
  embedQuery(text: string, signal?: AbortSignal): Promise<Float32Array>;
}

import type { Reranker } from './rerank.ts';

export interface Embedders {
  /** Reorders search results (RERANK_BASE_URL); undefined when no rerank server is configured. */
  readonly reranker?: Reranker | undefined;
  /** The model new knowledge bases get unless they name one. */
  readonly defaultModel: string;
  /** The models this process can embed with. */
  readonly models: readonly string[];
  /** The embedder of a model; a ServiceError (503) when this service is not configured for it. */
  get(model: string): Embedder;
}
