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
import type { Queryable, Row } from '../client.ts';
import { isStorableText } from '../tables/values.ts';
import { vectorLiteral } from '../vectors.ts';
import { compileTagFilters, TAG_FILTER_OPERATORS } from './tag-filters.ts';
import { documentTags, listTags, MAX_TAG_NAME, TAG_COLUMNS_SQL, type TagValue } from './tags.ts';
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

interface Hit {
  id: number;
  knowledge_base_id: string;
  document_id: string;
  filename: string;
  content: string;
  chunk_index: number;
  distance: number | null;
  /** The full-text rank of a hybrid search's text candidate. */
  textRank: number;
  /** The reciprocal rank fusion score of a hybrid search's result. */
  fused?: number;
  row: Row;
}

const LIVE = 'd.enabled and c.enabled and c.generation = d.live_generation';
const HIT_COLUMNS = `c.id, c.knowledge_base_id, c.document_id, d.filename, c.content, c.chunk_index, ${TAG_COLUMNS_SQL}`;

// Approximate nearest chunks: ordering by the distance operator over the chunks alone is what lets
// the planner walk the HNSW index. Whether a chunk counts (its document enabled, its generation live,
// the tag filters) is a scalar subquery per chunk rather than a join: joined, the planner misjudges
// how many chunks are live (a few, it guesses, of 100,000) and prefers reading them all and sorting
// (350 ms against 5 ms). Being part of the index scan, the check also lets the iterative scan go on
// until enough chunks pass. $1 query vector, $2 bases; filter parameters after. The limit is a
// literal: under a parameter, a prepared statement's generic plan guesses a tenth of the table and
// sorts it all instead; a few fixed sizes keep the number of statement texts small.
const ANN_LIMITS = [10, 20, 50, 100, 200, 400] as const;
const annSql = (filter: string, limit: number) => `with nearest as (
  select c.id, c.embedding <=> $1::vector as distance
    from knowledge_chunks c
   where c.knowledge_base_id = any($2::uuid[]) and c.enabled
     and c.generation = (select d.live_generation from knowledge_documents d
                          where d.id = c.document_id and d.enabled and ${filter})
   order by c.embedding <=> $1::vector limit ${ANN_LIMITS.find((n) => n >= limit) ?? limit}
)
select ${HIT_COLUMNS}, nearest.distance
  from nearest join knowledge_chunks c on c.id = nearest.id join knowledge_documents d on d.id = c.document_id`;

// Exact nearest chunks among those the filter leaves: the materialized CTE keeps the planner off
// the index, and scoring only (id, distance) keeps the sort small.
const exactSql = (filter: string) => `with scored as materialized (
    select c.id, c.embedding <=> $1::vector as distance
      from knowledge_documents d join knowledge_chunks c on c.document_id = d.id
     where d.knowledge_base_id = any($2::uuid[]) and ${LIVE} and ${filter}
  ), top as (select id, distance from scored order by distance, id limit $3)
select ${HIT_COLUMNS}, top.distance
  from top join knowledge_chunks c on c.id = top.id join knowledge_documents d on d.id = c.document_id`;

// The candidates found in memory ($2, chunk ids, the bases $1): whether each passes (live, enabled,
// the filter), and for those expected to be chosen ($3) that pass, the exact distance to the query
// ($4). A candidate missing from the answer was deleted. Only those distances read a vector: a
// chunk's vector is stored out of line (TOAST), and reading one costs about as much as the rest.
const candidatesSql = (filter: string) => `select ${HIT_COLUMNS}, ${LIVE} and ${filter} as pass,
       case when c.id = any($3::bigint[]) and ${LIVE} and ${filter} then c.embedding <=> $4::vector end as distance
  from knowledge_chunks c join knowledge_documents d on d.id = c.document_id
 where c.id = any($2::bigint[]) and c.knowledge_base_id = any($1::uuid[])`;
// Chosen candidates ($2) not expected to be, with their exact distance to the query ($1).
const chosenSql = `select ${HIT_COLUMNS}, c.embedding <=> $1::vector as distance
  from knowledge_chunks c join knowledge_documents d on d.id = c.document_id
 where c.id = any($2::bigint[]) and ${LIVE}`;
/** Candidates from memory per result wanted, and the most a search checks before the index answers. */
const CANDIDATES_PER_RESULT = 2;
const EXTRA_CANDIDATES = 20;
const MAX_CANDIDATES = 2_000;

