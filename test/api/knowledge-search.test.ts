// POST /api/v1/knowledge/search (6): vector search with the local embedder, hybrid search fused with
// full text, search by tags alone, every tag operator of every tag type (escaping included), tags
// that sit in different slots in different knowledge bases, and the requests that fail: 400s for
// bad filters and bounds, 404 for a knowledge base of another workspace.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Tenant } from '../helpers/service.ts';
import { useService } from '../helpers/use-service.ts';
import { expectError, expectOk } from './files-helpers.ts';
import { createKnowledgeBase, ingest } from './knowledge-helpers.ts';

const { svc, tenant, other } = useService({ runner: true, plan: 'enterprise' });

async function freshWorkspace(t: Tenant = tenant) {
  const ws = await svc.admin.workspaces.create.mutate({
    orgId: t.org.id,
    ownerId: t.user.id,
    name: `ws ${Math.random()}`,
    skipDefaultWorkflow: true,
  });
  return ws.id as string;
}

type Tags = Record<string, string | number | boolean | null>;

/** A processed document of one or more chunks, with tags set when given. */
async function addDocument(
  workspaceId: string,
  knowledgeBaseId: string,
  name: string,
  content: string,
  tags?: Tags,
) {
  const doc = await ingest(svc, tenant.key, knowledgeBaseId, { workspaceId, name, content });
  expect(doc.processingStatus, doc.processingError ?? '').toBe('completed');
  if (tags) await svc.admin.knowledge.setDocumentTags.mutate({ documentId: doc.id, tags });
  return doc.id;
}

function search(body: Record<string, unknown>, key = tenant.key) {
  return svc.call('POST', '/api/v1/knowledge/search', { key, body });
}

/** The names of the documents a successful search found, sorted (one chunk each in these tests). */
async function found(body: Record<string, unknown>): Promise<string[]> {
  const res = await search(body);
  expectOk(res);
  return (res.body.data.results as { documentName: string }[]).map((r) => r.documentName).sort();
}

