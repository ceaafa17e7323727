// Chunking: every chunk within maxSize cl100k tokens and counted exactly, consecutive chunks sharing
// about `overlap` tokens and never more, no content dropped, chunk ends at sentence boundaries, small
// chunks merged only where they fit. Token counts are checked against js-tiktoken's own encoder.
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CHUNKING_CONFIG } from '../../db/knowledge/bases.ts';
import { type Chunk, type ChunkingConfig, chunkText } from '../../runner/ingestion/chunk.ts';
import { countTokens } from '../../runner/ingestion/tokens.ts';

const reference = new Tiktoken(cl100k);
const tokens = (text: string) => reference.encode(text, [], []).length;

/** A seeded pseudo-random generator: the same text on every run. */
function random(seed: number) {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 2 ** 32;
  };
}

const VOCABULARY =
  'the of and a to in is you that it he was for on are as with his they at be this have from or one had by word but not what all were we when your can said there use an each which she do how their if will up other about out many then them these so some her would make like him into time has look two more write go see number no way could people my than first water been call who oil its now find long down day did get come made may part'.split(
    ' ',
  );

/** Paragraphs of numbered sentences, so that every sentence is unique and ends with a full stop. */
function prose(paragraphs: number, seed = 1): string {
  const next = random(seed);
  let sentence = 0;
  const out: string[] = [];
  for (let p = 0; p < paragraphs; p++) {
    const sentences: string[] = [];
    const count = 2 + Math.floor(next() * 8);
    for (let s = 0; s < count; s++) {
      const words = Array.from(
        { length: 6 + Math.floor(next() * 20) },
        () => VOCABULARY[Math.floor(next() * VOCABULARY.length)],
      );
      sentences.push(`Sentence ${++sentence} says ${words.join(' ')}.`);
    }
    out.push(sentences.join(' '));
  }
  return out.join('\n\n');
}

/** The tokens two consecutive chunks share: the longest end of `a` that starts `b`. */
function sharedTokens(a: string, b: string): number {
  for (let k = Math.min(a.length, b.length); k > 0; k--) {
    if (a.endsWith(b.slice(0, k))) return tokens(b.slice(0, k));
  }
  return 0;
}

/** Checks that the chunks cover the text in order, each starting within or right after the one before. */
function expectCoverage(text: string, chunks: Chunk[]): void {
  let previousStart = -1;
  let previousEnd = 0;
  for (const [i, { content }] of chunks.entries()) {
    const at = text.indexOf(content, previousStart + 1);
    expect(at, `chunk ${i} is a substring of the text after the previous one`).toBeGreaterThan(previousStart);
    // Only whitespace may lie between the previous chunk's end and this one's start.
    expect(text.slice(previousEnd, Math.max(previousEnd, at)).trim(), `gap before chunk ${i}`).toBe('');
    previousStart = at;
    previousEnd = at + content.length;
  }
  expect(text.slice(previousEnd).trim()).toBe('');
  expect(chunks[0] && text.indexOf(chunks[0].content)).toBe(text.length - text.trimStart().length);
}

function expectLimits(chunks: Chunk[], { maxSize }: ChunkingConfig): void {
  for (const chunk of chunks) {
    expect(chunk.tokenCount).toBe(tokens(chunk.content));
    expect(chunk.tokenCount).toBeLessThanOrEqual(maxSize);
    expect(chunk.content.trim()).toBe(chunk.content);
    expect(chunk.content).not.toBe('');
  }
}

