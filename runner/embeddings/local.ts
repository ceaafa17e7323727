// The `local` embedding model: a deterministic lexical embedding computed on the CPU, offline, with no
// model file. It finds texts that share words (and word pieces), not texts that mean the same in other
// words; it is the default so that knowledge bases work with no provider configured.
//
// The scheme, `local-hashed-ngrams-v1` (changing any detail below needs a new model name, since stored
// vectors would no longer compare with new ones):
//
// 1. Normalise: Unicode NFKC, then lower case (String.prototype.toLowerCase, locale-independent).
// 2. Words: maximal runs of letters, marks and digits (\p{L}\p{M}\p{N}); a Han, Hiragana or Katakana
//    character is a word on its own, since those scripts do not separate words by spaces. The most
//    common English function words (STOP_WORDS below) are then left out, unless the text has no
//    other word: they occur in nearly every chunk, and counted they make all chunks look alike, which
//    both blurs the ranking and keeps an HNSW index from telling chunks apart (measured: recall@10
//    of the index rose from 0.79 to 0.86 on a synthetic English-like corpus).
// 3. Features, each with a weight:
//      unigram   every word                                   weight 1
//      bigram    every pair of consecutive words              weight 0.5
//      trigram   every character trigram of "<" + word + ">"  weight 0.25
//    (so "cat" gives the trigrams "<ca", "cat", "at>"; a one-letter word gives one, "<a>").
// 4. Hash: FNV-1a (32-bit) over the feature's UTF-16 code units, started from the FNV offset basis
//    XOR a per-kind seed (unigram 0x01, bigram 0x02, trigram 0x03; a bigram hashes word, U+0020, word),
//    then murmur3's fmix32 finaliser. Bits 2..31 of that are the feature's key; dimension = key mod 1536;
//    sign = +1 when bit 0 is set, else -1 (signs keep colliding features from adding up in one direction).
// 5. Value: each distinct feature adds sign × weight × (1 + ln tf) to its dimension, tf being its count
//    in the text (sublinear, so a repeated word does not swamp the rest).
// 6. L2-normalise. A text with no word at all (empty, or only punctuation) gets the unit vector on
//    dimension 0 rather than a zero vector, whose cosine distance is undefined (NaN in pgvector).
import { EMBEDDING_DIMENSIONS } from './embedder.ts';

export const LOCAL_EMBEDDING_MODEL = 'local-hashed-ngrams-v1';

const UNIGRAM_WEIGHT = 1;
const BIGRAM_WEIGHT = 0.5;
const TRIGRAM_WEIGHT = 0.25;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const UNIGRAM_SEED = 0x01;
const BIGRAM_SEED = 0x02;
const TRIGRAM_SEED = 0x03;
const SPACE = 0x20;
const WORD_START = 0x3c; // "<"
const WORD_END = 0x3e; // ">"
const WORDS =
  /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}]|[[\p{L}\p{M}\p{N}]--[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}]]+/gv;

// The commonest English function words (articles, pronouns, prepositions, conjunctions, auxiliaries).
const STOP_WORDS: ReadonlySet<string> = new Set([
  'the',
  'of',
  'and',
  'to',
  'a',
  'in',
  'is',
  'it',
  'that',
  'for',
  'was',
  'on',
  'are',
  'as',
  'with',
  'be',
  'at',
  'by',
  'this',
  'have',
  'from',
  'or',
  'an',
  'they',
  'which',
  'you',
  'were',
  'all',
  'we',
  'her',
  'she',
  'there',
  'would',
  'their',
  'will',
  'when',
  'who',
  'him',
  'been',
  'has',
  'more',
  'if',
  'no',
  'out',
  'so',
  'what',
  'up',
  'its',
  'about',
  'than',
  'into',
  'them',
  'can',
  'only',
  'other',
  'some',
  'could',
  'these',
  'may',
  'then',
  'do',
  'any',
  'my',
  'now',
  'such',
  'like',
  'our',
  'over',
  'me',
  'most',
  'after',
  'also',
  'did',
  'many',
  'before',
  'must',
  'through',
  'where',
  'much',
  'your',
  'down',
  'should',
  'because',
  'each',
  'just',
  'those',
  'how',
  'too',
  'very',
  'here',
  'between',
  'both',
  'being',
  'under',
  'while',
  'might',
  'us',
  'off',
  'since',
  'against',
  'not',
  'but',
  'his',
  'he',
  'had',
  'i',
]);