describe('vector search', () => {
  let workspaceId: string;
  let kb: { id: string };

  beforeAll(async () => {
    workspaceId = await freshWorkspace();
    kb = await createKnowledgeBase(svc, workspaceId);
    await addDocument(
      workspaceId,
      kb.id,
      'planets.txt',
      'The orbit of Jupiter and its moons Io, Europa, Ganymede and Callisto around the giant planet.',
    );
    await addDocument(
      workspaceId,
      kb.id,
      'bread.txt',
      'A sourdough bread recipe: flour, water, salt and a lively starter, baked in a hot oven.',
    );
    await addDocument(
      workspaceId,
      kb.id,
      'budget.txt',
      'The quarterly budget review for the finance committee, with spending and revenue forecasts.',
    );
  });

  it('ranks the chunk holding the query words first, with the search echoed', async () => {
    const res = await search({ workspaceId, knowledgeBaseIds: [kb.id], query: '  sourdough bread recipe  ' });
    expectOk(res);
    const { results, ...echo } = res.body.data;
    expect(echo).toEqual({
      query: 'sourdough bread recipe',
      knowledgeBaseIds: [kb.id],
      topK: 10,
      totalResults: 3,
    });
    expect(results).toHaveLength(3);
    expect(results[0]).toEqual({
      documentId: expect.any(String),
      documentName: 'bread.txt',
      content: expect.stringContaining('sourdough bread recipe'),
      chunkIndex: 0,
      similarity: expect.any(Number),
      score: expect.any(Number),
      metadata: {},
    });
    // In vector mode the order is the similarity's, and the score is the similarity.
    for (const r of results) expect(r.score).toBe(r.similarity);
    const similarities = results.map((r: { similarity: number }) => r.similarity);
    expect(similarities[0]).toBeGreaterThan(0);
    expect(similarities[0]).toBeLessThanOrEqual(1 + 1e-6);
    expect([...similarities].sort((a, b) => b - a)).toEqual(similarities);

    const moons = await search({ workspaceId, knowledgeBaseIds: [kb.id], query: 'Jupiter moons Europa' });
    expect(moons.body.data.results[0].documentName).toBe('planets.txt');
  });

  it('answers topK results at most, and takes topK from 1 to 100 only', async () => {
    const one = await search({ workspaceId, knowledgeBaseIds: [kb.id], query: 'budget', topK: 1 });
    expectOk(one);
    expect(one.body.data.results.map((r: { documentName: string }) => r.documentName)).toEqual([
      'budget.txt',
    ]);
    expect(one.body.data.totalResults).toBe(1);
    const all = await search({ workspaceId, knowledgeBaseIds: [kb.id], query: 'budget', topK: 100 });
    expect(all.body.data.results).toHaveLength(3);
    for (const topK of [0, 101, 2.5, '5']) {
      const res = await search({ workspaceId, knowledgeBaseIds: [kb.id], query: 'budget', topK });
      expectError(res, 400);
      expect(res.body.details.map((d: { path: unknown[] }) => d.path)).toEqual([['topK']]);
    }
  });

  it('counts a knowledge base named twice once', async () => {
    const res = await search({ workspaceId, knowledgeBaseIds: [kb.id, kb.id.toUpperCase()], query: 'oven' });
    expectOk(res);
    expect(res.body.data.knowledgeBaseIds).toEqual([kb.id]);
    expect(res.body.data.results).toHaveLength(3);
  });

  it('leaves disabled documents out until they are enabled again', async () => {
    const res = await search({ workspaceId, knowledgeBaseIds: [kb.id], query: 'Jupiter' });
    const planets = res.body.data.results.find(
      (r: { documentName: string }) => r.documentName === 'planets.txt',
    );
    await svc.admin.knowledge.setDocumentEnabled.mutate({ documentId: planets.documentId, enabled: false });
    expect(await found({ workspaceId, knowledgeBaseIds: [kb.id], query: 'Jupiter' })).toEqual([
      'bread.txt',
      'budget.txt',
    ]);
    await svc.admin.knowledge.setDocumentEnabled.mutate({ documentId: planets.documentId, enabled: true });
    expect(await found({ workspaceId, knowledgeBaseIds: [kb.id], query: 'Jupiter' })).toHaveLength(3);
  });

  it('answers 404 for a knowledge base of another workspace or none at all, among others or alone', async () => {
    const elsewhere = await freshWorkspace(other);
    const foreign = await createKnowledgeBase(svc, elsewhere);
    const sibling = await createKnowledgeBase(svc, await freshWorkspace());
    const missing = '00000000-0000-4000-8000-000000000000';
    for (const ids of [[foreign.id], [kb.id, foreign.id], [sibling.id], [missing]]) {
      const res = await search({ workspaceId, knowledgeBaseIds: ids, query: 'budget' });
      expectError(res, 404);
      expect(res.body.error).toBe('Knowledge base not found');
    }
  });

  it('refuses a search with neither a query nor tag filters, and malformed bodies', async () => {
    for (const body of [
      { workspaceId, knowledgeBaseIds: [kb.id] },
      { workspaceId, knowledgeBaseIds: [kb.id], query: '   ' },
      { workspaceId, knowledgeBaseIds: [kb.id], query: '', tagFilters: [] },
    ]) {
      const res = await search(body);
      expectError(res, 400);
      expect(res.body.details).toEqual([expect.objectContaining({ path: ['query'] })]);
    }
    const bad: [Record<string, unknown>, (string | number)[]][] = [
      [{ workspaceId, knowledgeBaseIds: [], query: 'x' }, ['knowledgeBaseIds']],
      [{ workspaceId, knowledgeBaseIds: ['nope'], query: 'x' }, ['knowledgeBaseIds', 0]],
      [
        { workspaceId, knowledgeBaseIds: Array.from({ length: 21 }, () => kb.id), query: 'x' },
        ['knowledgeBaseIds'],
      ],
      [{ workspaceId, knowledgeBaseIds: [kb.id], query: 'x'.repeat(10_001) }, ['query']],
      [{ workspaceId, knowledgeBaseIds: [kb.id], query: 'x', searchMode: 'keyword' }, ['searchMode']],
      [{ workspaceId, knowledgeBaseIds: [kb.id], query: 'x', tagFilters: {} }, ['tagFilters']],
    ];
    for (const [body, path] of bad) {
      const res = await search(body);
      expectError(res, 400);
      expect(res.body.details.map((d: { path: unknown[] }) => d.path)).toContainEqual(path);
    }
  });

  it('refuses reranking on a service without a rerank server (RERANK_BASE_URL unset)', async () => {
    const res = await search({ workspaceId, knowledgeBaseIds: [kb.id], query: 'x', rerank: { model: 'm' } });
    expectError(res, 400, /Reranking is not configured/);
    expect(res.body.details).toEqual([expect.objectContaining({ path: ['rerank'] })]);
  });
});

