// Sparse vectors as read from the database, a row at a time (pgvector's `sparsevec` text), before they
// are built into postings (postings-builder.ts) or kept as the postings' tail of rows written since.

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

/** A row's length; a row of zeros (which no search can rank) counts as 1. */
export function rowNorm(rows: SparseRows, r: number): number {
  let sum = 0;
  for (let i = rows.rowStart[r] as number; i < (rows.rowStart[r + 1] as number); i++) {
    sum += (rows.values[i] as number) ** 2;
  }
  return sum > 0 ? Math.sqrt(sum) : 1;
}
