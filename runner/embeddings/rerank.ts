// Reranking of knowledge search results against a `/rerank` endpoint of the kind Cohere, Jina and
// Hugging Face's text-embeddings-inference serve (RERANK_BASE_URL, RERANK_API_KEY). Request
// `{model, query, documents, top_n}`; answer `{results: [{index, relevance_score}]}` (Cohere, Jina)
// or TEI's bare `[{index, score}]`. The server failing, answering nonsense or not answering within
// RERANK_TIMEOUT_MS is a 502: a search that asked for reranking does not quietly come back unranked.
import { z } from 'zod';
import type { Config } from '../../config.ts';
import { ServiceError } from '../../errors.ts';

export type RerankConfig = Pick<Config, 'RERANK_BASE_URL' | 'RERANK_API_KEY' | 'RERANK_TIMEOUT_MS'>;

export interface RerankScore {
  /** The document's position in the request. */
  index: number;
  score: number;
}

/** Scores of the documents for the query, best first, at most topN of them. */
export type Reranker = (
  model: string,
  query: string,
  documents: string[],
  topN: number,
) => Promise<RerankScore[]>;

const scored = z.object({ index: z.number().int().min(0), relevance_score: z.number() });
const teiScored = z.object({ index: z.number().int().min(0), score: z.number() });
const answerSchema = z.union([
  z
    .object({ results: z.array(scored) })
    .transform((a) => a.results.map((r) => ({ index: r.index, score: r.relevance_score }))),
  z.array(teiScored),
]);

const badGateway = (why: string) => new ServiceError(502, `Rerank server ${why}`);

/** The reranker of a configuration, or undefined when no rerank server is configured. */
export function createReranker(config: Partial<RerankConfig>): Reranker | undefined {
  const base = config.RERANK_BASE_URL;
  if (!base) return undefined;
  const url = `${base.replace(/\/+$/, '')}/rerank`;
  const timeoutMs = config.RERANK_TIMEOUT_MS ?? 5_000;
  return async (model, query, documents, topN) => {
    if (documents.length === 0) return [];
    let res: Response;
    let body: unknown;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(config.RERANK_API_KEY ? { authorization: `Bearer ${config.RERANK_API_KEY}` } : {}),
        },
        body: JSON.stringify({ model, query, documents, top_n: topN }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      body = await res.json().catch(() => undefined);
    } catch (err) {
      const timedOut = err instanceof Error && err.name === 'TimeoutError';
      throw badGateway(timedOut ? `did not answer within ${timeoutMs} ms` : 'unreachable');
    }
    if (!res.ok) throw badGateway(`answered HTTP ${res.status}`);
    const parsed = answerSchema.safeParse(body);
    if (!parsed.success) throw badGateway('gave an answer that is not a list of {index, relevance_score}');
    // An index outside the request would point at no result; a repeated one would show it twice.
    const seen = new Set<number>();
    for (const r of parsed.data) {
      if (r.index >= documents.length || seen.has(r.index))
        throw badGateway(`gave an unknown index ${r.index}`);
      seen.add(r.index);
    }
    return [...parsed.data].sort((a, b) => b.score - a.score || a.index - b.index).slice(0, topN);
  };
}

/**
 * Reorders search results by the reranker's scores, keeping topN (default: all): each result's
 * `score` becomes its relevance score. A search asking for reranking where none is configured is a 400.
 */
export async function rerankResults<T extends { content: string; score: number }>(
  reranker: Reranker | undefined,
  rerank: { model: string; topN?: number | undefined },
  query: string,
  results: T[],
): Promise<T[]> {
  if (!reranker) {
    throw new ServiceError(400, 'Reranking is not configured on this service (RERANK_BASE_URL)', {
      details: [{ code: 'custom', path: ['rerank'], message: 'No rerank server is configured' }],
    });
  }
  const topN = Math.min(rerank.topN ?? results.length, results.length);
  const scores = await reranker(
    rerank.model,
    query,
    results.map((r) => r.content),
    topN,
  );
  return scores.map((s) => ({ ...(results[s.index] as T), score: s.score }));
}