describe('hybrid search', () => {
  it('ranks the one chunk holding a rare keyword first, with its cosine similarity', async () => {
    const workspaceId = await freshWorkspace();
    const kb = await createKnowledgeBase(svc, workspaceId);
    const lessons = 'Music lesson notes: the music lesson plan for every music lesson of the term. ';
    await addDocument(workspaceId, kb.id, 'lessons-1.txt', lessons.repeat(2));
    await addDocument(workspaceId, kb.id, 'lessons-2.txt', `${lessons}Bring music lesson books.`);
    await addDocument(
      workspaceId,
      kb.id,
      'garden.txt',
      'Notes from the garden club on pruning roses, compost, seedlings and watering schedules in a dry summer. ' +
        'Our music lesson afterwards used a xylophone. The club meets again on Tuesday for the seed swap.',
    );
    const body = { workspaceId, knowledgeBaseIds: [kb.id], query: 'music lesson xylophone' };
    const vector = await search(body);
    expectOk(vector);
    // Lexically the lesson notes are closer: they repeat two of the three words.
    expect(vector.body.data.results[0].documentName).not.toBe('garden.txt');

    const hybrid = await search({ ...body, searchMode: 'hybrid' });
    expectOk(hybrid);
    const [first] = hybrid.body.data.results;
    expect(first.documentName).toBe('garden.txt');
    const sameChunk = vector.body.data.results.find(
      (r: { documentName: string }) => r.documentName === 'garden.txt',
    );
    expect(first.similarity).toBeCloseTo(sameChunk.similarity, 6);
    expect(hybrid.body.data.results).toHaveLength(3);
    // The similarity is not what orders a hybrid answer (the first is not the most similar)...
    const results = hybrid.body.data.results as { documentName: string; similarity: number; score: number }[];
    expect(Math.max(...results.map((r) => r.similarity))).toBeGreaterThan(first.similarity);
    // ...the fused score is: 1 / (60 + rank) from each ranking the chunk is in. Only garden.txt holds
    // all three words, so it alone is in the full-text ranking, first.
    const vectorRank = (name: string) =>
      vector.body.data.results.findIndex((r: { documentName: string }) => r.documentName === name) + 1;
    for (const r of results) {
      const fromText = r.documentName === 'garden.txt' ? 1 / 61 : 0;
      expect(r.score, r.documentName).toBeCloseTo(1 / (60 + vectorRank(r.documentName)) + fromText, 12);
    }
    expect([...results].sort((a, b) => b.score - a.score)).toEqual(results);
  });
});

