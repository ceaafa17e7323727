// A runner process killed in the middle of ingesting a document loses nothing: the job's heartbeat
// stops, pg-boss hands it to another runner, whose claim clears the chunks the dead one had stored,
// and the document ends completed with consistent counts. Needs a server database (the embedded
// one serves one process), so it runs in the TEST_DATABASE_URL pass.
import type { ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { expectOk } from '../api/files-helpers.ts';
import { createKnowledgeBase, documentOf, prose, settled, uploadDocument } from '../api/knowledge-helpers.ts';
import { exited, killAll, startServiceRunner } from '../helpers/runner-processes.ts';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';

const serverDatabase = Boolean(process.env.TEST_DATABASE_URL);

let svc: TestService;
let tenant: Tenant;
const runners: ChildProcess[] = [];

const startRunner = () => startServiceRunner(svc, runners, { INGEST_CONCURRENCY: '2' });

/** Several MB of text in many paragraphs: ingestion takes a while. */
function bigText(bytes: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const p =
      `Paragraph ${i} records observation ${i * 7919} of station ${i % 97}. ` +
      `The survey team measured rainfall, wind speed and soil moisture near marker ${i % 1013}. `.repeat(4);
    parts.push(p);
    size += p.length + 2;
  }
  return parts.join('\n\n');
}

async function chunkFigures(documentId: string) {
  const [row] = await svc.db.query<{ n: number | string; tokens: number | string | null }>(
    'select count(*) as n, sum(token_count) as tokens from knowledge_chunks where document_id = $1',
    [documentId],
  );
  return { chunks: Number(row?.n), tokens: Number(row?.tokens ?? 0) };
}

