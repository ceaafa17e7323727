// Knowledge search (POST /api/v1/knowledge/search): by query text, by tag filters, or both, over
// the live, enabled chunks of the enabled documents of one or more knowledge bases of a workspace.
//
// - vector: the query is embedded once per embedding model among the bases, and chunks are ordered
//   by cosine distance (similarity = 1 - distance). Bases of sparse (lexical) vectors are searched
//   exactly in the process's memory (vector-memory.ts): the best candidates there are checked here
//   (live, enabled, tag filters) and ranked by their stored vectors' distance. Other bases, and any
//   whose postings are not in memory yet, go through the HNSW index: iterative index scans (pgvector
//   0.8, relaxed order) keep a filtered search answering topK results; should the index still come
//   up short (a very selective filter), an exact scan of the filtered chunks answers.
// - hybrid: the vector candidates and the full-text candidates (websearch_to_tsquery, ts_rank_cd)
//   are fused by reciprocal rank (k = 60); similarity stays the chunk's cosine similarity, so it is
//   not in order: each result's `score` is the fused score the results are ordered by.
// - fulltext: the full-text candidates alone, by ts_rank_cd; `score` is that rank, `similarity`
//   still the cosine similarity (so the query is embedded in every mode).
// - tags only (no query): matching chunks, newest document first, then in document order; their
//   similarity is 1, since nothing was compared.
// scoreThreshold drops results whose similarity is below it, after ranking (so fewer than topK may
// come back). Reranking (`rerank`) is not done here: the caller reorders these results.
// Every result carries `score`, what the results are ordered by (highest first): the similarity in
// vector and tags-only searches, the fused score in hybrid ones; so a client sorts by one field.
//
// A chunk is live when its generation is its document's live generation, which is set only when a
// processing completed; so a document being re-processed keeps answering from its old chunks.
import { z } from 'zod';
import { notFound } from '../../errors.ts';
import type { Queryable } from '../client.ts';
import { isStorableText } from '../tables/values.ts';
import { vectorLiteral } from '../vectors.ts';
import { annSql, byDistance, exactSql, type Hit, taggedSql, textSql, toHit } from './search-hits.ts';
import { memoryHits } from './search-memory.ts';
import { compileTagFilters, TAG_FILTER_OPERATORS } from './tag-filters.ts';
import { documentTags, listTags, MAX_TAG_NAME, type TagValue } from './tags.ts';
import { type OpenPostings, vectorMemory } from './vector-memory.ts';

/** The caller's embedding of a query with one model (runner/embeddings/): its vector. */
export type EmbedQuery = (model: string, query: string) => Promise<Float32Array>;

export const MAX_SEARCH_BASES = 20;
export const MAX_TAG_FILTERS = 20;
export const MAX_QUERY_CHARS = 10_000;
export const MAX_TOP_K = 100;
/** Reciprocal rank fusion's damping constant: a result's score is the sum of 1 / (k + rank). */
const RRF_K = 60;
/**
 * Candidates the index weighs per search, at least. With the index's m 32 and ef_construction 200
 * (migration 0006), at 100,000 chunks of local embeddings (bench/knowledge.ts), 800 finds 0.96 of the
 * exact nearest ten at a p50 of 30 ms; 400 found 0.93 (20 ms); the defaults (m 16, ef 100) about half.
 */
const EF_SEARCH = 800;

const tagFilterSchema = z.object({
  tagName: z.string().min(1).max(MAX_TAG_NAME),
  operator: z.enum(TAG_FILTER_OPERATORS),
  // Typed against the tag when the bases' definitions are known; here only the JSON shape.
  value: z.union([z.string(), z.number(), z.boolean()]),
  valueTo: z.union([z.string(), z.number(), z.boolean()]).optional(),
});

