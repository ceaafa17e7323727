// The statements knowledge search reads its hits with (search.ts), and the hit they give. Each reads
// the same columns (HIT_COLUMNS) so that one function turns any of their rows into a hit.
import type { Row } from '../client.ts';
import { TAG_COLUMNS_SQL } from './tags.ts';

export interface Hit {
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
export const annSql = (filter: string, limit: number) => `with nearest as (
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
export const exactSql = (filter: string) => `with scored as materialized (
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
export const candidatesSql = (filter: string) => `select ${HIT_COLUMNS}, ${LIVE} and ${filter} as pass,
       case when c.id = any($3::bigint[]) and ${LIVE} and ${filter} then c.embedding <=> $4::sparsevec::vector end as distance
  from knowledge_chunks c join knowledge_documents d on d.id = c.document_id
 where c.id = any($2::bigint[]) and c.knowledge_base_id = any($1::uuid[])`;
// Chosen candidates ($2) not expected to be, with their exact distance to the query ($1).
export const chosenSql = `select ${HIT_COLUMNS}, c.embedding <=> $1::sparsevec::vector as distance
  from knowledge_chunks c join knowledge_documents d on d.id = c.document_id
 where c.id = any($2::bigint[]) and ${LIVE}`;

// Full-text candidates, best rank first, with their cosine distance for the answer's similarity.
// $4 the query text.
export const textSql = (filter: string) => `select ${HIT_COLUMNS}, c.embedding <=> $1::vector as distance,
       ts_rank_cd(c.content_tsv, websearch_to_tsquery('english', $4)) as text_rank
  from knowledge_chunks c join knowledge_documents d on d.id = c.document_id
 where c.knowledge_base_id = any($2::uuid[]) and ${LIVE} and ${filter}
   and c.content_tsv @@ websearch_to_tsquery('english', $4)
 order by text_rank desc, c.id limit $3`;

// Tag-only: $1 bases, $2 how many.
export const taggedSql = (filter: string) => `select ${HIT_COLUMNS}, null::float8 as distance
  from knowledge_documents d join knowledge_chunks c on c.document_id = d.id and c.generation = d.live_generation
   and c.enabled
 where d.knowledge_base_id = any($1::uuid[]) and d.enabled and ${filter}
 order by d.created_at desc, d.id, c.chunk_index limit $2`;

export const toHit = (r: Row): Hit => ({
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

export const byDistance = (a: Hit, b: Hit) => (a.distance ?? 0) - (b.distance ?? 0) || a.id - b.id;
