// Splits a document's text into the chunks a knowledge base embeds, sized in cl100k_base tokens.
//
// Two passes. First, @langchain/textsplitters' RecursiveCharacterTextSplitter cuts the text into small
// units (at most a quarter of a chunk, and never more than a chunk minus its overlap), at the coarsest
// boundary that works: paragraphs, then lines, then sentences, then words, then characters. Then the
// units are packed greedily into chunks of at most `maxSize` tokens, each chunk after the first starting
// with the last ≤ `overlap` tokens of the one before, cut at a word boundary. (The splitter's own
// packing carries overlap only between units split at the same level, and none across a long paragraph,
// so consecutive chunks could share nothing; packing here gives every pair its overlap.) Finally a chunk
// shorter than `minSize` characters is merged into a neighbour when the two fit in `maxSize` together;
// as packing is greedy, such a chunk is nearly always the last or only one, and is kept as it is.
//
// Chunks are trimmed substrings of the text; every token count is measured on the final content.
import { RecursiveCharacterTextSplitter } from '@langchain/textsplitters';
import type { ChunkingConfig } from '../../db/knowledge/bases.ts';
import { countTokens, tokenPieces } from './tokens.ts';

// The knowledge base's chunking config: its fields' meaning and bounds are db/knowledge/bases.ts's.
export type { ChunkingConfig };

export interface Chunk {
  content: string;
  tokenCount: number;
}

// Sentence ends, where a split keeps the punctuation with its sentence (see UnitSplitter).
const SENTENCE = '. ';
const CJK_SENTENCE = '。';
const SEPARATORS = ['\n\n', '\n', SENTENCE, CJK_SENTENCE, ' ', ''];

/** A chunk: its span text[start, end) and its content, that span trimmed. */
interface Span {
  start: number;
  end: number;
  content: string;
  tokenCount: number;
}

/** A unit of the first pass: text[start, end), its leading whitespace included. */
interface Unit {
  start: number;
  end: number;
  tokens: number;
}

export async function chunkText(text: string, config: ChunkingConfig): Promise<Chunk[]> {
  checkConfig(config);
  if (text.trim() === '') return [];
  const units = await splitUnits(text, unitLimit(config));
  const spans = pack(text, units, config);
  return mergeSmall(text, spans, config).map(({ content, tokenCount }) => ({ content, tokenCount }));
}

function checkConfig({ maxSize, minSize, overlap }: ChunkingConfig): void {
  if (!Number.isInteger(maxSize) || maxSize < 1) throw new RangeError('maxSize must be a positive integer');
  if (!Number.isInteger(overlap) || overlap < 0 || overlap >= maxSize) {
    throw new RangeError('overlap must be an integer from 0 to below maxSize');
  }
  if (!Number.isInteger(minSize) || minSize < 0)
    throw new RangeError('minSize must be a non-negative integer');
}

// Small enough that a chunk ends near its limit, large enough that paragraphs usually stay whole; never
// so large that a unit cannot follow a full overlap.
function unitLimit({ maxSize, overlap }: ChunkingConfig): number {
  return Math.max(1, Math.min(maxSize - overlap, Math.ceil(maxSize / 4)));
}

// ---------------------------------------------------------------------------------------------------
// First pass: units

/**
 * The library's splitter keeps a separator at the start of the piece after it, which suits whitespace
 * (a word's leading space is part of its token) but would move a sentence's full stop to the next one.
 * Its last resort, single characters, is awaited one by one: a long text without spaces (base64, CJK
 * without punctuation) takes seconds that way, so that level cuts slices of several characters, few
 * enough that each stays within the unit limit (a UTF-16 code unit is at most 3 UTF-8 bytes, so at
 * most 3 tokens).
 */
class UnitSplitter extends RecursiveCharacterTextSplitter {
  sliceLength = 1;

  protected override splitOnSeparator(text: string, separator: string): string[] {
    if (separator === SENTENCE) return text.split(/(?<=[.!?])(?=\s)/).filter((s) => s !== '');
    if (separator === CJK_SENTENCE) return text.split(/(?<=[。！？])/).filter((s) => s !== '');
    if (separator === '') return slices(text, this.sliceLength);
    return super.splitOnSeparator(text, separator);
  }
}

/** Cuts text every `length` code units, never between the two halves of a surrogate pair. */
function slices(text: string, length: number): string[] {
  const result: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + length, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end = end - 1 > start ? end - 1 : end + 1;
    result.push(text.slice(start, end));
    start = end;
  }
  return result;
}

/**
 * Contiguous units covering the whole text. The splitter returns trimmed pieces; each is found again in
 * the text (in order, so a search from the previous one's end finds it) and owns the whitespace before it.
 */
async function splitUnits(text: string, limit: number): Promise<Unit[]> {
  const splitter = new UnitSplitter({
    chunkSize: limit,
    chunkOverlap: 0,
    separators: SEPARATORS,
    keepSeparator: true,
    lengthFunction: memoized(countTokens),
  });
  splitter.sliceLength = Math.max(1, Math.floor(limit / 3));
  const pieces = await splitter.splitText(text);
  const units: Unit[] = [];
  let cursor = 0;
  for (const piece of pieces) {
    const at = text.indexOf(piece, cursor);
    if (at < 0) throw new Error('Text splitter returned a piece that is not in the text');
    const end = at + piece.length;
    units.push({ start: cursor, end, tokens: countTokens(text.slice(cursor, end)) });
    cursor = end;
  }
  // Trailing whitespace joins the last unit.
  const last = units.at(-1);
  if (last && cursor < text.length) {
    last.end = text.length;
    last.tokens = countTokens(text.slice(last.start, last.end));
  }
  return units;
}

