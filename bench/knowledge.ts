// Knowledge bases on a local Postgres with pgvector's HNSW index, local embedder.
// 1. Ingestion: a 5 MB text corpus (BENCH_CORPUS_MB) uploaded as 20 documents through the public
//    API and processed by a runner in this process (parse, chunk, embed in the ingest pool, store):
//    chunks per second from the first upload to the last document completed. Baseline in the same
//    run: the same chunks (content, token count, vector) written with plain batched INSERTs into a
//    table of the same shape and indexes. Rounds alternate the two; each side reports its median.
// 2. Search at 100,000 chunks (BENCH_CHUNKS): synthetic chunks (Zipf-distributed words, 6 sentences
//    or BENCH_CHUNK_SENTENCES, embedded by the local embedder) in one knowledge base;
//    POST /api/v1/knowledge/search p50 and p95 over BENCH_QUERIES queries of words taken from random
//    chunks, beside exact search (a sequential scan, the baseline) of the same queries; recall@10 of
//    the index against exact search.
import { randomUUID } from 'node:crypto';
import { startApi } from '../api/start.ts';
import { createKnowledgeBase } from '../db/knowledge/bases.ts';
import { insertChunks } from '../db/knowledge/ingestion.ts';
import { configureVectorMemory, vectorMemory } from '../db/knowledge/vector-memory.ts';
import { vectorLiteral } from '../db/vectors.ts';
import { createLogger } from '../logger.ts';
import { embedLocal, LOCAL_EMBEDDING_MODEL } from '../runner/embeddings/local.ts';
import { documentUpload, startIngestingService, waitAllSettled } from './lib/ingesting-service.ts';
import { startScratchService } from './lib/scratch-service.ts';
import { random, randomTopic, sentence, text } from './lib/synthetic-corpus.ts';
import { printTable } from './lib/table.ts';

const CORPUS_BYTES = Number(process.env.BENCH_CORPUS_MB ?? 5) * 1024 * 1024;
const DOCUMENTS = 20;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SEARCH_CHUNKS = Number(process.env.BENCH_CHUNKS ?? 100_000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 200);
/** Sentences per synthetic chunk: 6 is about 150 tokens; 40 about the default chunking's 1,024. */
const SENTENCES = Number(process.env.BENCH_CHUNK_SENTENCES ?? 6);
const ADMIN = { userId: null, name: 'bench' } as const;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] as number;

// ---- 1. Ingestion ----

async function benchIngestion() {
  const { svc, api, close } = await startIngestingService();
  await svc.db.query(
    `create table raw_chunks (like knowledge_chunks including defaults including identity including generated including indexes)`,
  );
  // A new corpus each round: a vector the index already holds would be cheap to insert again.
  const corpusOf = () => Array.from({ length: DOCUMENTS }, () => text(Math.floor(CORPUS_BYTES / DOCUMENTS)));
  type Row = { content: string; token_count: number; embedding: string };
  /** Our path: the corpus uploaded to a new knowledge base and processed; its chunks per second. */
  const ingestRound = async (round: number) => {
    const kb = await createKnowledgeBase(svc.db, ADMIN, {
      workspaceId: svc.workspaceId,
      name: `round ${round}`,
      embeddingModel: LOCAL_EMBEDDING_MODEL,
    });
    const corpus = corpusOf();
    const started = performance.now();
    await Promise.all(
      corpus.map(async (content, i) => {
        const { body, contentType } = documentUpload(svc.workspaceId, `doc-${i}.txt`, content);
        const res = await api.app.request(`/api/v1/knowledge/${kb.id}/documents`, {
          method: 'POST',
          headers: { 'X-API-Key': svc.apiKey, 'Content-Type': contentType },
          body,
        });
        if (res.status !== 200) throw new Error(`upload: ${res.status} ${await res.text()}`);
      }),
    );
    await waitAllSettled(svc.db, kb.id);
    const seconds = (performance.now() - started) / 1000;
    const rows = await svc.db.query<Row>(
      'select content, token_count, embedding::text as embedding from knowledge_chunks where knowledge_base_id = $1',
      [kb.id],
    );
    return { rows, rate: rows.length / seconds };
  };
  /**
   * The baseline: the same rows, plain INSERTs of 128 rows into a table with the same indexes (and,
   * like ours, the rows of earlier rounds), on as many connections as the runner processes
   * documents at once.
   */
  const rawRound = async (rows: Row[]) => {
    const document = randomUUID();
    const started = performance.now();
    let next = 0;
    const writer = async () => {
      for (let at = next; at < rows.length; at = next) {
        next += 128;
        const batch = rows.slice(at, at + 128);
        await svc.db.query(
          `insert into raw_chunks (knowledge_base_id, document_id, generation, chunk_index, content, token_count, embedding)
           select $1, $2, 1, t.ord, t.content, t.tokens, t.embedding::vector
             from unnest($3::text[], $4::int[], $5::text[]) with ordinality as t(content, tokens, embedding, ord)`,
          [
            randomUUID(),
            document,
            batch.map((r) => r.content),
            batch.map((r) => r.token_count),
            batch.map((r) => r.embedding),
          ],
        );
      }
    };
    await Promise.all(Array.from({ length: svc.config.INGEST_CONCURRENCY }, writer));
    return rows.length / ((performance.now() - started) / 1000);
  };
  const ours: number[] = [];
  const raw: number[] = [];
  const ratios: number[] = [];
  let rows: Row[] = [];
  try {
    // The baseline always follows: it inserts the rows our path just made, which its table has not
    // held. (Going first in odd rounds, it inserted the previous round's rows again, vectors its index
    // already held, at 3 to 4 times the rate, and the median picked the best of the rest.)
    for (let round = 0; round < ROUNDS; round++) {
      const done = await ingestRound(round);
      rows = done.rows;
      ours.push(done.rate);
      raw.push(await rawRound(rows));
      // Each round's own pair: on a busy machine the load shifts between rounds more than within one.
      const ratio = done.rate / (raw.at(-1) as number);
      ratios.push(ratio);
      console.log(
        `round ${round + 1}: ours ${done.rate.toFixed(1)} chunks/s, raw ${(raw.at(-1) as number).toFixed(1)}, ratio ${ratio.toFixed(2)}`,
      );
    }
  } finally {
    await close();
  }
  return { chunks: rows.length, ours: median(ours), raw: median(raw), ratio: median(ratios) };
}

