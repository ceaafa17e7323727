// Token counting in OpenAI's cl100k_base encoding (the tokenizer of text-embedding-3-*), offline: the
// ranks ship with js-tiktoken, so nothing is downloaded at run time. Chunk sizes are in these tokens.
//
// Counting is the hot path of chunking (every piece of a document is measured, some more than once), and
// js-tiktoken's `encode` redoes the byte-pair merge of every word every time, with a merge quadratic in
// the piece's length (a CJK sentence, which is one piece, or a long run of letters would take from
// milliseconds to seconds). So this counter uses js-tiktoken's ranks and pre-tokenization regex with a
// merge of its own, driven by a heap (always the lowest-ranked adjacent pair, leftmost first, as tiktoken
// merges), and counts each distinct piece once, from a cache. The sum over pieces is exactly
// `new Tiktoken(cl100k_base).encode(text, [], []).length`, since merges never cross pieces; the tests
// hold it to that. Special tokens (`<|endoftext|>`…) are counted as the plain text they are in a document.
import cl100k from 'js-tiktoken/ranks/cl100k_base';

const PIECES = new RegExp(cl100k.pat_str, 'gu');
const MAX_CACHED = 200_000;
const cache = new Map<string, number>();

/** The number of cl100k_base tokens of `text`: equal to js-tiktoken's `encode(text, [], []).length`. */
export function countTokens(text: string): number {
  let total = 0;
  PIECES.lastIndex = 0;
  for (let match = PIECES.exec(text); match !== null; match = PIECES.exec(text))
    total += countPiece(match[0]);
  return total;
}

/** The pre-tokenization pieces of `text` (no token spans a piece boundary), with their offsets. */
export function* tokenPieces(text: string): Generator<{ index: number; piece: string; tokens: number }> {
  for (const match of text.matchAll(PIECES)) {
    yield { index: match.index, piece: match[0], tokens: countPiece(match[0]) };
  }
}

function countPiece(piece: string): number {
  const cached = cache.get(piece);
  if (cached !== undefined) return cached;
  const count = mergeCount(piece);
  if (cache.size >= MAX_CACHED) cache.clear();
  cache.set(piece, count);
  return count;
}

// ---------------------------------------------------------------------------------------------------
// Byte-pair merge, O(n log n). Nodes are identified by their first byte's offset and
// linked through `next`; a heap entry (rank, node, end of its pair) is stale once either node of the
// pair has changed, which shows as the pair no longer ending where it did.

let ranks: Map<string, number> | undefined;
let longestToken = 0;
const byteRanks = new Int32Array(256);
// The rank of two adjacent tokens' concatenation (-1: not a token), by the pair of their ranks: most pairs
// recur, and a number key spares building and hashing a string for each lookup.
const pairRanks = new Map<number, number>();
const MAX_PAIRS = 1_000_000;
const RANK_SPAN = 1 << 17;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the whole ASCII range is the point.
const ASCII = /^[\x00-\x7f]*$/;
// Reused by every merge (one at a time: this is synchronous code), as allocating them per piece shows.
let scratch = new Int32Array(3 * 256);

/** Each token's rank, keyed by its bytes as a Latin-1 string; parsed on first use as js-tiktoken parses it. */
function rankTable(): Map<string, number> {
  if (ranks) return ranks;
  const table = new Map<string, number>();
  for (const line of cl100k.bpe_ranks.split('\n')) {
    if (!line) continue;
    const [, offset, ...tokens] = line.split(' ');
    const base = Number.parseInt(offset ?? '0', 10);
    tokens.forEach((token, i) => {
      const key = Buffer.from(token, 'base64').toString('latin1');
      longestToken = Math.max(longestToken, key.length);
      table.set(key, base + i);
    });
  }
  for (let byte = 0; byte < 256; byte++) byteRanks[byte] = table.get(String.fromCharCode(byte)) ?? -1;
  if (table.size >= RANK_SPAN || byteRanks.includes(-1)) throw new Error('Unexpected cl100k_base ranks');
  ranks = table;
  return table;
}