/** The splitter measures each piece several times (to choose, to pack, to drop from the front). */
function memoized(count: (text: string) => number): (text: string) => number {
  const counts = new Map<string, number>();
  return (text) => {
    let n = counts.get(text);
    if (n === undefined) {
      n = count(text);
      counts.set(text, n);
    }
    return n;
  };
}

// ---------------------------------------------------------------------------------------------------
// Second pass: packing with overlap

function pack(text: string, units: Unit[], config: ChunkingConfig): Span[] {
  const { maxSize, overlap } = config;
  const spans: Span[] = [];
  let next = 0;
  while (next < units.length) {
    const first = units[next] as Unit;
    const previous = spans.at(-1);
    let tail = previous ? tailStart(text, previous, Math.min(overlap, maxSize - first.tokens)) : first.start;
    let last = next;
    let total = (tail < first.start ? countTokens(text.slice(tail, first.start)) : 0) + first.tokens;
    while (last + 1 < units.length && total + (units[last + 1] as Unit).tokens <= maxSize) {
      last++;
      total += (units[last] as Unit).tokens;
    }
    // Counts of neighbouring pieces do not always add up exactly: measure what will be stored.
    let span = makeSpan(text, tail, (units[last] as Unit).end);
    while (span.tokenCount > maxSize && (last > next || tail < first.start)) {
      if (last > next) last--;
      else tail = first.start;
      span = makeSpan(text, tail, (units[last] as Unit).end);
    }
    if (span.tokenCount > maxSize) spans.push(...hardSplit(text, span.start, span.end, maxSize));
    else if (span.content !== '') spans.push(span);
    next = last + 1;
  }
  return spans;
}

function makeSpan(text: string, start: number, end: number): Span {
  const content = text.slice(start, end).trim();
  return { start, end, content, tokenCount: countTokens(content) };
}

/**
 * Where the overlap taken from `previous` starts: the earliest piece boundary whose suffix has at most
 * `budget` tokens, moved forward to a word boundary when the suffix has one.
 */
function tailStart(text: string, previous: Span, budget: number): number {
  if (budget <= 0) return previous.end;
  // Only the end of the chunk is read: tokens average four characters, so this window nearly always
  // holds the whole overlap; when it does not, the whole chunk is read.
  let from = Math.max(previous.start, previous.end - budget * 16);
  for (;;) {
    const start = overlapStart(text.slice(from, previous.end), budget, from === previous.start);
    if (start !== null) return from + start;
    from = previous.start;
  }
}

/** The offset in `body` where its overlap starts; null when `body` may be cut too short to tell. */
function overlapStart(body: string, budget: number, whole: boolean): number | null {
  const pieces = [...tokenPieces(body)];
  // A window that starts inside the chunk may start inside a piece: that piece cannot be measured.
  const first = whole ? 0 : 1;
  let from = pieces.length;
  let total = 0;
  while (from > first && total + (pieces[from - 1]?.tokens ?? 0) <= budget) {
    from--;
    total += pieces[from]?.tokens ?? 0;
  }
  if (from === first && !whole) return null;
  for (let k = from; k < pieces.length; k++) {
    const piece = pieces[k];
    if (!piece) break;
    const atWord = /^\s/.test(piece.piece) || (piece.index > 0 && /\s/.test(body[piece.index - 1] ?? ''));
    if (atWord) {
      from = k;
      break;
    }
  }
  // The suffix alone, trimmed as chunks are, may count a token more than the pieces it was cut from
  // (" names" is one token, "names" two).
  const shared = (k: number) => countTokens(body.slice(pieces[k]?.index ?? body.length).trim());
  while (from < pieces.length && shared(from) > budget) from++;
  return pieces[from]?.index ?? body.length;
}

/** The last resort for a single unit over maxSize once trimmed: cut at piece boundaries. */
function hardSplit(text: string, start: number, end: number, maxSize: number): Span[] {
  const spans: Span[] = [];
  let from = start;
  let total = 0;
  for (const { index, tokens } of tokenPieces(text.slice(start, end))) {
    if (total + tokens > maxSize && start + index > from) {
      spans.push(makeSpan(text, from, start + index));
      from = start + index;
      total = 0;
    }
    total += tokens;
  }
  spans.push(makeSpan(text, from, end));
  return spans.filter((span) => span.content !== '');
}

// ---------------------------------------------------------------------------------------------------
// Small chunks

/** Merges each chunk under minSize characters into its predecessor or successor, when the result fits. */
function mergeSmall(text: string, spans: Span[], { maxSize, minSize }: ChunkingConfig): Span[] {
  const merged: Span[] = [];
  for (const span of spans) {
    const before = merged.at(-1);
    if (before && (span.content.length < minSize || before.content.length < minSize)) {
      const union = makeSpan(text, before.start, span.end);
      if (union.tokenCount <= maxSize) {
        merged[merged.length - 1] = union;
        continue;
      }
    }
    merged.push(span);
  }
  return merged;
}
