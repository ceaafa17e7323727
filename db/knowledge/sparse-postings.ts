// In-memory postings of sparse vectors (the local lexical model's: about 260 values of 1,536 are not
// zero), scored against a query vector by exact dot product. pgvector's HNSW index weighs about 800
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
// - Rows added or rewritten since the build are a tail of sparse rows scored one by one; the tail is
//   merged in by a rebuild from memory when it grows.

const QUANT = 32767;
/** An entry of the id map (a Map of numbers), about. */
const ID_MAP_BYTES = 40;
/** A row's own bytes: its id and xid (8 each), dead flag (1), score (4), and its entry in the id map. */
const ROW_BYTES = 21 + ID_MAP_BYTES;
/** Rows per block of the dense columns' pass: 8 KB of scores. */
const BLOCK = 2048;

export interface ScoredId {
  id: number;
  score: number;
}

/** Highest score first, ties to the lower id. */
export const byScore = (a: ScoredId, b: ScoredId) => b.score - a.score || a.id - b.id;

/** Rows of sparse values, appended one value at a time: row r's are [rowStart[r], rowStart[r + 1]). */
export class SparseRows {
  readonly ids: number[] = [];
  /** Each row's writing transaction (xid8 as a number), so an older read never overwrites a newer one. */
  readonly xids: number[] = [];
  readonly rowStart: number[] = [0];
  dims = new Uint16Array(1024);
  values = new Float32Array(1024);
  length = 0;

  get count(): number {
    return this.ids.length;
  }

  push(dim: number, value: number): void {
    if (this.length === this.dims.length) {
      const dims = new Uint16Array(this.length * 2);
      dims.set(this.dims);
      this.dims = dims;
      const values = new Float32Array(this.length * 2);
      values.set(this.values);
      this.values = values;
    }
    this.dims[this.length] = dim;
    this.values[this.length] = value;
    this.length++;
  }

  endRow(id: number, xid: number): void {
    this.ids.push(id);
    this.xids.push(xid);
    this.rowStart.push(this.length);
  }
}

/**
 * Appends a row in pgvector's sparsevec text form, `{3:0.5,17:-0.25}/1536` (indices from 1), and
 * answers its dimension count.
 */
export function appendSparsevec(rows: SparseRows, id: number, xid: number, text: string): number {
  const close = text.indexOf('}');
  let at = 1;
  while (at < close) {
    const colon = text.indexOf(':', at);
    let comma = text.indexOf(',', colon);
    if (comma === -1 || comma > close) comma = close;
    rows.push(Number(text.slice(at, colon)) - 1, Number(text.slice(colon + 1, comma)));
    at = comma + 1;
  }
  rows.endRow(id, xid);
  return Number(text.slice(close + 2));
}

export class SparsePostings {
  readonly dimensions: number;
  /** Row slots: the chunk id, its writing xid, and whether it is gone (deleted or rewritten). */
  private readonly ids: Float64Array;
  private readonly xids: Float64Array;
  private readonly dead: Uint8Array;
  private deadCount = 0;
  private readonly start: Uint32Array;
  private readonly slots: Uint32Array;
  private readonly values: Int16Array;
  private readonly dense: (Int16Array | null)[];
  private readonly scores: Float32Array;
  /** Rows written since the build, scored one by one; `slotOf` maps a chunk id to its slot or tail row. */
  private tail = new SparseRows();
  private tailDead: boolean[] = [];
  private readonly slotOf = new Map<number, number>();

  private constructor(parts: {
    dimensions: number;
    ids: Float64Array;
    xids: Float64Array;
    start: Uint32Array;
    slots: Uint32Array;
    values: Int16Array;
    dense: (Int16Array | null)[];
  }) {
    this.dimensions = parts.dimensions;
    this.ids = parts.ids;
    this.xids = parts.xids;
    this.start = parts.start;
    this.slots = parts.slots;
    this.values = parts.values;
    this.dense = parts.dense;
    this.dead = new Uint8Array(parts.ids.length);
    this.scores = new Float32Array(parts.ids.length);
    for (let r = 0; r < parts.ids.length; r++) this.slotOf.set(parts.ids[r] as number, r);
  }

  /**
   * Builds the postings of `rows`. It pauses (`pause`, a turn of the event loop by default) every few
   * thousand rows: at 100,000 chunks the whole build is seconds of CPU, which must not hold up the
   * requests of the process that builds.
   */
  static async build(
    rows: SparseRows,
    dimensions: number,
    pause: () => Promise<void> = () => new Promise((resolve) => setImmediate(resolve)),
  ): Promise<SparsePostings> {
    const n = rows.count;
    const held = new Uint32Array(dimensions);
    for (let i = 0; i < rows.length; i++) {
      const d = rows.dims[i] as number;
      held[d] = (held[d] as number) + 1;
    }
    const start = new Uint32Array(dimensions + 1);
    const dense: (Int16Array | null)[] = [];
    for (let d = 0; d < dimensions; d++) {
      const isDense = (held[d] as number) * 3 > n;
      dense.push(isDense ? new Int16Array(n) : null);
      start[d + 1] = (start[d] as number) + (isDense ? 0 : (held[d] as number));
    }
    const total = start[dimensions] as number;
    const slots = new Uint32Array(total);
    const values = new Int16Array(total);
    const fill = start.slice(0, dimensions);
    for (let r = 0; r < n; r++) {
      if (r % 4096 === 4095) await pause();
      const end = rows.rowStart[r + 1] as number;
      const scale = QUANT / rowNorm(rows, r);
      for (let i = rows.rowStart[r] as number; i < end; i++) {
        const d = rows.dims[i] as number;
        const v = Math.round((rows.values[i] as number) * scale);
        const column = dense[d];
        if (column) column[r] = v;
        else {
          const at = fill[d] as number;
          fill[d] = at + 1;
          slots[at] = r;
          values[at] = v;
        }
      }
    }
    return new SparsePostings({
      dimensions,
      ids: Float64Array.from(rows.ids),
      xids: Float64Array.from(rows.xids),
      start,
      slots,
      values,
      dense,
    });
  }