/** The embedding of one text: EMBEDDING_DIMENSIONS values, unit length. */
export function embedLocal(text: string): Float32Array {
  const all = text.normalize('NFKC').toLowerCase().match(WORDS) ?? [];
  const content = all.filter((w) => !STOP_WORDS.has(w));
  const words = content.length ? content : all;
  const vector = new Float32Array(EMBEDDING_DIMENSIONS);
  if (words.length === 0) {
    vector[0] = 1;
    return vector;
  }
  const unigrams = new Map<number, number>();
  const bigrams = new Map<number, number>();
  const trigrams = new Map<number, number>();
  let previous: string | undefined;
  for (const word of words) {
    count(unigrams, finish(feed(seeded(UNIGRAM_SEED), word)));
    if (previous !== undefined) {
      count(bigrams, finish(feed(fnvStep(feed(seeded(BIGRAM_SEED), previous), SPACE), word)));
    }
    countTrigrams(trigrams, word);
    previous = word;
  }
  add(vector, unigrams, UNIGRAM_WEIGHT);
  add(vector, bigrams, BIGRAM_WEIGHT);
  add(vector, trigrams, TRIGRAM_WEIGHT);
  return normalize(vector);
}

/** The trigrams of "<word>", hashed from its code units without building the padded string. */
function countTrigrams(counts: Map<number, number>, word: string): void {
  const length = word.length + 2;
  const at = (i: number) => (i === 0 ? WORD_START : i === length - 1 ? WORD_END : word.charCodeAt(i - 1));
  // A one-letter word pads to three characters: one trigram; an empty word cannot occur.
  for (let i = 0; i + 3 <= length; i++) {
    let hash = seeded(TRIGRAM_SEED);
    hash = fnvStep(hash, at(i));
    hash = fnvStep(hash, at(i + 1));
    hash = fnvStep(hash, at(i + 2));
    count(counts, finish(hash));
  }
}

function count(counts: Map<number, number>, hash: number): void {
  counts.set(hash, (counts.get(hash) ?? 0) + 1);
}

/** Adds each feature's sign × weight × (1 + ln tf); `counts` maps finished hashes to their tf. */
function add(vector: Float32Array, counts: Map<number, number>, weight: number): void {
  for (const [hash, tf] of counts) {
    const key = hash >>> 2;
    const sign = hash & 1 ? 1 : -1;
    const dimension = key % EMBEDDING_DIMENSIONS;
    vector[dimension] = (vector[dimension] as number) + sign * weight * (1 + Math.log(tf));
  }
}

function normalize(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const value of vector) sum += value * value;
  if (sum === 0) {
    // Every feature cancelled out (opposite signs in one dimension): as for a text with no words.
    vector[0] = 1;
    return vector;
  }
  const scale = 1 / Math.sqrt(sum);
  for (let i = 0; i < vector.length; i++) vector[i] = (vector[i] as number) * scale;
  return vector;
}

function seeded(seed: number): number {
  return (FNV_OFFSET ^ seed) >>> 0;
}

function feed(hash: number, text: string): number {
  let h = hash;
  for (let i = 0; i < text.length; i++) h = fnvStep(h, text.charCodeAt(i));
  return h;
}

function fnvStep(hash: number, codeUnit: number): number {
  return Math.imul(hash ^ codeUnit, FNV_PRIME) >>> 0;
}

/** murmur3's fmix32: spreads FNV's weak low bits over the whole word before they pick a dimension. */
function finish(hash: number): number {
  let h = hash;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
