// Synthetic text for the knowledge benches, shaped like English: word frequencies follow Zipf's law
// with the common function words at its head, and each document keeps to a topic (half its words come
// from the topic's own vocabulary), as real documents do. Content words are pseudo-words. Seeded: the
// same corpus every run.

let seed = 42;
export const random = () => {
  // mulberry32: the same corpus every run.
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ne',
  'ru',
  'sa',
  'ti',
  'vo',
  'ze',
  'qua',
  'pre',
  'dor',
  'lin',
  'ver',
  'tos',
];
const FUNCTION_WORDS =
  'the of and to a in is it that for was on are as with be at by this have from or an they which you one were all we her she there would their will when who him been has more if no out so what up its about than into them can only'.split(
    ' ',
  );
const PSEUDO_WORDS = Array.from({ length: 20_000 }, () => {
  const n = 2 + Math.floor(random() * 3);
  return Array.from({ length: n }, () => SYLLABLES[Math.floor(random() * SYLLABLES.length)]).join('');
});
const VOCABULARY = [...FUNCTION_WORDS, ...PSEUDO_WORDS];
const TOPICS = Array.from({ length: 200 }, () =>
  Array.from({ length: 400 }, () => PSEUDO_WORDS[1000 + Math.floor(random() * 19_000)] as string),
);
/** Zipf(1) over n ranks: rank r with weight 1/r, sampled through the cumulative weights. */
function zipf(n: number): () => number {
  const c = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) c[i] = sum += 1 / (i + 1);
  for (let i = 0; i < n; i++) c[i] = (c[i] as number) / sum;
  return () => {
    const x = random();
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((c[mid] as number) < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}
const generalRank = zipf(VOCABULARY.length);
const topicRank = zipf(400);
export const randomTopic = () => Math.floor(random() * TOPICS.length);
export function sentence(topic: number): string {
  const n = 8 + Math.floor(random() * 12);
  const words = Array.from({ length: n }, () =>
    random() < 0.5 ? (TOPICS[topic]?.[topicRank()] as string) : (VOCABULARY[generalRank()] as string),
  );
  return `${words.join(' ')}.`;
}
export function text(bytes: number): string {
  const topic = randomTopic();
  const parts: string[] = [];
  let size = 0;
  while (size < bytes) {
    const paragraph = Array.from({ length: 4 + Math.floor(random() * 4) }, () => sentence(topic)).join(' ');
    parts.push(paragraph);
    size += paragraph.length + 2;
  }
  return parts.join('\n\n').slice(0, bytes);
}