  /**
   * The bytes a row will take once built, estimated from some of the rows: 2 for each dimension
   * more than a third of them hold (a dense column), 6 a value for the others, and the row's own.
   */
  static bytesPerRow(rows: SparseRows, dimensions: number): number {
    const held = new Uint32Array(dimensions);
    for (let i = 0; i < rows.length; i++) {
      const d = rows.dims[i] as number;
      held[d] = (held[d] as number) + 1;
    }
    let bytes = ROW_BYTES;
    for (let d = 0; d < dimensions; d++) {
      const share = (held[d] as number) / Math.max(1, rows.count);
      bytes += share * 3 > 1 ? 2 : 6 * share;
    }
    return bytes;
  }

  /** Rows written since the build: a rebuild is due when they, or the dead, are many. */
  get stale(): boolean {
    const n = this.ids.length;
    return this.tail.count > Math.max(2_000, n / 50) || this.deadCount > Math.max(2_000, n / 4);
  }

  /** Bytes held (typed arrays, and an estimate for the id map and the tail). */
  get bytes(): number {
    let dense = 0;
    for (const c of this.dense) if (c) dense += c.byteLength;
    return (
      this.ids.byteLength * 2 +
      this.dead.byteLength +
      this.scores.byteLength +
      this.slots.byteLength +
      this.values.byteLength +
      dense +
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
      sum += this.dense[d] ? this.ids.length : (this.start[d + 1] as number) - (this.start[d] as number);
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
    const columns: Int16Array[] = [];
    const weights: number[] = [];
    let sparse = false;
    for (let d = 0; d < this.dimensions; d++) {
      const w = query[d] as number;
      if (w === 0) continue;
      const column = this.dense[d];
      if (column) {
        columns.push(column);
        weights.push(w);
        continue;
      }
      if (!sparse) {
        scores.fill(0);
        sparse = true;
      }
      const slots = this.slots;
      const values = this.values;
      const end = this.start[d + 1] as number;
      for (let i = this.start[d] as number; i < end; i++) {
        const r = slots[i] as number;
        scores[r] = (scores[r] as number) + w * (values[i] as number);
      }
    }
    if (!sparse) scores.fill(0);
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

/** A row's length; a row of zeros (which no search can rank) counts as 1. */
function rowNorm(rows: SparseRows, r: number): number {
  let sum = 0;
  for (let i = rows.rowStart[r] as number; i < (rows.rowStart[r + 1] as number); i++) {
    sum += (rows.values[i] as number) ** 2;
  }
  return sum > 0 ? Math.sqrt(sum) : 1;
}

/** The k best (score, id) pairs seen: a min-heap on score, ties to the lower id. */
class TopK {
  private readonly scores: Float64Array;
  private readonly ids: Float64Array;
  private size = 0;
  private readonly k: number;
  /** Scores below this cannot enter (the lowest kept, once full). */
  floor = Number.NEGATIVE_INFINITY;
  constructor(k: number) {
    this.k = k;
    this.scores = new Float64Array(k);
    this.ids = new Float64Array(k);
  }

  offer(score: number, id: number): void {
    if (this.size < this.k) {
      let i = this.size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!this.worse(score, id, parent)) break;
        this.scores[i] = this.scores[parent] as number;
        this.ids[i] = this.ids[parent] as number;
        i = parent;
      }
      this.scores[i] = score;
      this.ids[i] = id;
      if (this.size === this.k) this.floor = this.scores[0] as number;
      return;
    }
    if (this.k === 0 || !this.better(score, id, 0)) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= this.size) break;
      const right = left + 1;
      const child = right < this.size && this.lessAt(right, left) ? right : left;
      if (!this.better(score, id, child)) break;
      this.scores[i] = this.scores[child] as number;
      this.ids[i] = this.ids[child] as number;
      i = child;
    }
    this.scores[i] = score;
    this.ids[i] = id;
    this.floor = this.scores[0] as number;
  }

  sorted(): ScoredId[] {
    const out: ScoredId[] = [];
    for (let i = 0; i < this.size; i++)
      out.push({ id: this.ids[i] as number, score: this.scores[i] as number });
    return out.sort(byScore);
  }

  /** Whether (score, id) ranks below the entry at i (lower score, or equal and a higher id). */
  private worse(score: number, id: number, i: number): boolean {
    const s = this.scores[i] as number;
    return score < s || (score === s && id > (this.ids[i] as number));
  }

  private better(score: number, id: number, i: number): boolean {
    const s = this.scores[i] as number;
    return score > s || (score === s && id < (this.ids[i] as number));
  }

  private lessAt(a: number, b: number): boolean {
    return this.worse(this.scores[a] as number, this.ids[a] as number, b);
  }
}
