// Builds a base's postings (sparse-postings.ts) as its rows are read, a page at a time, so that a load
// holds the postings and one page, not every vector read as well (6 bytes a value set: 4.3 KB a chunk
// of the default chunking's 1,024 tokens, more than its postings). The first rows read decide which
// dimensions get a dense column and how long each list is first made; a dimension misjudged costs
// memory (a list longer than a column would be, or a column mostly zeros) or a list's growth, never a
// score. Once built, every list and column is cut to its length.
import { type PostingsParts, QUANT, ROW_BYTES, SparsePostings } from './sparse-postings.ts';
import { rowNorm, type SparseRows } from './sparse-rows.ts';

/** The share of the rows holding each dimension. */
export function dimensionShares(rows: SparseRows, dimensions: number): number[] {
  const held = new Uint32Array(dimensions);
  for (let i = 0; i < rows.length; i++) {
    const d = rows.dims[i] as number;
    held[d] = (held[d] as number) + 1;
  }
  return Array.from(held, (n) => n / Math.max(1, rows.count));
}

/** A dimension more than a third of the rows hold is a dense column: as small as a list, and read in order. */
const isDense = (share: number) => share * 3 > 1;

/**
 * The bytes a row will take once built, by the shares of some rows: 2 for each dense column, 6 a value
 * for the lists, and the row's own.
 */
export function bytesPerRow(shares: readonly number[]): number {
  let bytes = ROW_BYTES;
  for (const share of shares) bytes += isDense(share) ? 2 : 6 * share;
  return bytes;
}

export class PostingsBuilder {
  private readonly dimensions: number;
  private capacity: number;
  private n = 0;
  private ids: Float64Array;
  private xids: Float64Array;
  private readonly dense: (Int16Array | null)[];
  private readonly slots: (Uint32Array | null)[];
  private readonly values: (Int16Array | null)[];
  private readonly lengths: Uint32Array;

  /** For about `capacity` rows (more are taken, at the cost of growing), laid out by `shares`. */
  constructor(shares: readonly number[], capacity: number) {
    const dimensions = shares.length;
    this.dimensions = dimensions;
    this.capacity = Math.max(1, capacity);
    this.ids = new Float64Array(this.capacity);
    this.xids = new Float64Array(this.capacity);
    this.dense = [];
    this.slots = [];
    this.values = [];
    for (const share of shares) {
      const dense = isDense(share);
      const room = Math.ceil(share * this.capacity) + 1;
      this.dense.push(dense ? new Int16Array(this.capacity) : null);
      this.slots.push(dense ? null : new Uint32Array(room));
      this.values.push(dense ? null : new Int16Array(room));
    }
    this.lengths = new Uint32Array(dimensions);
  }

  /** Adds rows after those added before, each scaled to unit length and stored in 16-bit fixed point. */
  add(rows: SparseRows): void {
    for (let r = 0; r < rows.count; r++) {
      if (this.n === this.capacity) this.grow();
      const slot = this.n++;
      this.ids[slot] = rows.ids[r] as number;
      this.xids[slot] = rows.xids[r] as number;
      const scale = QUANT / rowNorm(rows, r);
      const end = rows.rowStart[r + 1] as number;
      for (let i = rows.rowStart[r] as number; i < end; i++) {
        const d = rows.dims[i] as number;
        const v = Math.round((rows.values[i] as number) * scale);
        const column = this.dense[d];
        if (column) {
          column[slot] = v;
          continue;
        }
        let slots = this.slots[d] as Uint32Array;
        let values = this.values[d] as Int16Array;
        const at = this.lengths[d] as number;
        if (at === slots.length) {
          slots = grown(slots, new Uint32Array(at * 2));
          values = grown(values, new Int16Array(at * 2));
          this.slots[d] = slots;
          this.values[d] = values;
        }
        slots[at] = slot;
        values[at] = v;
        this.lengths[d] = at + 1;
      }
    }
  }

  /**
   * The postings of every row added; the builder is not to be used after. Lists and columns longer
   * than their use are cut (copied) one at a time, with a turn of the event loop (`pause`) every few,
   * so the process's requests go on meanwhile.
   */
  async finish(
    pause: () => Promise<void> = () => new Promise((resolve) => setImmediate(resolve)),
  ): Promise<SparsePostings> {
    const n = this.n;
    const cut = <T extends Uint32Array | Int16Array>(array: T | null, used: number): T | null =>
      array && array.length > used * 1.01 + 16 ? (array.slice(0, used) as T) : array;
    for (let d = 0; d < this.dimensions; d++) {
      if (d % 64 === 63) await pause();
      const length = this.lengths[d] as number;
      this.dense[d] = cut(this.dense[d] ?? null, n);
      this.slots[d] = cut(this.slots[d] ?? null, length);
      this.values[d] = cut(this.values[d] ?? null, length);
    }
    const parts: PostingsParts = {
      dimensions: this.dimensions,
      ids: this.ids.slice(0, n),
      xids: this.xids.slice(0, n),
      dense: this.dense,
      slots: this.slots,
      values: this.values,
      lengths: this.lengths,
    };
    return new SparsePostings(parts);
  }

  /** Room for more rows than expected (rows written between the count and the read). */
  private grow(): void {
    this.capacity *= 2;
    this.ids = grown(this.ids, new Float64Array(this.capacity));
    this.xids = grown(this.xids, new Float64Array(this.capacity));
    for (let d = 0; d < this.dimensions; d++) {
      const column = this.dense[d];
      if (column) this.dense[d] = grown(column, new Int16Array(this.capacity));
    }
  }
}

function grown<T extends Uint32Array | Int16Array | Float64Array>(from: T, to: T): T {
  to.set(from as never);
  return to;
}
