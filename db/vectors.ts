// Vectors as pgvector reads them. postgres.js and PGlite pass parameters as text, so a vector
// travels in pgvector's text form and is cast (`$1::vector`) in the statement.

/**
 * `[x,y,…]`, nine significant digits each: enough to read back as the same float32. Built in one
 * string, zeros (a third of a local-model vector) written as such, and without the Number round
 * trip that trimmed trailing zeros: 5 times faster (0.5 against 2.7 ms a vector, which was the
 * runner's largest main-thread cost in ingestion).
 */
export function vectorLiteral(v: Float32Array): string {
  let text = '[';
  for (let i = 0; i < v.length; i++) {
    const x = v[i] as number;
    if (i) text += ',';
    text += x === 0 ? '0' : x.toPrecision(9);
  }
  return `${text}]`;
}

/**
 * The same vector in pgvector's `sparsevec` text form, `{i:x,…}/n` (indices from 1), its zeros left
 * out; `::sparsevec::vector` reads it back as the same vector. A local-model chunk has about 260
 * values of 1,536 set and a query about 30: their text is a fifth to a fiftieth as long, to write here
 * and to parse in Postgres.
 */
export function sparseVectorLiteral(v: Float32Array): string {
  let text = '{';
  for (let i = 0; i < v.length; i++) {
    const x = v[i] as number;
    if (x === 0) continue;
    if (text.length > 1) text += ',';
    text += `${i + 1}:${x.toPrecision(9)}`;
  }
  return `${text}}/${v.length}`;
}

/** Whether a vector is written shorter as `sparsevec` text: at most a third of its values set. */
export function isSparse(v: Float32Array): boolean {
  let set = 0;
  for (let i = 0; i < v.length; i++) if (v[i] !== 0) set++;
  return set * 3 <= v.length;
}