function mergeCount(piece: string): number {
  const table = rankTable();
  // One character per byte, so that slices of it are the keys of the rank table; ASCII already is.
  const latin1 = ASCII.test(piece) ? piece : Buffer.from(piece, 'utf8').toString('latin1');
  if (table.has(latin1)) return 1;
  const n = latin1.length;
  if (scratch.length < 3 * n) scratch = new Int32Array(Math.max(3 * n, 2 * scratch.length));
  const next = scratch.subarray(0, n);
  const prev = scratch.subarray(n, 2 * n);
  const rank = scratch.subarray(2 * n, 3 * n);
  for (let i = 0; i < n; i++) {
    next[i] = i + 1;
    prev[i] = i - 1;
    rank[i] = byteRanks[latin1.charCodeAt(i)] as number;
  }
  heap.clear();
  const push = (node: number) => {
    const second = next[node] as number;
    if (second >= n) return;
    const end = next[second] as number;
    const key = (rank[node] as number) * RANK_SPAN + (rank[second] as number);
    let merged = pairRanks.get(key);
    if (merged === undefined) {
      merged = end - node > longestToken ? -1 : (table.get(latin1.slice(node, end)) ?? -1);
      if (pairRanks.size >= MAX_PAIRS) pairRanks.clear();
      pairRanks.set(key, merged);
    }
    if (merged >= 0) heap.push(merged, node, end);
  };
  for (let i = 0; i < n - 1; i++) push(i);
  let parts = n;
  for (;;) {
    const top = heap.pop();
    if (!top) break;
    const [merged, node, end] = top;
    const second = next[node] as number;
    // Stale: the node was absorbed (its links are -2), or one of the pair merged with another neighbour.
    if (second < 0 || second >= n || next[second] !== end || prev[second] !== node) continue;
    next[node] = end;
    rank[node] = merged;
    if (end < n) prev[end] = node;
    prev[second] = -2;
    next[second] = -2;
    parts--;
    const before = prev[node] as number;
    if (before >= 0) push(before);
    push(node);
  }
  return parts;
}

/** A binary min-heap of (rank, node, end), ordered by rank then node: the leftmost of equal ranks first. */
class PairHeap {
  private items: number[] = [];

  clear(): void {
    this.items.length = 0;
  }

  push(rank: number, node: number, end: number): void {
    const items = this.items;
    let at = items.length / 3;
    items.push(rank, node, end);
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!this.less(at, parent)) break;
      this.swap(at, parent);
      at = parent;
    }
  }

  pop(): [number, number, number] | undefined {
    const items = this.items;
    const size = items.length / 3;
    if (size === 0) return undefined;
    const result: [number, number, number] = [items[0] as number, items[1] as number, items[2] as number];
    this.swap(0, size - 1);
    items.length -= 3;
    const count = size - 1;
    let at = 0;
    for (;;) {
      const left = 2 * at + 1;
      const right = left + 1;
      let smallest = at;
      if (left < count && this.less(left, smallest)) smallest = left;
      if (right < count && this.less(right, smallest)) smallest = right;
      if (smallest === at) break;
      this.swap(at, smallest);
      at = smallest;
    }
    return result;
  }

  private less(a: number, b: number): boolean {
    const items = this.items;
    const ra = items[a * 3] as number;
    const rb = items[b * 3] as number;
    return ra < rb || (ra === rb && (items[a * 3 + 1] as number) < (items[b * 3 + 1] as number));
  }

  private swap(a: number, b: number): void {
    const items = this.items;
    for (let k = 0; k < 3; k++) {
      const t = items[a * 3 + k] as number;
      items[a * 3 + k] = items[b * 3 + k] as number;
      items[b * 3 + k] = t;
    }
  }
}

const heap = new PairHeap();
