// In-memory postings of sparse vectors (the local lexical model's: about 260 values of 1,536 are set in
// a chunk of 150 tokens, 720 in one of 1,024, and 30 in a query of a few words), scored against a query
// vector by exact dot product. pgvector's HNSW index weighs about 800
// candidates per query for recall 0.95 on such vectors (their ranking is flat: docs/performance.md);
// summing a query's few dimensions over every chunk that has them is exact, and at 100,000 chunks
// takes a few milliseconds.
//
// Layout, built once per load and rebuilt when enough has changed:
// - A dimension held by at most a third of the rows keeps a posting list: row slots (Uint32) with
//   their values. A dimension held by more (the common character trigrams) is a dense column of one
//   value per row: as small, and read in order.
// - Rows are scaled to unit length (so the dot product ranks as cosine distance does), and values are
//   16-bit fixed point (value × 32767; a unit vector's values lie in [-1, 1]). The error
//   (at most 1.5e-5 a value) only reorders near-ties: callers take a few times more candidates than
//   they need and rank those by the stored vectors' exact distance (in SQL).
// - Rows added or rewritten since the build are a tail of sparse rows scored one by one; when it grows
//   (or many rows are gone), the base is read again and built anew (vector-memory.ts).

import { rowNorm, SparseRows } from './sparse-rows.ts';
import { type ScoredId, TopK } from './top-k.ts';

/** Fixed point of the stored values: a unit vector's values lie in [-1, 1]. */
export const QUANT = 32767;
/** An entry of the id map (a Map of numbers), about. */
const ID_MAP_BYTES = 40;
/** A row's own bytes: its id and xid (8 each), dead flag (1), score (4), and its entry in the id map. */
export const ROW_BYTES = 21 + ID_MAP_BYTES;
/** Rows per block of the dense columns' pass: 8 KB of scores. */
const BLOCK = 2048;

/**
 * The arrays of built postings: row r's id is ids[r]. A dimension has a column of one value per row
 * (`dense[d]`, at least as long as the rows), or a list: the first `lengths[d]` of `slots[d]` (rows)
 * and `values[d]`.
 */
export interface PostingsParts {
  dimensions: number;
  ids: Float64Array;
  xids: Float64Array;
  dense: (Int16Array | null)[];
  slots: (Uint32Array | null)[];
  values: (Int16Array | null)[];
  lengths: Uint32Array;
}

export class SparsePostings {
  readonly dimensions: number;
  /** Row slots: the chunk id, its writing xid, and whether it is gone (deleted or rewritten). */
  private readonly ids: Float64Array;
  private readonly xids: Float64Array;
  private readonly dead: Uint8Array;
  private deadCount = 0;
  private readonly slots: (Uint32Array | null)[];
  private readonly values: (Int16Array | null)[];
  private readonly lengths: Uint32Array;
  private readonly dense: (Int16Array | null)[];
  private readonly scores: Float32Array;
  /** Rows written since the build, scored one by one; `slotOf` maps a chunk id to its slot or tail row. */
  private tail = new SparseRows();
  private tailDead: boolean[] = [];
  private readonly slotOf = new Map<number, number>();

  /** Built by postings-builder.ts. */
  constructor(parts: PostingsParts) {
    this.dimensions = parts.dimensions;
    this.ids = parts.ids;
    this.xids = parts.xids;
    this.slots = parts.slots;
    this.values = parts.values;
    this.lengths = parts.lengths;
    this.dense = parts.dense;
    this.dead = new Uint8Array(parts.ids.length);
    this.scores = new Float32Array(parts.ids.length);
    for (let r = 0; r < parts.ids.length; r++) this.slotOf.set(parts.ids[r] as number, r);
  }

  /** Rows written since the build: a rebuild is due when they, or the dead, are many. */
  get stale(): boolean {
    const n = this.ids.length;
    return this.tail.count > Math.max(2_000, n / 50) || this.deadCount > Math.max(2_000, n / 4);
  }

  /** Bytes held (typed arrays, and an estimate for the id map and the tail). */
  get bytes(): number {
    let lists = 0;
    for (let d = 0; d < this.dimensions; d++) {
      lists +=
        (this.dense[d]?.byteLength ?? 0) +
        (this.slots[d]?.byteLength ?? 0) +
        (this.values[d]?.byteLength ?? 0);
    }
    return (
      this.ids.byteLength * 2 +
      this.dead.byteLength +
      this.scores.byteLength +
      lists +
      this.slotOf.size * ID_MAP_BYTES +
      this.tail.dims.byteLength * 3
    );
  }

