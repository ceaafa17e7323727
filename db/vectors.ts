// Vectors as pgvector reads them. postgres.js and PGlite pass parameters as text, so a vector
// travels in pgvector's text form and is cast (`$1::vector`) in the statement.

/** `[x,y,…]`, nine significant digits each: enough to read back as the same float32. */
export function vectorLiteral(v: Float32Array): string {
  return `[${Array.from(v, (x) => Number(x.toPrecision(9))).join(',')}]`;
}
