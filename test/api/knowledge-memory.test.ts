// Searches of lexical vectors answered from each process's in-memory postings
// (db/knowledge/vector-memory.ts), and the same searches with the postings off (the HNSW index):
// a search sees every chunk written before it, by this process or another (added, re-embedded,
// ingested), and none disabled or deleted since the postings loaded. Each base holds more chunks
// than the candidates a search of topK 1 takes from memory (22), so postings that missed a write
// would rank the wrong candidates, and the answer would be wrong.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi } from '../../api/start.ts';
import { openPostgres } from '../../db/client.ts';
import {
  configureVectorMemory,
  vectorMemory,
  vectorMemoryOptions,
} from '../../db/knowledge/vector-memory.ts';
import { createLogger } from '../../logger.ts';
import { embedLocal } from '../../runner/embeddings/local.ts';
import { startEmbeddingServer } from '../helpers/openai-server.ts';
import {
  createTenant,
  createWorkspace,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';
import { expectOk } from './files-helpers.ts';
import { createKnowledgeBase, ingest, prose } from './knowledge-helpers.ts';

const small = { maxSize: 100, minSize: 10, overlap: 0 };
const chunksPath = (kb: string, doc: string, chunk?: number | string) =>
  `/api/v1/knowledge/${kb}/documents/${doc}/chunks${chunk === undefined ? '' : `/${chunk}`}`;

// One service for the file, its vector memory configured anew by each describe: every service is a
// PGlite instance on the embedded run, and V8 aborts the process now and then when many WebAssembly
// instances come and go in one (nodejs/node#64500: seen here with five in this file).
let svc: TestService;
let server: Awaited<ReturnType<typeof startEmbeddingServer>>;
beforeAll(async () => {
  server = await startEmbeddingServer();
  svc = await startTestService({ OPENAI_BASE_URL: server.url }, { runner: true });
});
afterAll(async () => {
  await svc?.close();
  await server?.close();
});

/** Fresh postings for the describe's tests: loaded in the background, searches waiting up to 30 s. */
const freshMemory = (options: { pageRows?: number; memoryBytes?: number } = {}) =>
  configureVectorMemory(svc.db, { ...vectorMemoryOptions(svc.config), waitMs: 30_000, ...options });

describe.each([
  ['postings in memory', {}],
  // Loads of many pages: the layout decided from the first rows, the later pages built in as they come.
  ['postings in memory, read 8 rows a page', { pageRows: 8 }],
  ['postings off', { memoryBytes: 0 }],
] as const)('knowledge search, %s', (_, memory) => {
  let tenant: Tenant;
  beforeAll(async () => {
    freshMemory(memory);
    tenant = await createTenant(svc.admin, { plan: 'enterprise' });
  });

  async function baseWithProse() {
    const workspaceId = await createWorkspace(svc.admin, tenant);
    const kb = await createKnowledgeBase(svc, workspaceId, { chunkingConfig: small });
    const doc = await ingest(svc, tenant.key, kb.id, { workspaceId, content: prose(40, 'fox') });
    expect(doc.chunkCount).toBeGreaterThan(30);
    return { workspaceId, kb, doc };
  }

  async function top(workspaceId: string, kb: string, query: string, extra: Record<string, unknown> = {}) {
    const res = await svc.call('POST', '/api/v1/knowledge/search', {
      key: tenant.key,
      body: { workspaceId, knowledgeBaseIds: [kb], query, topK: 1, ...extra },
    });
    expectOk(res);
    return res.body.data.results as { content: string; similarity: number; documentId: string }[];
  }

  it('finds chunks added and re-embedded after the first search, and not those disabled or deleted', async () => {
    const { workspaceId, kb, doc } = await baseWithProse();
    expect((await top(workspaceId, kb.id, 'quick brown fox committee'))[0]?.content).toContain(
      'quick brown fox',
    );

    const added = await svc.call('POST', chunksPath(kb.id, doc.id), {
      key: tenant.key,
      body: { workspaceId, content: 'Zebra quartzite marimba.' },
    });
    expectOk(added);
    const chunkId = added.body.data.chunk.id;
    expect((await top(workspaceId, kb.id, 'zebra quartzite marimba'))[0]?.content).toBe(
      'Zebra quartzite marimba.',
    );

    const changed = await svc.call('PATCH', chunksPath(kb.id, doc.id, chunkId), {
      key: tenant.key,
      body: { workspaceId, content: 'Xylophone lessons happen on Tuesdays.' },
    });
    expectOk(changed);
    const xylophone = () => top(workspaceId, kb.id, 'xylophone lessons tuesdays');
    expect((await xylophone())[0]?.content).toBe('Xylophone lessons happen on Tuesdays.');

    const disabled = await svc.call('PATCH', chunksPath(kb.id, doc.id, chunkId), {
      key: tenant.key,
      body: { workspaceId, enabled: false },
    });
    expectOk(disabled);
    const whileDisabled = await xylophone();
    expect(whileDisabled).toHaveLength(1);
    expect(whileDisabled[0]?.content).not.toContain('Xylophone');

    const enabled = await svc.call('PATCH', chunksPath(kb.id, doc.id, chunkId), {
      key: tenant.key,
      body: { workspaceId, enabled: true },
    });
    expectOk(enabled);
    expect((await xylophone())[0]?.content).toContain('Xylophone');
    const deleted = await svc.call('DELETE', chunksPath(kb.id, doc.id, chunkId), {
      key: tenant.key,
      body: { workspaceId },
    });
    expectOk(deleted);
    const afterDelete = await xylophone();
    expect(afterDelete).toHaveLength(1);
    expect(afterDelete[0]?.content).not.toContain('Xylophone');

    // A document the runner ingests: its chunks are written by the ingestion, not by this request.
    await ingest(svc, tenant.key, kb.id, {
      workspaceId,
      name: 'obsidian.txt',
      content: 'Obsidian harpsichord tuning.',
    });
    expect((await top(workspaceId, kb.id, 'obsidian harpsichord'))[0]?.content).toBe(
      'Obsidian harpsichord tuning.',
    );
  });

  it('answers a tag filter that the best candidates fail, and a threshold, from the rest', async () => {
    const { workspaceId, kb } = await baseWithProse();
    const tag = await svc.call('POST', `/api/v1/knowledge/${kb.id}/tags`, {
      key: tenant.key,
      body: { workspaceId, name: 'team', type: 'text' },
    });
    expectOk(tag);
    const note = await ingest(svc, tenant.key, kb.id, {
      workspaceId,
      name: 'note.txt',
      content: 'A lazy dog note.',
    });
    const tagged = await svc.call('PATCH', `/api/v1/knowledge/${kb.id}/documents/${note.id}`, {
      key: tenant.key,
      body: { workspaceId, tags: { team: 'blue' } },
    });
    expectOk(tagged);
    // Every prose chunk is nearer this query than the note, and none has the tag.
    const query = 'quick brown fox jumps over the lazy dog committee annual budget';
    expect((await top(workspaceId, kb.id, query))[0]?.documentId).not.toBe(note.id);
    const filtered = await top(workspaceId, kb.id, query, {
      tagFilters: [{ tagName: 'team', operator: 'eq', value: 'blue' }],
    });
    expect(filtered.map((r) => r.content)).toEqual(['A lazy dog note.']);
    expect(await top(workspaceId, kb.id, 'zebra quartzite', { scoreThreshold: 0.99 })).toEqual([]);
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    'in another process, a search sees a chunk added after its postings loaded',
    async () => {
      const { workspaceId, kb, doc } = await baseWithProse();
      // A second API on its own connections and memory: another process, as far as the postings go.
      const db = openPostgres(svc.config.DATABASE_URL as string, { max: 2 });
      configureVectorMemory(db, { ...vectorMemoryOptions(svc.config), waitMs: 30_000, ...memory });
      const api = await startApi({ db, config: svc.config, log: createLogger('silent') });
      try {
        const search = async (query: string) => {
          const res = await api.app.request('/api/v1/knowledge/search', {
            method: 'POST',
            headers: { 'X-API-Key': tenant.key, 'Content-Type': 'application/json' },
            body: JSON.stringify({ workspaceId, knowledgeBaseIds: [kb.id], query, topK: 1 }),
          });
          expect(res.status).toBe(200);
          return ((await res.json()) as { data: { results: { content: string }[] } }).data.results;
        };
        expect((await search('quick brown fox'))[0]?.content).toContain('quick brown fox');
        const added = await svc.call('POST', chunksPath(kb.id, doc.id), {
          key: tenant.key,
          body: { workspaceId, content: 'Zebra quartzite marimba.' },
        });
        expectOk(added);
        expect((await search('zebra quartzite marimba'))[0]?.content).toBe('Zebra quartzite marimba.');
      } finally {
        await api.close();
        await db.close();
      }
    },
  );
});

describe('knowledge search of dense vectors (a provider model)', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    freshMemory();
    tenant = await createTenant(svc.admin, { plan: 'enterprise' });
  });

  it('leaves them to the index, which answers', async () => {
    const workspaceId = await createWorkspace(svc.admin, tenant);
    const kb = await svc.admin.knowledge.create.mutate({
      workspaceId,
      name: 'dense',
      embeddingModel: 'text-embedding-3-small',
      chunkingConfig: small,
    });
    const doc = await ingest(svc, tenant.key, kb.id, { workspaceId, content: prose(30, 'dense') });
    expect(doc.processingStatus).toBe('completed');
    const added = await svc.call('POST', chunksPath(kb.id, doc.id), {
      key: tenant.key,
      body: { workspaceId, content: 'Zebra quartzite marimba.' },
    });
    expectOk(added);
    const res = await svc.call('POST', '/api/v1/knowledge/search', {
      key: tenant.key,
      body: { workspaceId, knowledgeBaseIds: [kb.id], query: 'Zebra quartzite marimba.', topK: 1 },
    });
    expectOk(res);
    // The server's vector of a text is the same each time: the chunk itself, at similarity 1.
    expect(res.body.data.results[0].content).toBe('Zebra quartzite marimba.');
    expect(res.body.data.results[0].similarity).toBeCloseTo(1, 5);
    expect(vectorMemory(svc.db)?.bytes).toBe(0);
  });
});