describe('chunkText', () => {
  const configs: ChunkingConfig[] = [
    DEFAULT_CHUNKING_CONFIG,
    { maxSize: 100, minSize: 1, overlap: 0 },
    { maxSize: 300, minSize: 50, overlap: 50 },
    { maxSize: 4000, minSize: 2000, overlap: 500 },
    { maxSize: 150, minSize: 100, overlap: 120 },
  ];

  for (const config of configs) {
    it(`keeps ${JSON.stringify(config)}: size, exact counts, overlap, coverage`, async () => {
      const text = prose(config.maxSize >= 1000 ? 400 : 80, config.maxSize);
      const chunks = await chunkText(text, config);
      expect(chunks.length).toBeGreaterThan(3);
      expectLimits(chunks, config);
      expectCoverage(text, chunks);
      for (let i = 1; i < chunks.length; i++) {
        const shared = sharedTokens((chunks[i - 1] as Chunk).content, (chunks[i] as Chunk).content);
        expect(shared, `overlap of chunks ${i - 1} and ${i}`).toBeLessThanOrEqual(config.overlap);
        // About `overlap`: cut at a word boundary, so a word or two short at most.
        expect(shared, `overlap of chunks ${i - 1} and ${i}`).toBeGreaterThanOrEqual(config.overlap - 8);
      }
    });
  }

  it('fills chunks close to maxSize and ends them at sentence ends', async () => {
    const config = { maxSize: 500, minSize: 100, overlap: 0 };
    const chunks = await chunkText(prose(200, 7), config);
    for (const chunk of chunks.slice(0, -1)) {
      expect(chunk.content).toMatch(/\.$/);
      expect(chunk.tokenCount).toBeGreaterThan(config.maxSize * 0.7);
    }
  });

  it('keeps whole paragraphs together when they fit', async () => {
    const paragraphs = Array.from({ length: 30 }, (_, i) => `Paragraph ${i} is short. It has two sentences.`);
    const chunks = await chunkText(paragraphs.join('\n\n'), { maxSize: 100, minSize: 1, overlap: 0 });
    for (const chunk of chunks) expect(chunk.content).toMatch(/^Paragraph \d+ is short\.[\s\S]*sentences\.$/);
  });

  it('keeps a chunk under minSize when no neighbour has room, and drops nothing', async () => {
    const long = prose(40, 3);
    const text = `${long}\n\nThe end.`;
    const config = { maxSize: 200, minSize: 2000, overlap: 0 };
    const chunks = await chunkText(text, config);
    expectLimits(chunks, config);
    expectCoverage(text, chunks);
    expect(chunks.at(-1)?.content).toMatch(/The end\.$/);
    // Every chunk under minSize is one that fits with neither neighbour.
    for (const [i, chunk] of chunks.entries()) {
      if (chunk.content.length >= config.minSize) continue;
      for (const neighbour of [chunks[i - 1], chunks[i + 1]]) {
        if (!neighbour) continue;
        const [first, second] = neighbour === chunks[i - 1] ? [neighbour, chunk] : [chunk, neighbour];
        const start = text.indexOf(first.content);
        const union = text.slice(start, text.indexOf(second.content, start) + second.content.length);
        expect(tokens(union)).toBeGreaterThan(config.maxSize);
      }
    }
  });

  it('returns a short text whole, even under minSize, and nothing for whitespace', async () => {
    expect(await chunkText('  Hello there.  ', DEFAULT_CHUNKING_CONFIG)).toEqual([
      { content: 'Hello there.', tokenCount: tokens('Hello there.') },
    ]);
    expect(await chunkText(' \n\n\t ', DEFAULT_CHUNKING_CONFIG)).toEqual([]);
    expect(await chunkText('', DEFAULT_CHUNKING_CONFIG)).toEqual([]);
  });

  it('splits text without spaces (long words, CJK) within maxSize, counted exactly', async () => {
    const next = random(11);
    const letters = Array.from({ length: 30_000 }, () =>
      String.fromCharCode(97 + Math.floor(next() * 26)),
    ).join('');
    const cjk = Array.from({ length: 6000 }, (_, i) =>
      i % 50 === 49 ? '。' : String.fromCharCode(0x4e00 + Math.floor(next() * 2000)),
    ).join('');
    const config = { maxSize: 256, minSize: 10, overlap: 32 };
    for (const text of [letters, cjk]) {
      const chunks = await chunkText(text, config);
      expectLimits(chunks, config);
      expectCoverage(text, chunks);
    }
  });

  it('counts special-token text as plain text', async () => {
    const text = 'Before <|endoftext|> after, and <|fim_prefix|> too.';
    const [chunk] = await chunkText(text, DEFAULT_CHUNKING_CONFIG);
    expect(chunk).toEqual({ content: text, tokenCount: tokens(text) });
  });

  it('refuses an impossible configuration', async () => {
    await expect(chunkText('x', { maxSize: 100, minSize: 1, overlap: 100 })).rejects.toThrow(RangeError);
    await expect(chunkText('x', { maxSize: 0, minSize: 1, overlap: 0 })).rejects.toThrow(RangeError);
  });
});

describe('countTokens', () => {
  it('equals the cl100k_base encoder on mixed text, long runs and whitespace', () => {
    const next = random(5);
    const samples = [
      prose(20, 9),
      'a'.repeat(5000),
      ' '.repeat(700),
      `| cell ${' '.repeat(300)}| next |`,
      Array.from({ length: 3000 }, () => String.fromCharCode(65 + Math.floor(next() * 58))).join(''),
      'Grüße, 日本語のテキスト, emoji 🙂🙃, and numbers 1234567.',
      "It's what they'll say: I'd've known.",
    ];
    for (const sample of samples) expect(countTokens(sample)).toBe(tokens(sample));
  });
});
