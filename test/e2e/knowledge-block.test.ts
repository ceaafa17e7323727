// The `knowledge` workflow block end to end: documents uploaded and processed by the runner, a
// deployed workflow whose knowledge block searches them (query from the workflow inputs, topK,
// one base or several, tag filters, hybrid mode) and hands its results to a response block; the
// workspace rule (a base of another workspace fails the run) and the checks made when the
// workflow is created.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKnowledgeBase, ingest } from '../api/knowledge-helpers.ts';
import {
  adminError,
  createTenant,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';
import { deployWorkflow } from '../helpers/workflows.ts';

let svc: TestService;
let tenant: Tenant;
let kbId: string;
let spaceKbId: string;
const docIds = new Map<string, string>();

const SMALL_CHUNKS = { maxSize: 100, minSize: 1, overlap: 0 };

/** Filler that shares no word with the questions asked below. */
const filler = (n: number, seed: string) =>
  Array.from(
    { length: n },
    (_, i) =>
      `Section ${seed} ${i}. Committee members reviewed quarterly paperwork and scheduled further meetings.`,
  ).join('\n\n');

beforeAll(async () => {
  svc = await startTestService({}, { runner: true });
  tenant = await createTenant(svc.admin, { plan: 'enterprise' });
  const workspaceId = tenant.workspace.id;
  const kb = await createKnowledgeBase(svc, workspaceId, { name: 'Library', chunkingConfig: SMALL_CHUNKS });
  kbId = kb.id;
  const documents = [
    {
      name: 'geology.txt',
      content: `${filler(4, 'alpha')}\n\nVolcanoes erupt when molten magma rises through the crust; lava and ash pour from the volcano during an eruption.\n\n${filler(4, 'beta')}`,
    },
    {
      name: 'kitchen.txt',
      content: `${filler(3, 'gamma')}\n\nKnead the bread dough, let the yeast rise, then bake the loaf in a hot oven until golden.`,
    },
    {
      name: 'ledger.txt',
      content: `Invoices, receipts and tax returns are filed by the accountant every April.\n\n${filler(3, 'delta')}`,
    },
  ];
  for (const d of documents) {
    const doc = await ingest(svc, tenant.key, kbId, { workspaceId, name: d.name, content: d.content });
    expect(doc.processingStatus, d.name).toBe('completed');
    docIds.set(d.name, doc.id);
  }
  const space = await createKnowledgeBase(svc, workspaceId, { name: 'Space', chunkingConfig: SMALL_CHUNKS });
  spaceKbId = space.id;
  const telescope = await ingest(svc, tenant.key, spaceKbId, {
    workspaceId,
    name: 'astronomy.txt',
    content: `${filler(2, 'epsilon')}\n\nTelescopes gather starlight so astronomers can observe distant galaxies and nebulae.`,
  });
  expect(telescope.processingStatus).toBe('completed');
  docIds.set('astronomy.txt', telescope.id);
}, 60_000);
afterAll(() => svc.close());

/** Runs a deployed workflow synchronously; a finished execution answers 200, failed or not. */
async function execute(workflowId: string, inputs: Record<string, unknown> = {}, who: Tenant = tenant) {
  const res = await svc.call('POST', `/api/workflows/${workflowId}/execute`, {
    key: who.key,
    body: { inputs },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** Deploys the definition in the workspace of `who` and runs it. */
async function run(definition: unknown, inputs: Record<string, unknown> = {}, who: Tenant = tenant) {
  return execute(await deployWorkflow(svc.admin, who.workspace.id, definition), inputs, who);
}

/** A workflow: one knowledge block, its results passed to a response block. */
const searchThenRespond = (search: Record<string, unknown>, inputs: Record<string, unknown> = {}) => ({
  inputs,
  blocks: [
    { id: 'search', type: 'knowledge', ...search },
    {
      id: 'out',
      type: 'response',
      data: {
        first: '<search.results.0.content>',
        firstDocument: '<search.results.0.documentName>',
        firstId: '<search.results.0.documentId>',
        similarity: '<search.results.0.similarity>',
        total: '<search.totalResults>',
        results: '<search.results>',
      },
    },
  ],
  edges: [{ from: 'search', to: 'out' }],
});

interface Result {
  documentId: string;
  documentName: string;
  content: string;
  chunkIndex: number;
  similarity: number;
  metadata: Record<string, unknown>;
}

describe('searching from a workflow', () => {
  it('puts the chunk with the question words first, the question coming from the inputs', async () => {
    const definition = searchThenRespond(
      { knowledgeBaseIds: [kbId], query: '<start.question>', topK: '<start.k>' },
      { question: { type: 'string', required: true }, k: { type: 'number', default: 3 } },
    );
    const workflowId = await deployWorkflow(svc.admin, tenant.workspace.id, definition);
    const body = await execute(workflowId, { question: 'why do volcanoes erupt magma and lava' });
    expect(body.success, JSON.stringify(body)).toBe(true);
    const out = body.output;
    expect(out.firstDocument).toBe('geology.txt');
    expect(out.firstId).toBe(docIds.get('geology.txt'));
    expect(out.first).toContain('magma');
    expect(out.total).toBe(3);
    expect(out.results).toHaveLength(3);
    const results = out.results as Result[];
    // Best first.
    const sims = results.map((r) => r.similarity);
    expect(sims).toEqual([...sims].sort((a, b) => b - a));
    expect(out.similarity).toBe(sims[0]);
    expect(sims[0]).toBeGreaterThan(sims[1] as number);
    for (const r of results) {
      expect(r).toMatchObject({
        documentId: expect.any(String),
        documentName: expect.any(String),
        content: expect.any(String),
        chunkIndex: expect.any(Number),
        similarity: expect.any(Number),
      });
    }

    // Another question, the same workflow: another document first.
    const bread = await execute(workflowId, { question: 'how to bake bread with yeast dough', k: 1 });
    expect(bread.success, JSON.stringify(bread)).toBe(true);
    expect(bread.output.firstDocument).toBe('kitchen.txt');
    expect(bread.output.first).toContain('yeast');
    expect(bread.output.results).toHaveLength(1);
    expect(bread.output.total).toBe(1);
  });

  it('searches one base named by knowledgeBaseId, in hybrid mode too', async () => {
    for (const searchMode of [undefined, 'vector', 'hybrid']) {
      const body = await run(
        searchThenRespond({
          knowledgeBaseId: kbId,
          query: 'accountant invoices receipts tax returns',
          topK: 2,
          ...(searchMode ? { searchMode } : {}),
        }),
      );
      expect(body.success, JSON.stringify(body)).toBe(true);
      expect(body.output.firstDocument, String(searchMode)).toBe('ledger.txt');
      expect(body.output.first).toContain('accountant');
      expect(body.output.results).toHaveLength(2);
    }
  });

  it('searches every base listed', async () => {
    const question = 'telescopes astronomers observe galaxies';
    const both = await run(
      searchThenRespond({ knowledgeBaseIds: [kbId, spaceKbId], query: question, topK: 5 }),
    );
    expect(both.success, JSON.stringify(both)).toBe(true);
    expect(both.output.firstDocument).toBe('astronomy.txt');
    const names = new Set((both.output.results as Result[]).map((r) => r.documentName));
    expect(names.has('astronomy.txt')).toBe(true);
    expect([...names].some((n) => n !== 'astronomy.txt')).toBe(true);
    // The library alone has no astronomy.
    const library = await run(searchThenRespond({ knowledgeBaseIds: [kbId], query: question, topK: 5 }));
    expect(library.success).toBe(true);
    expect((library.output.results as Result[]).map((r) => r.documentName)).not.toContain('astronomy.txt');
  });

  it('filters by tags, with or without a query', async () => {
    const kb = await createKnowledgeBase(svc, tenant.workspace.id, {
      name: 'Tagged',
      chunkingConfig: SMALL_CHUNKS,
    });
    await svc.admin.knowledge.defineTag.mutate({ knowledgeBaseId: kb.id, name: 'topic', type: 'text' });
    const geo = await ingest(svc, tenant.key, kb.id, {
      workspaceId: tenant.workspace.id,
      name: 'rocks.txt',
      content: 'Granite and basalt are igneous rocks formed from cooled magma.',
    });
    const food = await ingest(svc, tenant.key, kb.id, {
      workspaceId: tenant.workspace.id,
      name: 'soup.txt',
      content: 'Simmer the onions and carrots slowly; magma-hot soup burns the tongue.',
    });
    await svc.admin.knowledge.setDocumentTags.mutate({ documentId: geo.id, tags: { topic: 'science' } });
    await svc.admin.knowledge.setDocumentTags.mutate({ documentId: food.id, tags: { topic: 'cooking' } });
    const filters = [{ tagName: 'topic', operator: 'eq', value: '<start.topic>' }];
    const definition = searchThenRespond(
      { knowledgeBaseIds: [kb.id], tagFilters: filters, topK: 10 },
      { topic: { type: 'string', required: true } },
    );
    const science = await run(definition, { topic: 'science' });
    expect(science.success, JSON.stringify(science)).toBe(true);
    expect((science.output.results as Result[]).map((r) => r.documentName)).toEqual(['rocks.txt']);
    expect(science.output.results[0].metadata).toEqual({ topic: 'science' });
    const cooking = await run(definition, { topic: 'cooking' });
    expect((cooking.output.results as Result[]).map((r) => r.documentName)).toEqual(['soup.txt']);

    // A query about magma, restricted to cooking: only the soup, though the rocks match better.
    const both = await run(
      searchThenRespond({
        knowledgeBaseIds: [kb.id],
        query: 'igneous rocks cooled magma granite',
        tagFilters: [{ tagName: 'topic', operator: 'eq', value: 'cooking' }],
      }),
    );
    expect(both.success, JSON.stringify(both)).toBe(true);
    expect((both.output.results as Result[]).map((r) => r.documentName)).toEqual(['soup.txt']);
  });
});

describe('failing runs', () => {
  it('fails the run, clearly, for a base of another workspace or tenant', async () => {
    const other = await createTenant(svc.admin, { plan: 'enterprise' });
    // The other tenant's workflow names this tenant's base.
    const theirs = await run(searchThenRespond({ knowledgeBaseIds: [kbId], query: 'magma' }), {}, other);
    expect(theirs.success).toBe(false);
    expect(theirs.error).toMatch(/Knowledge base not found/);
    expect(JSON.stringify(theirs)).not.toContain('magma rises');
    // A second workspace of this tenant: its workflows reach only its own bases.
    const ws = await svc.admin.workspaces.create.mutate({
      orgId: tenant.org.id,
      ownerId: tenant.user.id,
      name: 'Second',
      skipDefaultWorkflow: true,
    });
    const second = await run(
      searchThenRespond({ knowledgeBaseId: kbId, query: 'magma' }),
      {},
      { ...tenant, workspace: { id: ws.id } },
    );
    expect(second.success).toBe(false);
    expect(second.error).toMatch(/Knowledge base not found/);
    // One base of the list out of reach fails the whole search.
    const theirsKb = await createKnowledgeBase(svc, other.workspace.id);
    const mixed = await run(searchThenRespond({ knowledgeBaseIds: [kbId, theirsKb.id], query: 'magma' }));
    expect(mixed.success).toBe(false);
    expect(mixed.error).toMatch(/Knowledge base not found/);
    // Unknown ids likewise.
    const gone = await run(
      searchThenRespond({ knowledgeBaseId: '00000000-0000-4000-8000-000000000000', query: 'magma' }),
    );
    expect(gone).toMatchObject({ success: false, error: expect.stringMatching(/Knowledge base not found/) });
  });

  it('fails the run when a referenced value does not make a valid search', async () => {
    const definition = searchThenRespond(
      { knowledgeBaseIds: [kbId], query: '<start.question>', topK: '<start.k>' },
      { question: { type: 'string' }, k: { type: 'number', default: 3 } },
    );
    const noTopK = await run(definition, { question: 'magma', k: 0 });
    expect(noTopK.success).toBe(false);
    expect(noTopK.error).toMatch(/topK/);
    const tooMany = await run(definition, { question: 'magma', k: 101 });
    expect(tooMany.success).toBe(false);
    expect(tooMany.error).toMatch(/topK/);
    const blank = await run(definition, { question: '   ' });
    expect(blank.success).toBe(false);
    expect(blank.error).toMatch(/query/);
    const notAnId = await run(searchThenRespond({ knowledgeBaseId: 'library', query: 'magma' }));
    expect(notAnId.success).toBe(false);
    expect(notAnId.error).toMatch(/knowledgeBaseIds/);
  });
});

describe('checks when the workflow is created', () => {
  const create = (block: Record<string, unknown>) =>
    svc.admin.workflows.create.mutate({
      workspaceId: tenant.workspace.id,
      name: 'knowledge check',
      definition: { blocks: [{ id: 'k', type: 'knowledge', ...block }] },
    });

  it('refuses a block with neither query nor tagFilters, or both knowledgeBaseIds and knowledgeBaseId', async () => {
    const neither = await adminError(create({ knowledgeBaseIds: [kbId], topK: 3 }));
    expect(neither.code).toBe('BAD_REQUEST');
    // The issue names the block's query field.
    expect(neither.details?.some((d) => d.path.includes('blocks') && d.path.at(-1) === 'query')).toBe(true);
    const both = await adminError(
      create({ knowledgeBaseIds: [kbId], knowledgeBaseId: kbId, query: 'magma' }),
    );
    expect(both.code).toBe('BAD_REQUEST');
    expect(JSON.stringify(both.details)).toMatch(/knowledgeBaseId/);
    const none = await adminError(create({ query: 'magma' }));
    expect(none.code).toBe('BAD_REQUEST');
    const unknownField = await adminError(create({ knowledgeBaseId: kbId, query: 'magma', limit: 3 }));
    expect(unknownField.code).toBe('BAD_REQUEST');
  });

  it('accepts the forms it documents', async () => {
    for (const block of [
      { knowledgeBaseId: kbId, query: 'magma' },
      { knowledgeBaseIds: [kbId, spaceKbId], query: 'magma', topK: 3, searchMode: 'hybrid' },
      { knowledgeBaseIds: [kbId], tagFilters: [{ tagName: 'topic', operator: 'eq', value: 'science' }] },
    ]) {
      const wf = await create(block);
      expect(wf.id).toEqual(expect.any(String));
    }
  });
});
