// Vector search of bases whose postings this process holds (vector-memory.ts): the postings' best
// candidates, checked in the database (live, enabled, tag filters) and ranked by their stored vectors'
// exact distance.
import type { Queryable, Row } from '../client.ts';
import { sparseVectorLiteral } from '../vectors.ts';
import { byDistance, candidatesSql, chosenSql, type Hit, toHit } from './search-hits.ts';
import type { OpenPostings } from './vector-memory.ts';

/** Candidates from memory per result wanted, and the most a search checks before the index answers. */
const CANDIDATES_PER_RESULT = 2;
const EXTRA_CANDIDATES = 20;
const MAX_CANDIDATES = 2_000;
/**
 * The most products of query and stored values a search sums in memory (about 1 ns each): a query of
 * a few words has 30 to 100 values set, so 3 to 10 million at 100,000 chunks. A long query text (or a
 * dense query vector) over many chunks is left to the index, whose time does not grow with it.
 */
const MAX_PRODUCTS = 30_000_000;

/**
 * The nearest `depth` chunks that pass, from the candidates the postings rank highest, checked and
 * ranked by their stored vectors' exact distance; null when too few of the best candidates pass (a
 * selective filter), for the index to answer instead.
 */
export async function memoryHits(
  db: Queryable,
  postings: OpenPostings,
  vector: Float32Array,
  baseIds: string[],
  depth: number,
  compile: (own: unknown[]) => { filter: string; params: unknown[] },
): Promise<Hit[] | null> {
  if (postings.products(vector) > MAX_PRODUCTS) return null;
  // Memory's scores are within `tolerance` of each other's exact order (16-bit values): the chunks
  // that pass and rank within it of the depth-th are all ranked by their exact distance.
  const tolerance = postings.tolerance(vector);
  // The query is sparse too: its text leaves the zeros out.
  const q = sparseVectorLiteral(vector);
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