describe('tag filters', () => {
  let workspaceId: string;
  let kb: { id: string };
  const base = () => ({ workspaceId, knowledgeBaseIds: [kb.id] });
  const filter = (tagName: string, operator: string, value: unknown, valueTo?: unknown) => ({
    ...base(),
    tagFilters: [{ tagName, operator, value, ...(valueTo === undefined ? {} : { valueTo }) }],
  });

  beforeAll(async () => {
    workspaceId = await freshWorkspace();
    kb = await createKnowledgeBase(svc, workspaceId);
    for (const [name, type] of [
      ['category', 'text'],
      ['code', 'text'],
      ['priority', 'number'],
      ['published', 'date'],
      ['reviewed', 'boolean'],
    ] as const) {
      await svc.admin.knowledge.defineTag.mutate({ knowledgeBaseId: kb.id, name, type });
    }
    await addDocument(workspaceId, kb.id, 'a.txt', 'Alpha document about annual reports.', {
      category: 'Report',
      code: '100%_done',
      priority: 1,
      published: '2024-01-15',
      reviewed: true,
    });
    await addDocument(workspaceId, kb.id, 'b.txt', 'Bravo document with a draft report.', {
      category: 'report-draft',
      code: '100xydone',
      priority: 5,
      published: '2024-03-01T12:00:00Z',
      reviewed: false,
    });
    await addDocument(workspaceId, kb.id, 'c.txt', 'Charlie document holding a memo.', {
      category: 'Memo',
      code: 'a_b',
      priority: 10.5,
      published: '2024-06-30',
      reviewed: true,
    });
    await addDocument(workspaceId, kb.id, 'd.txt', 'Delta document without any tags.');
  });

  it('compares text ignoring case; neq and not_contains include documents without the tag', async () => {
    expect(await found(filter('category', 'eq', 'REPORT'))).toEqual(['a.txt']);
    expect(await found(filter('category', 'neq', 'report'))).toEqual(['b.txt', 'c.txt', 'd.txt']);
    expect(await found(filter('category', 'contains', 'REP'))).toEqual(['a.txt', 'b.txt']);
    expect(await found(filter('category', 'not_contains', 'report'))).toEqual(['c.txt', 'd.txt']);
    expect(await found(filter('category', 'starts_with', 'rep'))).toEqual(['a.txt', 'b.txt']);
    expect(await found(filter('category', 'ends_with', 'DRAFT'))).toEqual(['b.txt']);
    expect(await found(filter('category', 'ends_with', 'mem'))).toEqual([]);
  });

  it('takes % and _ in text values literally', async () => {
    expect(await found(filter('code', 'contains', '%'))).toEqual(['a.txt']);
    expect(await found(filter('code', 'contains', '_'))).toEqual(['a.txt', 'c.txt']);
    expect(await found(filter('code', 'eq', '100__done'))).toEqual([]);
    expect(await found(filter('code', 'eq', '100%_done'))).toEqual(['a.txt']);
    expect(await found(filter('code', 'starts_with', '100%'))).toEqual(['a.txt']);
    expect(await found(filter('code', 'ends_with', '_b'))).toEqual(['c.txt']);
    expect(await found(filter('code', 'not_contains', '%'))).toEqual(['b.txt', 'c.txt', 'd.txt']);
    expect(await found(filter('code', 'contains', '\\'))).toEqual([]);
  });

  it('compares numbers, between inclusive at both ends', async () => {
    expect(await found(filter('priority', 'eq', 5))).toEqual(['b.txt']);
    expect(await found(filter('priority', 'neq', 5))).toEqual(['a.txt', 'c.txt', 'd.txt']);
    expect(await found(filter('priority', 'gt', 1))).toEqual(['b.txt', 'c.txt']);
    expect(await found(filter('priority', 'gte', 5))).toEqual(['b.txt', 'c.txt']);
    expect(await found(filter('priority', 'lt', 5))).toEqual(['a.txt']);
    expect(await found(filter('priority', 'lte', 5))).toEqual(['a.txt', 'b.txt']);
    expect(await found(filter('priority', 'between', 1, 5))).toEqual(['a.txt', 'b.txt']);
    expect(await found(filter('priority', 'between', 5, 5))).toEqual(['b.txt']);
    expect(await found(filter('priority', 'eq', 10.5))).toEqual(['c.txt']);
  });

  it('compares dates as instants, a date alone being midnight UTC', async () => {
    expect(await found(filter('published', 'eq', '2024-01-15'))).toEqual(['a.txt']);
    expect(await found(filter('published', 'eq', '2024-01-15T00:00:00.000Z'))).toEqual(['a.txt']);
    expect(await found(filter('published', 'eq', '2024-03-01T13:00:00+01:00'))).toEqual(['b.txt']);
    expect(await found(filter('published', 'neq', '2024-01-15'))).toEqual(['b.txt', 'c.txt', 'd.txt']);
    expect(await found(filter('published', 'gt', '2024-01-15'))).toEqual(['b.txt', 'c.txt']);
    expect(await found(filter('published', 'gte', '2024-03-01T12:00:00Z'))).toEqual(['b.txt', 'c.txt']);
    expect(await found(filter('published', 'lt', '2024-03-01T12:00:00Z'))).toEqual(['a.txt']);
    expect(await found(filter('published', 'lte', '2024-03-01T12:00:00Z'))).toEqual(['a.txt', 'b.txt']);
    expect(await found(filter('published', 'between', '2024-01-15', '2024-03-01T12:00:00Z'))).toEqual([
      'a.txt',
      'b.txt',
    ]);
    expect(await found(filter('published', 'between', '2024-01-16', '2024-06-29'))).toEqual(['b.txt']);
  });

  it('compares booleans', async () => {
    expect(await found(filter('reviewed', 'eq', true))).toEqual(['a.txt', 'c.txt']);
    expect(await found(filter('reviewed', 'eq', false))).toEqual(['b.txt']);
    expect(await found(filter('reviewed', 'neq', true))).toEqual(['b.txt', 'd.txt']);
  });

  it('holds every filter of a search at once, and orders by the query within them', async () => {
    const both = {
      ...base(),
      tagFilters: [
        { tagName: 'category', operator: 'contains', value: 'rep' },
        { tagName: 'reviewed', operator: 'eq', value: true },
      ],
    };
    expect(await found(both)).toEqual(['a.txt']);
    const res = await search({ ...filter('priority', 'gte', 1), query: 'memo charlie' });
    expectOk(res);
    expect(res.body.data.results.map((r: { documentName: string }) => r.documentName)).toHaveLength(3);
    expect(res.body.data.results[0]).toMatchObject({
      documentName: 'c.txt',
      metadata: {
        category: 'Memo',
        code: 'a_b',
        priority: 10.5,
        published: '2024-06-30T00:00:00.000Z',
        reviewed: true,
      },
    });
    const hybrid = await search({
      ...filter('priority', 'gte', 1),
      query: 'memo charlie',
      searchMode: 'hybrid',
    });
    expect(hybrid.body.data.results[0].documentName).toBe('c.txt');
    expect(hybrid.body.data.results.map((r: { documentName: string }) => r.documentName).sort()).toEqual([
      'a.txt',
      'b.txt',
      'c.txt',
    ]);
  });

  it('answers metadata with the tag values and similarity 1 when searching by tags alone', async () => {
    const res = await search(filter('reviewed', 'eq', false));
    expectOk(res);
    expect(res.body.data).toMatchObject({ query: '', topK: 10, totalResults: 1 });
    expect(res.body.data.results).toEqual([
      {
        documentId: expect.any(String),
        documentName: 'b.txt',
        content: 'Bravo document with a draft report.',
        chunkIndex: 0,
        similarity: 1,
        score: 1,
        metadata: {
          category: 'report-draft',
          code: '100xydone',
          priority: 5,
          published: '2024-03-01T12:00:00.000Z',
          reviewed: false,
        },
      },
    ]);
  });

  it('refuses unknown tags, operators a type does not take, and values of the wrong type', async () => {
    const cases: [Record<string, unknown>, (string | number)[]][] = [
      [filter('colour', 'eq', 'red'), ['tagFilters', 0, 'tagName']],
      [filter('priority', 'contains', 5), ['tagFilters', 0, 'operator']],
      [filter('reviewed', 'gt', true), ['tagFilters', 0, 'operator']],
      [filter('category', 'gt', 'a'), ['tagFilters', 0, 'operator']],
      [filter('category', 'between', 'a', 'b'), ['tagFilters', 0, 'operator']],
      [filter('priority', 'eq', '5'), ['tagFilters', 0, 'value']],
      [filter('category', 'eq', 5), ['tagFilters', 0, 'value']],
      [filter('category', 'eq', 'x'.repeat(1001)), ['tagFilters', 0, 'value']],
      [filter('published', 'eq', '2024-02-30'), ['tagFilters', 0, 'value']],
      [filter('published', 'eq', 20240101), ['tagFilters', 0, 'value']],
      [filter('reviewed', 'eq', 'true'), ['tagFilters', 0, 'value']],
      [filter('priority', 'between', 5), ['tagFilters', 0, 'valueTo']],
      [filter('priority', 'between', 5, 1), ['tagFilters', 0, 'valueTo']],
      [filter('published', 'between', '2024-02-01', '2024-01-01'), ['tagFilters', 0, 'valueTo']],
      [filter('priority', 'eq', 5, 6), ['tagFilters', 0, 'valueTo']],
      [filter('priority', 'like', 5), ['tagFilters', 0, 'operator']],
      [filter('priority', 'eq', null), ['tagFilters', 0, 'value']],
    ];
    for (const [body, path] of cases) {
      const res = await search(body);
      expectError(res, 400);
      expect(res.body.details, JSON.stringify(body)).toContainEqual(expect.objectContaining({ path }));
    }
    const several = await search({
      ...base(),
      tagFilters: [
        { tagName: 'priority', operator: 'eq', value: 1 },
        { tagName: 'nope', operator: 'eq', value: 'x' },
        { tagName: 'reviewed', operator: 'eq', value: 1 },
      ],
    });
    expectError(several, 400);
    expect(several.body.details.map((d: { path: unknown[] }) => d.path)).toEqual([
      ['tagFilters', 1, 'tagName'],
      ['tagFilters', 2, 'value'],
    ]);
    const tooMany = await search({
      ...base(),
      tagFilters: Array.from({ length: 21 }, () => ({ tagName: 'priority', operator: 'eq', value: 1 })),
    });
    expectError(tooMany, 400);
  });
});

