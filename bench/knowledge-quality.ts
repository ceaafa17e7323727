// Retrieval quality on real text, with the default local embedding model: the chapters of a short
// handbook (bench/lib/quality-corpus.ts, HTML pages written for the project) uploaded to a knowledge
// base through the public API and processed by a runner in this process, then questions asked the
// way users ask them through POST /api/v1/knowledge/search in each search mode.
// A result answers when it is a chunk of the answering chapter holding the answer's passage.
// Reported per mode: recall@5 (questions answered within the first 5 results) and MRR (the mean of
// 1 / rank of the first answering result within the first 10, 0 when none), beside BM25 computed
// in the same run by MiniSearch (plain Okapi BM25: k 1.2, b 0.75, no BM25+ δ, no stemming, prefix
// or fuzzy matching) over the very same chunks.
// BENCH_CHUNK_TOKENS sets the base's chunk size (default 128 tokens, about a paragraph).
import MiniSearch from 'minisearch';
import { createKnowledgeBase } from '../db/knowledge/bases.ts';
import { LOCAL_EMBEDDING_MODEL } from '../runner/embeddings/local.ts';
import { documentUpload, startIngestingService, waitAllSettled } from './lib/ingesting-service.ts';
import { CHAPTERS, chapterHtml, QUESTIONS, type Question } from './lib/quality-corpus.ts';
import { printTable } from './lib/table.ts';

const CHUNK_TOKENS = Number(process.env.BENCH_CHUNK_TOKENS ?? 128);
const MODES = ['vector', 'hybrid', 'fulltext'] as const;
const DEPTH = 10;

interface Found {
  file: string;
  content: string;
}

const squash = (s: string) => s.replace(/\s+/g, ' ').toLowerCase();
const answers = (q: Question, r: Found) => r.file === q.file && squash(r.content).includes(squash(q.passage));

/** recall@5 and MRR@10 of ranked result lists, one per question, in QUESTIONS' order. */
function score(lists: Found[][]) {
  let recall = 0;
  let mrr = 0;
  for (const [i, list] of lists.entries()) {
    const q = QUESTIONS[i] as Question;
    const rank = list.findIndex((r) => answers(q, r));
    if (rank >= 0 && rank < 5) recall++;
    if (rank >= 0) mrr += 1 / (rank + 1);
  }
  return { recall: recall / lists.length, mrr: mrr / lists.length };
}

const { svc, api, close } = await startIngestingService({ BILLING_ENABLED: 'false' });
try {
  const kb = await createKnowledgeBase(
    svc.db,
    { userId: null, name: 'bench' },
    {
      workspaceId: svc.workspaceId,
      name: "The Keeper's Year",
      embeddingModel: LOCAL_EMBEDDING_MODEL,
      chunkingConfig: { maxSize: CHUNK_TOKENS, minSize: 100, overlap: Math.floor(CHUNK_TOKENS / 8) },
    },
  );
  const request = (path: string, init: RequestInit) =>
    api.app.request(path, { ...init, headers: { 'X-API-Key': svc.apiKey, ...init.headers } });
  for (const chapter of CHAPTERS) {
    const { body, contentType } = documentUpload(
      svc.workspaceId,
      chapter.file,
      chapterHtml(chapter),
      'text/html',
    );
    const res = await request(`/api/v1/knowledge/${kb.id}/documents`, {
      method: 'POST',
      headers: { 'Content-Type': contentType },
      body,
    });
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${await res.text()}`);
  }
  await waitAllSettled(svc.db, kb.id);
  const chunks = await svc.db.query<{ id: string; file: string; content: string }>(
    `select c.id, d.filename as file, c.content from knowledge_chunks c
       join knowledge_documents d on d.id = c.document_id and c.generation = d.live_generation
      where c.knowledge_base_id = $1`,
    [kb.id],
  );
  // Every question must be answerable: its passage whole in some chunk of its chapter.
  for (const q of QUESTIONS) {
    if (!chunks.some((c) => answers(q, c))) throw new Error(`no chunk holds the passage "${q.passage}"`);
  }

  const search = async (query: string, searchMode: string): Promise<Found[]> => {
    const res = await request('/api/v1/knowledge/search', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        workspaceId: svc.workspaceId,
        knowledgeBaseIds: [kb.id],
        query,
        topK: DEPTH,
        searchMode,
      }),
    });
    if (res.status !== 200) throw new Error(`search: ${res.status} ${await res.text()}`);
    const body = (await res.json()) as { data: { results: { documentName: string; content: string }[] } };
    return body.data.results.map((r) => ({ file: r.documentName, content: r.content }));
  };
  const ours = new Map<string, { recall: number; mrr: number }>();
  for (const mode of MODES) {
    const lists: Found[][] = [];
    for (const q of QUESTIONS) lists.push(await search(q.question, mode));
    ours.set(mode, score(lists));
  }

  const bm25 = new MiniSearch<{ id: string; file: string; content: string }>({
    fields: ['content'],
    storeFields: ['file', 'content'],
    searchOptions: { bm25: { k: 1.2, b: 0.75, d: 0 } },
  });
  bm25.addAll(chunks);
  const baseline = score(
    QUESTIONS.map((q) =>
      bm25
        .search(q.question)
        .slice(0, DEPTH)
        .map((r) => ({ file: r.file as string, content: r.content as string })),
    ),
  );

  printTable(
    `Knowledge retrieval quality: ${CHAPTERS.length} chapters, ${chunks.length} chunks of at most ${CHUNK_TOKENS} tokens, ${QUESTIONS.length} questions, local embeddings`,
    MODES.flatMap((mode) => {
      const m = ours.get(mode) as { recall: number; mrr: number };
      return [
        {
          measure: `${mode}: recall@5`,
          ours: m.recall,
          baselineName: 'BM25 (MiniSearch): recall@5',
          baseline: baseline.recall,
          higherIsBetter: true,
        },
        {
          measure: `${mode}: MRR@10`,
          ours: m.mrr,
          baselineName: 'BM25 (MiniSearch): MRR@10',
          baseline: baseline.mrr,
          higherIsBetter: true,
        },
      ];
    }),
  );
  const vector = ours.get('vector') as { recall: number; mrr: number };
  console.log(
    `default mode (vector) at least matches BM25: ${vector.recall >= baseline.recall && vector.mrr >= baseline.mrr ? 'yes' : 'NO'}`,
  );
} finally {
  await close();
}