export const knowledgeSearchRequest = z
  .object({
    workspaceId: z.uuid(),
    // Duplicates are dropped (case aside, as Postgres reads ids), first mention first.
    knowledgeBaseIds: z
      .array(z.uuid())
      .min(1)
      .max(MAX_SEARCH_BASES)
      .transform((ids) => [...new Set(ids.map((id) => id.toLowerCase()))]),
    query: z
      .string()
      .trim()
      .max(MAX_QUERY_CHARS)
      // Full-text search hands the query to Postgres, whose text holds no NUL (a 500 otherwise).
      .refine(isStorableText, 'Not storable text')
      .optional()
      .transform((q) => (q ? q : undefined)),
    tagFilters: z.array(tagFilterSchema).max(MAX_TAG_FILTERS).optional(),
    topK: z.number().int().min(1).max(MAX_TOP_K).default(10),
    searchMode: z.enum(['vector', 'hybrid', 'fulltext']).default('vector'),
    // The least similarity a result may have; results below it are dropped after ranking.
    scoreThreshold: z.number().min(0).max(1).optional(),
    // Reranking happens outside the store (runner/embeddings/rerank.ts), over this search's results.
    rerank: z
      .object({
        model: z.string().trim().min(1).max(200),
        topN: z.number().int().min(1).max(MAX_TOP_K).optional(),
      })
      .strict()
      .optional(),
  })
  .superRefine((r, ctx) => {
    if (!r.query && !r.tagFilters?.length) {
      ctx.addIssue({ code: 'custom', path: ['query'], message: 'Give a query, tagFilters, or both' });
    }
    if (r.rerank && !r.query) {
      ctx.addIssue({ code: 'custom', path: ['rerank'], message: 'Reranking needs a query' });
    }
  });

export type KnowledgeSearchRequest = z.output<typeof knowledgeSearchRequest>;

export interface SearchResultItem {
  documentId: string;
  documentName: string;
  content: string;
  chunkIndex: number;
  /** 1 - cosine distance to the query, in every mode (1 for a search by tags alone). */
  similarity: number;
  /** What the results are ordered by, highest first: the similarity, or in hybrid mode the fused score. */
  score: number;
  /** The document's tag values by tag name. */
  metadata: Record<string, TagValue>;
}

export interface KnowledgeSearchResponse {
  results: SearchResultItem[];
  /** The trimmed query; '' for a search by tags alone. */
  query: string;
  knowledgeBaseIds: string[];
  topK: number;
  totalResults: number;
}

/**
 * Searches knowledge bases of a workspace. A base that is not in the workspace is a 404 like a
 * missing one, so ids of other workspaces stay unconfirmed; tag filter issues are 400s.
 */
export async function searchKnowledge(
  db: Queryable,
  embedQuery: EmbedQuery,
  workspaceId: string,
  request: KnowledgeSearchRequest,
): Promise<KnowledgeSearchResponse> {
  const ids = request.knowledgeBaseIds;
  const memory = request.query && request.searchMode !== 'fulltext' ? vectorMemory(db) : null;
  // Postings this process already holds are read up to date beside the workspace check, which still
  // decides the answer; a base's first load starts only once the check has passed.
  const early = memory?.holds(ids) ? memory.open(db, ids).catch(() => null) : null;
  const [bases, tags] = await Promise.all([
    db.query<{ id: string; embedding_model: string }>(
      'select id, embedding_model from knowledge_bases where workspace_id = $1 and id = any($2::uuid[])',
      [workspaceId, ids],
    ),
    listTags(db, ids),
  ]);
  if (bases.length !== ids.length) throw notFound('Knowledge base');
  // Vectors of two models are not comparable: each model's bases are searched with its own query
  // vector, and the lists merged by distance.
  const groups = new Map<string, string[]>();
  for (const b of bases) groups.set(b.embedding_model, [...(groups.get(b.embedding_model) ?? []), b.id]);
  const opened = early ? await early : null;
  const opening = Promise.all(
    [...groups.values()].map((baseIds) =>
      opened ? opened.only(baseIds) : memory ? memory.open(db, baseIds).catch(() => null) : null,
    ),
  );
  const tagsOf = (id: string) => tags.get(id) ?? [];

  // Filter parameters follow each statement's own, so compile once per statement shape.
  const compile = (own: unknown[]) => {
    const params = [...own];
    const filter = compileTagFilters(
      request.tagFilters,
      ids.map((id) => ({ id, tags: tagsOf(id) })),
      params,
    );
    return { filter, params };
  };
  compile([]); // 400s for bad filters before any embedding is paid for.

  let hits: Hit[];
  if (!request.query) {
    const { filter, params } = compile([ids, request.topK]);
    hits = (await db.query(taggedSql(filter), params)).map(toHit);
  } else {
    hits = await queryHits(db, embedQuery, request, request.query, groups, await opening, compile);
  }
  // Without a threshold nothing is dropped: an unrelated chunk's similarity can be a hair below 0.
  const threshold = request.scoreThreshold ?? Number.NEGATIVE_INFINITY;
  const results = hits
    .map((h): SearchResultItem => {
      const similarity = h.distance === null ? 1 : 1 - h.distance;
      return {
        documentId: h.document_id,
        documentName: h.filename,
        content: h.content,
        chunkIndex: h.chunk_index,
        similarity,
        score: h.fused ?? (request.searchMode === 'fulltext' ? h.textRank : similarity),
        metadata: documentTags(h.row, tagsOf(h.knowledge_base_id)),
      };
    })
    .filter((r) => r.similarity >= threshold);
  return {
    results,
    query: request.query ?? '',
    knowledgeBaseIds: ids,
    topK: request.topK,
    totalResults: results.length,
  };
}