describe('search by tags alone', () => {
  it('answers the matching chunks newest document first, then in document order', async () => {
    const workspaceId = await freshWorkspace();
    const kb = await createKnowledgeBase(svc, workspaceId, {
      chunkingConfig: { maxSize: 100, minSize: 1, overlap: 0 },
    });
    await svc.admin.knowledge.defineTag.mutate({ knowledgeBaseId: kb.id, name: 'kind', type: 'text' });
    const long = Array.from(
      { length: 12 },
      (_, i) =>
        `Section ${i} of the long handbook covers rules, duties and procedures of the team in detail.`,
    ).join('\n\n');
    await addDocument(workspaceId, kb.id, 'old.txt', long, { kind: 'handbook' });
    await addDocument(workspaceId, kb.id, 'untagged.txt', 'Nothing to see.');
    await addDocument(workspaceId, kb.id, 'new.txt', 'A short handbook note.', { kind: 'handbook' });
    const res = await search({
      workspaceId,
      knowledgeBaseIds: [kb.id],
      tagFilters: [{ tagName: 'kind', operator: 'eq', value: 'handbook' }],
      topK: 100,
    });
    expectOk(res);
    const order = res.body.data.results.map((r: { documentName: string; chunkIndex: number }) => [
      r.documentName,
      r.chunkIndex,
    ]);
    expect(order.length).toBeGreaterThan(3);
    expect(order[0]).toEqual(['new.txt', 0]);
    expect(order.slice(1)).toEqual(order.slice(1).map((_: unknown, i: number) => ['old.txt', i]));
    expect(res.body.data.results.every((r: { similarity: number }) => r.similarity === 1)).toBe(true);
    const two = await search({
      workspaceId,
      knowledgeBaseIds: [kb.id],
      tagFilters: [{ tagName: 'kind', operator: 'eq', value: 'handbook' }],
      topK: 2,
    });
    expect(two.body.data.results.map((r: { documentName: string }) => r.documentName)).toEqual([
      'new.txt',
      'old.txt',
    ]);
  });
});