describe('knowledge search of long lexical chunks (the default chunking)', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    freshMemory();
    tenant = await createTenant(svc.admin, { plan: 'enterprise' });
  });

  // Many distinct words, so that a chunk of up to 1,024 tokens sets well over a third of the values;
  // `marker` in the fifth of `length` paragraphs.
  const syllables = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'ze', 'dor', 'lin', 'ver'];
  const word = (i: number) =>
    `${syllables[i % 12]}${syllables[Math.floor(i / 12) % 12]}${syllables[Math.floor(i / 144) % 12]}`;
  const longText = (marker: string, length = 6) =>
    Array.from(
      { length },
      (_, p) =>
        Array.from({ length: 600 }, (_, i) => word(p * 600 + i)).join(' ') + (p === 4 ? ` ${marker}` : ''),
    ).join('\n\n');
  const search = async (workspaceId: string, kb: string, query: string) => {
    const res = await svc.call('POST', '/api/v1/knowledge/search', {
      key: tenant.key,
      body: { workspaceId, knowledgeBaseIds: [kb], query, topK: 1 },
    });
    expectOk(res);
    return res.body.data.results[0]?.content as string | undefined;
  };

  it('serves them from memory too: their vectors have many values set, but a query few', async () => {
    const workspaceId = await createWorkspace(svc.admin, tenant);
    const kb = await createKnowledgeBase(svc, workspaceId);
    const doc = await ingest(svc, tenant.key, kb.id, {
      workspaceId,
      content: longText('Zebra quartzite marimba.'),
    });
    const listed = await svc.call(
      'GET',
      `${chunksPath(kb.id, doc.id)}?workspaceId=${workspaceId}&limit=100`,
      {
        key: tenant.key,
      },
    );
    expectOk(listed);
    const contents = (listed.body.data.chunks as { content: string }[]).map((c) => c.content);
    expect(contents.length).toBeGreaterThan(2);
    // Over the 30 % a base's vectors once had to stay under to be served from memory.
    const set = contents.map((c) => embedLocal(c).filter((x) => x !== 0).length / 1536);
    expect(set.reduce((a, b) => a + b) / set.length).toBeGreaterThan(0.35);
    expect(await search(workspaceId, kb.id, 'zebra quartzite marimba')).toContain('Zebra quartzite marimba.');
    expect(vectorMemory(svc.db)?.bytes).toBeGreaterThan(0);
  });

  it('keeps to its memory budget: the base used longest ago makes room, and one that cannot fit is left to the index', async () => {
    const workspaceId = await createWorkspace(svc.admin, tenant);
    const bases: { id: string; marker: string }[] = [];
    for (const [i, marker] of ['Walrus lantern.', 'Heron anvil.', 'Otter kettle.'].entries()) {
      const kb = await createKnowledgeBase(svc, workspaceId, { name: `budget ${i}` });
      // The third base is four times the others' size.
      await ingest(svc, tenant.key, kb.id, { workspaceId, content: longText(marker, i === 2 ? 24 : 6) });
      bases.push({ id: kb.id, marker });
    }
    const [a, b, c] = bases as [(typeof bases)[0], (typeof bases)[0], (typeof bases)[0]];
    // A fresh memory, measured on the first base, then sized for one base and a half.
    configureVectorMemory(svc.db, { waitMs: 30_000 });
    expect(await search(workspaceId, a.id, 'walrus lantern')).toContain(a.marker);
    const one = vectorMemory(svc.db)?.bytes ?? 0;
    expect(one).toBeGreaterThan(0);
    configureVectorMemory(svc.db, { waitMs: 30_000, memoryBytes: Math.floor(one * 1.5) });
    expect(await search(workspaceId, a.id, 'walrus lantern')).toContain(a.marker);
    expect(vectorMemory(svc.db)?.bytes).toBe(one);
    // The second base takes the first one's place.
    expect(await search(workspaceId, b.id, 'heron anvil')).toContain(b.marker);
    const memory = vectorMemory(svc.db);
    expect(memory?.holds([b.id])).toBe(true);
    expect(memory?.holds([a.id])).toBe(false);
    const second = memory?.bytes ?? 0;
    expect(second).toBeGreaterThan(0);
    expect(second).toBeLessThan(one * 1.5);
    // The third cannot fit at all: the index answers, and the second base stays.
    expect(await search(workspaceId, c.id, 'otter kettle')).toContain(c.marker);
    expect(memory?.holds([c.id])).toBe(false);
    expect(memory?.holds([b.id])).toBe(true);
    expect(memory?.bytes).toBe(second);
    configureVectorMemory(svc.db, { waitMs: 30_000 });
  });
});