// Full-text candidates, best rank first, with their cosine distance for the answer's similarity.
// $4 the query text.
const textSql = (filter: string) => `select ${HIT_COLUMNS}, c.embedding <=> $1::vector as distance,
       ts_rank_cd(c.content_tsv, websearch_to_tsquery('english', $4)) as text_rank
  from knowledge_chunks c join knowledge_documents d on d.id = c.document_id
 where c.knowledge_base_id = any($2::uuid[]) and ${LIVE} and ${filter}
   and c.content_tsv @@ websearch_to_tsquery('english', $4)
 order by text_rank desc, c.id limit $3`;

// Tag-only: $1 bases, $2 how many.
const taggedSql = (filter: string) => `select ${HIT_COLUMNS}, null::float8 as distance
  from knowledge_documents d join knowledge_chunks c on c.document_id = d.id and c.generation = d.live_generation
   and c.enabled
 where d.knowledge_base_id = any($1::uuid[]) and d.enabled and ${filter}
 order by d.created_at desc, d.id, c.chunk_index limit $2`;

const toHit = (r: Row): Hit => ({
  id: Number(r.id),
  knowledge_base_id: r.knowledge_base_id as string,
  document_id: r.document_id as string,
  filename: r.filename as string,
  content: r.content as string,
  chunk_index: Number(r.chunk_index),
  distance: r.distance === null ? null : Number(r.distance),
  textRank: Number(r.text_rank ?? 0),
  row: r,
});

const byDistance = (a: Hit, b: Hit) => (a.distance ?? 0) - (b.distance ?? 0) || a.id - b.id;

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

  const literals = vectors.map((v) => vectorLiteral(v));
  const baseLists = [...groups.values()];
  // Groups served from memory need no transaction (the index's settings are what one is for).
  const fromMemory = await Promise.all(
    baseLists.map((baseIds, g) => {
      const inMemory = fulltext ? null : postings[g];
      return inMemory
        ? memoryHits(db, inMemory, vectors[g] as Float32Array, literals[g] as string, baseIds, depth, compile)
        : null;
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
        const q = literals[g] as string;
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

/**
 * The nearest `depth` chunks that pass, from the candidates the postings rank highest, checked and
 * ranked by their stored vectors' exact distance; null when too few of the best candidates pass (a
 * selective filter), for the index to answer instead.
 */
async function memoryHits(
  db: Queryable,
  postings: OpenPostings,
  vector: Float32Array,
  q: string,
  baseIds: string[],
  depth: number,
  compile: (own: unknown[]) => { filter: string; params: unknown[] },
): Promise<Hit[] | null> {
  // Memory's scores are within `tolerance` of each other's exact order (16-bit values): the chunks
  // that pass and rank within it of the depth-th are all ranked by their exact distance.
  const tolerance = postings.tolerance(vector);
  let k = depth * CANDIDATES_PER_RESULT + EXTRA_CANDIDATES;
  let looks = 0;
  while (k <= MAX_CANDIDATES) {
    const candidates = postings.nearest(vector, k);
    // Expected to be chosen: the first `depth`, and those within the tolerance of the last of them.
    const edge = candidates[Math.min(depth, candidates.length) - 1]?.score ?? 0;
    const expected = candidates.filter((c, i) => i < depth || c.score >= edge - tolerance).map((c) => c.id);
    const check = compile([baseIds, candidates.map((c) => c.id), expected, q]);
    const rows = new Map<number, Row>();
    for (const r of await db.query(candidatesSql(check.filter), check.params)) rows.set(Number(r.id), r);
    const gone = candidates.filter((c) => !rows.has(c.id)).map((c) => c.id);
    if (gone.length) postings.forget(gone);
    const passed = candidates.filter((c) => rows.get(c.id)?.pass === true);
    // Chunks deleted since the postings were read, and too few passing: what replaced them (a
    // re-processed document's new chunks) may have been written since too. The index answers.
    if (gone.length && passed.length < depth) return null;
    // Fewer candidates than asked for: every chunk in memory was checked.
    if (passed.length < depth && candidates.length === k) {
      k *= 4;
      continue;
    }
    const last = passed[Math.min(depth, passed.length) - 1];
    const chosen = passed.filter((c, i) => i < depth || (last && c.score >= last.score - tolerance));
    const hits = chosen.flatMap((c) => {
      const r = rows.get(c.id);
      return r && r.distance !== null ? [toHit(r)] : [];
    });
    // Chosen beyond the expected (candidates before them did not pass): their distances now.
    const unread = chosen.filter((c) => rows.get(c.id)?.distance === null).map((c) => c.id);
    if (unread.length) {
      const more = (await db.query(chosenSql, [q, unread])).map(toHit);
      // Some stopped passing between the two reads (a re-processed document's generation went live,
      // its old chunks deleted): look again, at what is live now.
      if (more.length < unread.length && ++looks < 4) continue;
      hits.push(...more);
    }
    return hits.sort(byDistance).slice(0, depth);
  }
  return null;
}