describe('several knowledge bases', () => {
  it('filters by a tag that sits in different slots, and needs it in every base with one type', async () => {
    const workspaceId = await freshWorkspace();
    const first = await createKnowledgeBase(svc, workspaceId);
    const second = await createKnowledgeBase(svc, workspaceId);
    const lacking = await createKnowledgeBase(svc, workspaceId);
    const numeric = await createKnowledgeBase(svc, workspaceId);
    const define = (knowledgeBaseId: string, name: string, type: 'text' | 'number') =>
      svc.admin.knowledge.defineTag.mutate({ knowledgeBaseId, name, type });
    await define(first.id, 'team', 'text');
    expect(await define(first.id, 'lang', 'text')).toEqual({ name: 'lang', type: 'text', slot: 'text2' });
    expect(await define(second.id, 'lang', 'text')).toEqual({ name: 'lang', type: 'text', slot: 'text1' });
    await define(lacking.id, 'team', 'text');
    await define(numeric.id, 'lang', 'number');

    await addDocument(workspaceId, first.id, 'first-en.txt', 'English guide to the harbour.', {
      team: 'docs',
      lang: 'en',
    });
    await addDocument(workspaceId, first.id, 'first-de.txt', 'German guide to the harbour.', {
      team: 'en',
      lang: 'de',
    });
    await addDocument(workspaceId, second.id, 'second-en.txt', 'English harbour timetable.', { lang: 'EN' });
    await addDocument(workspaceId, second.id, 'second-none.txt', 'Harbour map without a language.');

    const ids = [first.id, second.id];
    const lang = (operator: string, value: string) => ({
      workspaceId,
      knowledgeBaseIds: ids,
      tagFilters: [{ tagName: 'lang', operator, value }],
    });
    expect(await found(lang('eq', 'en'))).toEqual(['first-en.txt', 'second-en.txt']);
    expect(await found(lang('neq', 'en'))).toEqual(['first-de.txt', 'second-none.txt']);
    const res = await search({ ...lang('eq', 'en'), query: 'harbour timetable' });
    expectOk(res);
    expect(res.body.data.results.map((r: { documentName: string }) => r.documentName)).toEqual([
      'second-en.txt',
      'first-en.txt',
    ]);
    expect(res.body.data.results[1].metadata).toEqual({ team: 'docs', lang: 'en' });
    expect(await found({ workspaceId, knowledgeBaseIds: ids, query: 'harbour' })).toHaveLength(4);

    const missing = await search({ ...lang('eq', 'en'), knowledgeBaseIds: [first.id, lacking.id] });
    expectError(missing, 400);
    expect(missing.body.details).toEqual([
      expect.objectContaining({
        path: ['tagFilters', 0, 'tagName'],
        message: expect.stringContaining(lacking.id),
      }),
    ]);
    const typed = await search({ ...lang('eq', 'en'), knowledgeBaseIds: [first.id, numeric.id] });
    expectError(typed, 400);
    expect(typed.body.details).toEqual([expect.objectContaining({ path: ['tagFilters', 0, 'tagName'] })]);
  });
});