async function queryHits(
  db: Queryable,
  embedQuery: EmbedQuery,
  request: KnowledgeSearchRequest,
  query: string,
  groups: Map<string, string[]>,
  postings: (OpenPostings | null)[],
  compile: (own: unknown[]) => { filter: string; params: unknown[] },
): Promise<Hit[]> {
  const vectors = await Promise.all([...groups.keys()].map((model) => embedQuery(model, query)));
  const hybrid = request.searchMode === 'hybrid';
  const fulltext = request.searchMode === 'fulltext';
  const depth = hybrid ? Math.max(request.topK * 4, 50) : request.topK;

  // A query vector as text is 0.5 ms of CPU (1,536 values): only the statements that read it pay for it.
  const literals: string[] = [];
  const literal = (g: number) => (literals[g] ??= vectorLiteral(vectors[g] as Float32Array));
  const baseLists = [...groups.values()];
  // Groups served from memory need no transaction (the index's settings are what one is for).
  const fromMemory = await Promise.all(
    baseLists.map((baseIds, g) => {
      const inMemory = fulltext ? null : postings[g];
      return inMemory ? memoryHits(db, inMemory, vectors[g] as Float32Array, baseIds, depth, compile) : null;
    }),
  );
  const vectorHits = fromMemory.flatMap((found) => found ?? []);
  const textHits: Hit[] = [];
  const needsIndex = !fulltext && fromMemory.some((found) => !found);
  if (needsIndex || hybrid || fulltext) {
    await db.transaction(async (tx) => {
      let tuned = false;
      const annHits = async (q: string, baseIds: string[]) => {
        if (!tuned) {
          // Relaxed iterative scans go on through the index until enough chunks pass the filters;
          // the answer is re-sorted below. ef_search bounds the first pass and so the recall. At
          // ef_search 400 the planner prices the index scan above a sequential scan and sort of
          // every chunk (wrongly: 5 ms against 350 ms at 100,000 chunks), so sequential scans are
          // off for it.
          await tx.query(
            `select set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', $1, true),
                    set_config('enable_seqscan', 'off', true)`,
            [String(Math.min(1000, Math.max(EF_SEARCH, 2 * depth)))],
          );
          tuned = true;
        }
        const ann = compile([q, baseIds]);
        const found = (await tx.query(annSql(ann.filter, depth), ann.params)).map(toHit);
        if (found.length >= depth) return found;
        // Few chunks pass the filters: scoring them all is the cheap and exact way.
        await tx.query("select set_config('enable_seqscan', 'on', true)");
        const exact = compile([q, baseIds, depth]);
        return (await tx.query(exactSql(exact.filter), exact.params)).map(toHit);
      };
      for (const [g, baseIds] of baseLists.entries()) {
        const q = literal(g);
        // Full-text mode ranks by text alone; its statement still reads each chunk's distance.
        if (!fulltext && !fromMemory[g]) vectorHits.push(...(await annHits(q, baseIds)));
        if (hybrid || fulltext) {
          const text = compile([q, baseIds, depth, query]);
          textHits.push(...(await tx.query(textSql(text.filter), text.params)).map(toHit));
        }
      }
    });
  }
  const lists = { vectorHits, textHits };

  // Each group's statement ranked by one function, so the lists merge by rank as they are.
  const textRanked = lists.textHits.sort((a, b) => b.textRank - a.textRank || a.id - b.id).slice(0, depth);
  if (fulltext) return textRanked;
  const vectorRanked = lists.vectorHits.sort(byDistance).slice(0, depth);
  if (!hybrid) return vectorRanked;
  const fused = new Map<number, { hit: Hit; score: number }>();
  const credit = (list: Hit[]) => {
    for (const [rank, hit] of list.entries()) {
      const entry = fused.get(hit.id) ?? { hit, score: 0 };
      entry.score += 1 / (RRF_K + rank + 1);
      fused.set(hit.id, entry);
    }
  };
  credit(vectorRanked);
  credit(textRanked);
  return [...fused.values()]
    .sort((a, b) => b.score - a.score || byDistance(a.hit, b.hit))
    .slice(0, request.topK)
    .map((e) => ({ ...e.hit, fused: e.score }));
}