  /**
   * Records the rows read from the database since the last look (new or rewritten chunks), each
   * unless a newer write of it is already here.
   */
  upsert(rows: SparseRows): void {
    for (let r = 0; r < rows.count; r++) {
      const id = rows.ids[r] as number;
      const xid = rows.xids[r] as number;
      const at = this.slotOf.get(id);
      if (at !== undefined) {
        if (this.xidAt(at) > xid) continue;
        this.kill(at);
      }
      const t = this.tail;
      for (let i = rows.rowStart[r] as number; i < (rows.rowStart[r + 1] as number); i++) {
        t.push(rows.dims[i] as number, rows.values[i] as number);
      }
      t.endRow(id, xid);
      this.tailDead.push(false);
      this.slotOf.set(id, this.ids.length + t.count - 1);
    }
  }

  /** Forgets chunks found deleted. */
  remove(ids: Iterable<number>): void {
    for (const id of ids) {
      const at = this.slotOf.get(id);
      if (at === undefined) continue;
      this.kill(at);
      this.slotOf.delete(id);
    }
  }

  /** How many products of query and stored values `nearest` sums for this query vector. */
  products(query: Float32Array): number {
    let sum = 0;
    for (let d = 0; d < this.dimensions; d++) {
      if (query[d] === 0) continue;
      sum += this.dense[d] ? this.ids.length : (this.lengths[d] as number);
    }
    return sum + this.tail.length;
  }

  /**
   * The `k` rows of highest dot product with `query` (a dense vector of `dimensions` values), best
   * first: their ids and scores (in fixed point: × QUANT).
   */
  nearest(query: Float32Array, k: number): ScoredId[] {
    const n = this.ids.length;
    const scores = this.scores;
    scores.fill(0);
    const columns: Int16Array[] = [];
    const weights: number[] = [];
    for (let d = 0; d < this.dimensions; d++) {
      const w = query[d] as number;
      if (w === 0) continue;
      const column = this.dense[d];
      if (column) {
        columns.push(column);
        weights.push(w);
        continue;
      }
      const slots = this.slots[d] as Uint32Array;
      const values = this.values[d] as Int16Array;
      const end = this.lengths[d] as number;
      for (let i = 0; i < end; i++) {
        const r = slots[i] as number;
        scores[r] = (scores[r] as number) + w * (values[i] as number);
      }
    }
    // Dense columns four at a time, over a block of rows at a time: the block's scores stay in the
    // CPU's cache while every column is added, and the best are taken before the next block.
    const top = new TopK(k);
    const dead = this.dead;
    const ids = this.ids;
    const fours = columns.length - (columns.length % 4);
    for (let from = 0; from < n; from += BLOCK) {
      const to = Math.min(n, from + BLOCK);
      for (let c = 0; c < fours; c += 4) {
        const c0 = columns[c] as Int16Array;
        const c1 = columns[c + 1] as Int16Array;
        const c2 = columns[c + 2] as Int16Array;
        const c3 = columns[c + 3] as Int16Array;
        const w0 = weights[c] as number;
        const w1 = weights[c + 1] as number;
        const w2 = weights[c + 2] as number;
        const w3 = weights[c + 3] as number;
        for (let r = from; r < to; r++) {
          scores[r] =
            (scores[r] as number) +
            w0 * (c0[r] as number) +
            w1 * (c1[r] as number) +
            w2 * (c2[r] as number) +
            w3 * (c3[r] as number);
        }
      }
      for (let c = fours; c < columns.length; c++) {
        const column = columns[c] as Int16Array;
        const w = weights[c] as number;
        for (let r = from; r < to; r++) scores[r] = (scores[r] as number) + w * (column[r] as number);
      }
      for (let r = from; r < to; r++) {
        const score = scores[r] as number;
        if (score >= top.floor && dead[r] === 0) top.offer(score, ids[r] as number);
      }
    }
    const t = this.tail;
    for (let r = 0; r < t.count; r++) {
      const id = t.ids[r] as number;
      if (this.tailDead[r]) continue;
      let sum = 0;
      for (let i = t.rowStart[r] as number; i < (t.rowStart[r + 1] as number); i++) {
        sum += (query[t.dims[i] as number] as number) * (t.values[i] as number);
      }
      top.offer((sum * QUANT) / rowNorm(t, r), id);
    }
    return top.sorted();
  }

  private xidAt(at: number): number {
    const n = this.ids.length;
    return at < n ? (this.xids[at] as number) : (this.tail.xids[at - n] as number);
  }

  private kill(at: number): void {
    const n = this.ids.length;
    if (at < n) {
      if (this.dead[at] === 0) this.deadCount++;
      this.dead[at] = 1;
    } else this.tailDead[at - n] = true;
  }
}
