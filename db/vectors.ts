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