describe.runIf(serverDatabase)('ingestion across runner processes', () => {
  beforeAll(async () => {
    // Jobs carry the heartbeat of their queue: short here, so a killed runner is noticed soon.
    svc = await startTestService({ QUEUE_HEARTBEAT_SECONDS: '10' });
    tenant = await createTenant(svc.admin, { plan: 'enterprise' });
  });
  afterEach(async () => {
    await killAll(runners);
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('completes a document whose runner was killed mid-ingest, on another runner, without duplicate chunks', async () => {
    const workspaceId = tenant.workspace.id;
    // The default chunking config: about 1,200 chunks, some seconds of work for one runner.
    const kb = await createKnowledgeBase(svc, workspaceId);
    const content = bigText(4 * 1024 * 1024);

    const doomed = await startRunner();
    const res = await uploadDocument(svc, tenant.key, kb.id, { workspaceId, name: 'survey.txt', content });
    expectOk(res);
    const documentId = res.body.data.document.id as string;

    // Kill the runner once it is processing and has stored some chunks, but not all.
    let partial = 0;
    for (let i = 0; ; i++) {
      const doc = await documentOf(svc, documentId);
      expect(doc.processingStatus, 'finished before it could be killed: make the document bigger').not.toBe(
        'completed',
      );
      partial = (await chunkFigures(documentId)).chunks;
      if (doc.processingStatus === 'processing' && partial > 0) break;
      if (i > 2400) throw new Error(`document still ${doc.processingStatus} with ${partial} chunks`);
      await new Promise((r) => setTimeout(r, 25));
    }
    doomed.kill('SIGKILL');
    expect(await exited(doomed)).toEqual({ code: null, signal: 'SIGKILL' });
    const killed = await documentOf(svc, documentId);
    expect(killed.processingStatus).toBe('processing');
    partial = (await chunkFigures(documentId)).chunks;
    expect(partial).toBeGreaterThan(0);

    await startRunner();
    // The same text uploaded again, processed start to finish by the surviving runner while the
    // dead one's heartbeat lapses: the figures the interrupted document must end with.
    const twinRes = await uploadDocument(svc, tenant.key, kb.id, {
      workspaceId,
      name: 'twin.txt',
      content,
      allowDuplicate: true,
    });
    expectOk(twinRes);
    const twin = await settled(svc, twinRes.body.data.document.id, 120_000);
    expect(twin.processingStatus).toBe('completed');

    // The heartbeat (10 s) lapses, pg-boss retries the job, the new runner claims a second attempt.
    const done = await settled(svc, documentId, 120_000);
    expect(done.processingStatus, done.processingError ?? '').toBe('completed');
    expect(done.chunkCount).toBeGreaterThan(partial);
    expect(done.chunkCount).toBe(twin.chunkCount);
    expect(done.tokenCount).toBe(twin.tokenCount);

    const figures = await chunkFigures(documentId);
    expect(figures).toEqual({ chunks: done.chunkCount, tokens: done.tokenCount });
    const [doc] = await svc.db.query<{
      attempts: number;
      live_generation: number;
      target_generation: number;
    }>('select attempts, live_generation, target_generation from knowledge_documents where id = $1', [
      documentId,
    ]);
    expect(doc).toEqual({ attempts: 2, live_generation: 1, target_generation: 1 });
    // One chunk per index of the live generation, numbered 0..n-1, and nothing else.
    const [shape] = await svc.db.query<{
      n: number | string;
      distinct_indexes: number | string;
      lowest: number;
      highest: number;
      generations: number | string;
    }>(
      `select count(*) as n, count(distinct chunk_index) as distinct_indexes, min(chunk_index) as lowest,
              max(chunk_index) as highest, count(distinct generation) as generations
         from knowledge_chunks where document_id = $1`,
      [documentId],
    );
    expect({
      n: Number(shape?.n),
      distinct: Number(shape?.distinct_indexes),
      lowest: shape?.lowest,
      highest: shape?.highest,
      generations: Number(shape?.generations),
    }).toEqual({
      n: done.chunkCount,
      distinct: done.chunkCount,
      lowest: 0,
      highest: done.chunkCount - 1,
      generations: 1,
    });
    // The same chunks as the twin's, in the same order.
    const [same] = await svc.db.query<{ differing: number | string }>(
      `select count(*) as differing
         from (select chunk_index, content from knowledge_chunks where document_id = $1) a
         full join (select chunk_index, content from knowledge_chunks where document_id = $2) b using (chunk_index)
        where a.content is distinct from b.content`,
      [documentId, twin.id],
    );
    expect(Number(same?.differing)).toBe(0);

    // Searchable once, not twice.
    const search = await svc.call('POST', '/api/v1/knowledge/search', {
      key: tenant.key,
      body: { workspaceId, knowledgeBaseIds: [kb.id], query: 'observation station marker', topK: 100 },
    });
    expect(search.status, JSON.stringify(search.body).slice(0, 300)).toBe(200);
    const keys = search.body.data.results.map(
      (r: { documentId: string; chunkIndex: number }) => `${r.documentId}:${r.chunkIndex}`,
    );
    expect(new Set(keys).size).toBe(keys.length);
  }, 300_000);

  it('prepares the next document while one stores, and stores no more than INGEST_CONCURRENCY at once', async () => {
    const workspaceId = tenant.workspace.id;
    const kb = await createKnowledgeBase(svc, workspaceId, {
      chunkingConfig: { maxSize: 100, minSize: 50, overlap: 0 },
    });
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) {
      const res = await uploadDocument(svc, tenant.key, kb.id, {
        workspaceId,
        name: `doc${n}.txt`,
        content: prose(6, `batch ${n}`),
      });
      expectOk(res);
      ids.push(res.body.data.document.id);
    }
    const statuses = async () =>
      (await Promise.all(ids.map((id) => documentOf(svc, id)))).map((d) => d.processingStatus);
    // Inserts whose foreign key check waits for the knowledge base's row, which this test holds.
    const waitingInserts = async () => {
      const [row] = await svc.db.query<{ n: number | string }>(
        `select count(*) as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock'
            and query like 'insert into knowledge_chunks%'`,
      );
      return Number(row?.n);
    };
    let release = () => {};
    const released = new Promise<void>((r) => {
      release = r;
    });
    let locked = () => {};
    const isLocked = new Promise<void>((r) => {
      locked = r;
    });
    // FOR UPDATE conflicts with the KEY SHARE lock an insert's foreign key check takes: chunks
    // cannot be stored while it is held, while claiming, reading, parsing and embedding go on.
    const holder = svc.db.transaction(async (tx) => {
      await tx.query('select id from knowledge_bases where id = $1 for update', [kb.id]);
      locked();
      await released;
    });
    try {
      await isLocked;
      await startServiceRunner(svc, runners, { INGEST_CONCURRENCY: '1' });
      // One document stores (its insert waits on the lock), one more is claimed and prepared
      // meanwhile; the third waits in the queue.
      for (let i = 0; ; i++) {
        const now = await statuses();
        if (now.filter((s) => s === 'processing').length === 2 && (await waitingInserts()) === 1) {
          expect(now.filter((s) => s === 'pending')).toHaveLength(1);
          break;
        }
        if (i > 1500)
          throw new Error(`documents ${now.join(', ')}, ${await waitingInserts()} inserts waiting`);
        await new Promise((r) => setTimeout(r, 20));
      }
      // The prepared document does not store beside the first (a second insert would queue on the lock).
      for (let i = 0; i < 25; i++) {
        expect(await waitingInserts()).toBe(1);
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      release();
      await holder;
    }
    for (const id of ids) {
      const doc = await settled(svc, id, 60_000);
      expect(doc.processingStatus, doc.processingError ?? '').toBe('completed');
      expect(doc.chunkCount).toBeGreaterThan(1);
      expect((await chunkFigures(id)).chunks).toBe(doc.chunkCount);
    }
  }, 120_000);
});