// ---- 2. Search at scale ----

async function benchSearch() {
  // Latency is the measure here, not the plan's /api/v1 rate limit.
  const svc = await startScratchService({ BILLING_ENABLED: 'false' });
  const log = createLogger('error');
  const api = await startApi({ db: svc.db, config: svc.config, log });
  try {
    const kb = await createKnowledgeBase(svc.db, ADMIN, {
      workspaceId: svc.workspaceId,
      name: 'search',
      embeddingModel: LOCAL_EMBEDDING_MODEL,
    });
    // 100 documents of 1,000 chunks, inserted without the index, which is built once at the end
    // (what a bulk load does; building it row by row would take the bench's whole budget).
    await svc.db.query('drop index knowledge_chunks_embedding_idx');
    const texts: string[] = [];
    const perDocument = Math.ceil(SEARCH_CHUNKS / 100);
    const loadStarted = performance.now();
    for (let d = 0; d * perDocument < SEARCH_CHUNKS; d++) {
      const [doc] = await svc.db.query<{ id: string }>(
        `insert into knowledge_documents (knowledge_base_id, workspace_id, filename, file_size, mime_type,
           storage_key, processing_status, live_generation, target_generation)
         values ($1, $2, $3, 0, 'text/plain', $4, 'completed', 1, 1) returning id`,
        [kb.id, svc.workspaceId, `synthetic-${d}.txt`, `bench/${randomUUID()}`],
      );
      const claim = { documentId: doc?.id as string, knowledgeBaseId: kb.id, generation: 1 };
      const topic = randomTopic();
      const n = Math.min(perDocument, SEARCH_CHUNKS - d * perDocument);
      for (let at = 0; at < n; at += 500) {
        const batch = Array.from({ length: Math.min(500, n - at) }, () => {
          const content = Array.from({ length: SENTENCES }, () => sentence(topic)).join(' ');
          texts.push(content);
          return { content, tokenCount: 0, embedding: embedLocal(content) };
        });
        await insertChunks(svc.db, claim, at, batch);
      }
    }
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    const indexStarted = performance.now();
    // The migration's index, built in one go with room for the whole graph in memory (in one
    // transaction: the setting holds on the connection that builds).
    await svc.db.transaction(async (tx) => {
      await tx.query("set local maintenance_work_mem = '4GB'");
      await tx.query(
        `create index knowledge_chunks_embedding_idx on knowledge_chunks
           using hnsw (embedding vector_cosine_ops) with (m = 32, ef_construction = 200)`,
      );
    });
    await svc.db.query('analyze knowledge_chunks');
    const indexSeconds = (performance.now() - indexStarted) / 1000;

    const queries = Array.from({ length: QUERIES }, () => {
      const words = (texts[Math.floor(random() * texts.length)] as string).replace(/\./g, '').split(' ');
      const from = Math.floor(random() * Math.max(1, words.length - 5));
      return words.slice(from, from + 5).join(' ');
    });
    const search = async (query: string) => {
      const res = await api.app.request('/api/v1/knowledge/search', {
        method: 'POST',
        headers: { 'X-API-Key': svc.apiKey, 'Content-Type': 'application/json' },
        body: JSON.stringify({ workspaceId: svc.workspaceId, knowledgeBaseIds: [kb.id], query, topK: 10 }),
      });
      if (res.status !== 200) throw new Error(`search: ${res.status} ${await res.text()}`);
      const body = (await res.json()) as { data: { results: { documentId: string; chunkIndex: number }[] } };
      return body.data.results.map((r) => `${r.documentId}:${r.chunkIndex}`);
    };
    // Exact search: the same ranking by a sequential scan (no index may serve it).
    const exact = (query: string) =>
      svc.db.transaction(async (tx) => {
        await tx.query('set local enable_indexscan = off');
        const rows = await tx.query<{ document_id: string; chunk_index: number }>(
          `select document_id, chunk_index from knowledge_chunks where knowledge_base_id = $1
            order by embedding <=> $2::vector limit 10`,
          [kb.id, vectorLiteral(embedLocal(query))],
        );
        return rows.map((r) => `${r.document_id}:${r.chunk_index}`);
      });
    // The postings load in the background on a base's first search (the index answers meanwhile);
    // here the load is waited for, and timed, before anything is measured.
    const memoryStarted = performance.now();
    const memory = vectorMemory(svc.db);
    while (!(await memory?.open(svc.db, [kb.id]))) {
      if (performance.now() - memoryStarted > 600_000)
        throw new Error('the postings did not load in 10 minutes');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const memorySeconds = (performance.now() - memoryStarted) / 1000;
    const memoryMb = (memory?.bytes ?? 0) / 1024 / 1024;
    const truths = new Map<string, string[]>();
    const scanned: number[] = [];
    // Latencies first, then recall: an exact scan between two searches would evict the pages the
    // next search reads (100,000 vectors are most of shared_buffers).
    const measure = async () => {
      for (const q of queries.slice(0, 10)) await search(q); // warm the pages and the JIT
      const latencies: number[] = [];
      const answers: string[][] = [];
      for (const q of queries) {
        const t = performance.now();
        answers.push(await search(q));
        latencies.push(performance.now() - t);
      }
      let hits = 0;
      let wanted = 0;
      for (const [i, q] of queries.entries()) {
        let truth = truths.get(q);
        if (!truth) {
          const t = performance.now();
          truth = await exact(q);
          scanned.push(performance.now() - t);
          truths.set(q, truth);
        }
        const got = new Set(answers[i]);
        hits += truth.filter((id) => got.has(id)).length;
        wanted += truth.length;
      }
      return { p50: percentile(latencies, 0.5), p95: percentile(latencies, 0.95), recall: hits / wanted };
    };
    const inMemory = await measure();
    // The same queries with the postings off: every search through the HNSW index.
    configureVectorMemory(svc.db, { memoryBytes: 0 });
    const indexed = await measure();
    return {
      loadSeconds,
      indexSeconds,
      memorySeconds,
      memoryMb,
      inMemory,
      indexed,
      exactP50: percentile(scanned, 0.5),
      exactP95: percentile(scanned, 0.95),
    };
  } finally {
    await api.close();
    await svc.dispose();
  }
}

// BENCH_PART=ingestion or search runs one half.
const part = process.env.BENCH_PART;
const ingestion = part === 'search' ? null : await benchIngestion();
if (ingestion) {
  printTable(
    `Knowledge ingestion: ${CORPUS_BYTES / 1024 / 1024} MB of text in ${DOCUMENTS} documents, ${ingestion.chunks} chunks, median of ${ROUNDS}`,
    [
      {
        measure: 'chunks/s, upload → parse → chunk → embed → store',
        ours: ingestion.ours,
        baselineName: 'raw INSERT of the same rows (128 per statement, as many connections)',
        baseline: ingestion.raw,
        higherIsBetter: true,
      },
    ],
  );
  console.log(`median of the rounds' own ratios: ${ingestion.ratio.toFixed(2)}`);
}
const search = part === 'ingestion' ? null : await benchSearch();
if (search) {
  const { inMemory, indexed } = search;
  printTable(`Knowledge search at ${SEARCH_CHUNKS} chunks: ${QUERIES} queries, topK 10`, [
    {
      measure: 'search p50 (ms), POST /api/v1/knowledge/search',
      ours: inMemory.p50,
      baselineName: 'exact search (sequential scan), p50',
      baseline: search.exactP50,
      higherIsBetter: false,
    },
    {
      measure: 'search p95 (ms)',
      ours: inMemory.p95,
      baselineName: 'exact search, p95',
      baseline: search.exactP95,
      higherIsBetter: false,
    },
    {
      measure: 'search p50 (ms), postings off (HNSW index, ef_search 800)',
      ours: indexed.p50,
      baselineName: 'exact search, p50',
      baseline: search.exactP50,
      higherIsBetter: false,
    },
    {
      measure: 'search p95 (ms), postings off',
      ours: indexed.p95,
      baselineName: 'exact search, p95',
      baseline: search.exactP95,
      higherIsBetter: false,
    },
  ]);
  const met = inMemory.recall >= 0.95 && inMemory.p95 <= 10;
  console.log(
    `recall@10 against exact search: ${inMemory.recall.toFixed(3)}, postings off ${indexed.recall.toFixed(3)} (target: recall >= 0.95 at p95 <= 10 ms, ${
      met ? 'met' : 'NOT met'
    }); load ${search.loadSeconds.toFixed(0)} s, index build ${search.indexSeconds.toFixed(0)} s, postings ${search.memoryMb.toFixed(0)} MB loaded in ${search.memorySeconds.toFixed(1)} s`,
  );
}
