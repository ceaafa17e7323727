// Retrieval controls of POST /api/v1/knowledge/search: full-text mode, scoreThreshold and reranking
// against a small local /rerank server (Cohere's and TEI's answer shapes), and what fails: a bad
// threshold or rerank field (400), reranking without a query (400), and a rerank server that errs,
// answers nonsense or does not answer in time (502).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRerankServer } from '../helpers/rerank-server.ts';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';
import { expectError, expectOk } from './files-helpers.ts';
import { createKnowledgeBase, ingest } from './knowledge-helpers.ts';

let svc: TestService;
let tenant: Tenant;
let rerank: Awaited<ReturnType<typeof startRerankServer>>;
let workspaceId: string;
let kbId: string;

type Result = { documentName: string; similarity: number; score: number; content: string };

beforeAll(async () => {
  rerank = await startRerankServer();
  svc = await startTestService(
    { RERANK_BASE_URL: rerank.url, RERANK_API_KEY: 'rerank-secret', RERANK_TIMEOUT_MS: '2000' },
    { runner: true },
  );
  tenant = await createTenant(svc.admin, { plan: 'enterprise' });
  const ws = await svc.admin.workspaces.create.mutate({
    orgId: tenant.org.id,
    ownerId: tenant.user.id,
    name: 'retrieval',
    skipDefaultWorkflow: true,
  });
  workspaceId = ws.id as string;
  kbId = (await createKnowledgeBase(svc, workspaceId)).id;
  const lessons = 'Music lesson notes: the music lesson plan for every music lesson of the term. ';
  const docs = {
    'lessons-1.txt': lessons.repeat(2),
    'lessons-2.txt': `${lessons}Bring music lesson books.`,
    'garden.txt':
      'Notes from the garden club on pruning roses, compost, seedlings and watering schedules in a dry summer. ' +
      'Our music lesson afterwards used a xylophone. The club meets again on Tuesday for the seed swap.',
  };
  for (const [name, content] of Object.entries(docs)) {
    const doc = await ingest(svc, tenant.key, kbId, { workspaceId, name, content });
    expect(doc.processingStatus, doc.processingError ?? '').toBe('completed');
  }
});
afterAll(async () => {
  await svc.close();
  await rerank.close();
});

function search(body: Record<string, unknown>) {
  return svc.call('POST', '/api/v1/knowledge/search', {
    key: tenant.key,
    body: { workspaceId, knowledgeBaseIds: [kbId], query: 'music lesson xylophone', ...body },
  });
}

async function results(body: Record<string, unknown>): Promise<Result[]> {
  const res = await search(body);
  expectOk(res);
  expect(res.body.data.totalResults).toBe(res.body.data.results.length);
  return res.body.data.results;
}

describe('fulltext mode', () => {
  it('answers the chunks holding every word, scored by text rank, with their cosine similarity', async () => {
    const vector = await results({});
    const text = await results({ searchMode: 'fulltext' });
    expect(text.map((r) => r.documentName)).toEqual(['garden.txt']);
    const [garden] = text as [Result];
    expect(garden.score).toBeGreaterThan(0);
    expect(garden.score).not.toBeCloseTo(garden.similarity, 6);
    expect(garden.similarity).toBeCloseTo(
      vector.find((r) => r.documentName === 'garden.txt')?.similarity ?? -1,
      6,
    );
    // Web-search syntax: `or` widens it to the lesson notes, stemmed ("lessons" finds "lesson").
    const wide = await results({ searchMode: 'fulltext', query: 'xylophone or lessons' });
    expect(wide.map((r) => r.documentName).sort()).toEqual(['garden.txt', 'lessons-1.txt', 'lessons-2.txt']);
    expect(await results({ searchMode: 'fulltext', query: 'harpsichord' })).toEqual([]);
  });
});

describe('scoreThreshold', () => {
  it('drops results less similar than the threshold, in every mode', async () => {
    const all = await results({});
    const sims = all.map((r) => r.similarity).sort((a, b) => a - b);
    const between = ((sims[0] as number) + (sims[1] as number)) / 2;
    for (const searchMode of ['vector', 'hybrid']) {
      const kept = await results({ searchMode, scoreThreshold: between });
      expect(kept.length, searchMode).toBe(all.length - 1);
      for (const r of kept) expect(r.similarity).toBeGreaterThanOrEqual(between);
    }
    expect(await results({ scoreThreshold: 1 })).toEqual([]);
    expect(await results({ scoreThreshold: 0 })).toEqual(all);
  });

  it.each([-0.1, 1.5, '0.5', null])('refuses %s with a 400 naming the field', async (scoreThreshold) => {
    const res = await search({ scoreThreshold });
    expectError(res, 400);
    expect(res.body.details[0].path).toEqual(['scoreThreshold']);
  });
});

describe('rerank', () => {
  it('reorders the results by the rerank server, keeping topN, with its scores (Cohere and TEI shapes)', async () => {
    const plain = await results({});
    for (const mode of ['cohere', 'tei'] as const) {
      rerank.setMode(mode);
      rerank.requests.length = 0;
      const reranked = await results({ rerank: { model: 'rerank-english-v3.0' } });
      // The test server scores the documents it was sent in reverse order.
      expect(
        reranked.map((r) => r.documentName),
        mode,
      ).toEqual(plain.map((r) => r.documentName).reverse());
      expect(reranked.map((r) => r.score)).toEqual([1, 2 / 3, 1 / 3]);
      expect(rerank.requests).toEqual([
        {
          model: 'rerank-english-v3.0',
          query: 'music lesson xylophone',
          documents: plain.map((r) => r.content),
          top_n: 3,
          authorization: 'Bearer rerank-secret',
        },
      ]);
    }
    rerank.setMode('cohere');
    const top = await results({ rerank: { model: 'm', topN: 1 } });
    expect(top.map((r) => r.documentName)).toEqual([plain.at(-1)?.documentName]);
  });

  it.each([
    ['error', 'Rerank server answered HTTP 500'],
    ['hang', 'Rerank server did not answer within 2000 ms'],
    ['garbage', 'Rerank server gave an answer that is not a list of {index, relevance_score}'],
    ['badIndex', 'Rerank server gave an unknown index 8'],
  ] as const)('answers 502 when the server fails (%s)', async (mode, error) => {
    rerank.setMode(mode);
    try {
      const res = await search({ rerank: { model: 'm' } });
      expectError(res, 502);
      expect(res.body.error).toBe(error);
    } finally {
      rerank.setMode('cohere');
    }
  });

  it.each([
    [{ model: '' }, ['rerank', 'model']],
    [{ model: 'm', topN: 0 }, ['rerank', 'topN']],
    [{ model: 'm', topN: 101 }, ['rerank', 'topN']],
    [{ model: 'm', extra: 1 }, ['rerank']],
    ['m', ['rerank']],
  ])('refuses rerank %j with a 400', async (value, path) => {
    const res = await search({ rerank: value });
    expectError(res, 400);
    expect(res.body.details[0].path).toEqual(path);
  });

  it('needs a query', async () => {
    const res = await svc.call('POST', '/api/v1/knowledge/search', {
      key: tenant.key,
      body: {
        workspaceId,
        knowledgeBaseIds: [kbId],
        tagFilters: [{ tagName: 'nope', operator: 'eq', value: 'x' }],
        rerank: { model: 'm' },
      },
    });
    expectError(res, 400);
  });
});
