// GET /api/v1/knowledge/{id}/documents (7): every query parameter with its bounds and defaults
// (limit, offset, search, enabledFilter, sortBy, sortOrder), the pagination object, the shape of
// each document record, and who may list whose documents; and GET .../documents/{documentId}.
import { beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, addPerson } from '../helpers/service.ts';
import { expectError, expectOk } from './files-helpers.ts';
import { ingest, prose, settled, uploadDocument, useKnowledgeService } from './knowledge-helpers.ts';

type Query = Record<string, string | number | boolean | undefined>;

interface Doc {
  id: string;
  knowledgeBaseId: string;
  filename: string;
  fileSize: number;
  mimeType: string;
  processingStatus: string;
  chunkCount: number;
  tokenCount: number;
  enabled: boolean;
  createdAt: string;
}

const { svc, tenant, other, freshWorkspace, freshBase } = useKnowledgeService();

/** GET the listing; `key: null` sends no key at all. */
const list = (kbId: string, query: Query, key: string | null = tenant.key): Promise<ApiResponse> =>
  svc.call('GET', `/api/v1/knowledge/${kbId}/documents`, { ...(key !== null ? { key } : {}), query });

/** A listing that must succeed: its documents and pagination. */
async function page(kbId: string, query: Query, key = tenant.key) {
  const res = await list(kbId, query, key);
  expectOk(res);
  return res.body.data as {
    documents: Doc[];
    pagination: { total: number; limit: number; offset: number; hasMore: boolean };
  };
}

const names = (docs: Doc[]) => docs.map((d) => d.filename);
const ids = (docs: Doc[]) => docs.map((d) => d.id);

/** A 400 whose details name the parameter. */
function expectInvalid(res: ApiResponse, param: string) {
  expectError(res, 400);
  expect(res.body.details, JSON.stringify(res.body)).toEqual(
    expect.arrayContaining([expect.objectContaining({ path: [param] })]),
  );
}

describe('paging', () => {
  let workspaceId: string;
  let kbId: string;
  /** Oldest first. */
  let uploaded: string[];

  beforeAll(async () => {
    ({
      workspaceId,
      kb: { id: kbId },
    } = await freshBase());
    uploaded = [];
    for (let i = 0; i < 53; i++) {
      const res = await uploadDocument(svc, tenant.key, kbId, {
        workspaceId,
        name: `doc-${String(i).padStart(2, '0')}.txt`,
        content: `document number ${i}`,
      });
      expectOk(res);
      uploaded.push(res.body.data.document.id);
    }
  });

  it('defaults to 50 documents from offset 0, newest upload first', async () => {
    const data = await page(kbId, { workspaceId });
    expect(data.pagination).toEqual({ total: 53, limit: 50, offset: 0, hasMore: true });
    expect(ids(data.documents)).toEqual([...uploaded].reverse().slice(0, 50));
    const explicit = await page(kbId, {
      workspaceId,
      limit: 50,
      offset: 0,
      sortBy: 'uploadedAt',
      sortOrder: 'desc',
    });
    expect(ids(explicit.documents)).toEqual(ids(data.documents));
    const all = await page(kbId, { workspaceId, enabledFilter: 'all' });
    expect(all.pagination.total).toBe(53);
  });

  it('takes limits from 1 to 100', async () => {
    const one = await page(kbId, { workspaceId, limit: 1 });
    expect(one.documents).toHaveLength(1);
    expect(one.documents[0]?.id).toBe(uploaded.at(-1));
    expect(one.pagination).toEqual({ total: 53, limit: 1, offset: 0, hasMore: true });
    const hundred = await page(kbId, { workspaceId, limit: 100 });
    expect(hundred.documents).toHaveLength(53);
    expect(hundred.pagination).toEqual({ total: 53, limit: 100, offset: 0, hasMore: false });
    expect(new Set(ids(hundred.documents))).toEqual(new Set(uploaded));
  });

  it('reports hasMore at the boundaries, and an empty page past the end', async () => {
    const p = (limit: number, offset: number) => page(kbId, { workspaceId, limit, offset, sortOrder: 'asc' });
    const before = await p(10, 42);
    expect(before.documents).toHaveLength(10);
    expect(before.pagination).toEqual({ total: 53, limit: 10, offset: 42, hasMore: true });
    expect(ids(before.documents)).toEqual(uploaded.slice(42, 52));
    const exact = await p(10, 43);
    expect(ids(exact.documents)).toEqual(uploaded.slice(43));
    expect(exact.pagination).toEqual({ total: 53, limit: 10, offset: 43, hasMore: false });
    const short = await p(10, 50);
    expect(ids(short.documents)).toEqual(uploaded.slice(50));
    expect(short.pagination.hasMore).toBe(false);
    const last = await p(1, 52);
    expect(ids(last.documents)).toEqual([uploaded[52]]);
    expect(last.pagination.hasMore).toBe(false);
    const oneShort = await p(1, 51);
    expect(oneShort.pagination.hasMore).toBe(true);
    for (const offset of [53, 54, 1000]) {
      const past = await p(10, offset);
      expect(past.documents).toEqual([]);
      expect(past.pagination).toEqual({ total: 53, limit: 10, offset, hasMore: false });
    }
  });

  it('walks every document exactly once, page by page, in either order', async () => {
    for (const sortOrder of ['asc', 'desc'] as const) {
      const seen: string[] = [];
      for (let offset = 0, more = true; more; offset += 7) {
        const data = await page(kbId, { workspaceId, limit: 7, offset, sortOrder });
        seen.push(...ids(data.documents));
        more = data.pagination.hasMore;
        expect(seen.length).toBeLessThanOrEqual(53);
      }
      expect(seen).toEqual(sortOrder === 'asc' ? uploaded : [...uploaded].reverse());
    }
  });

  it('refuses a limit or offset out of bounds or not a whole number, naming it', async () => {
    for (const limit of ['0', '101', '-1', '1.5', 'abc', '', '1e1', ' 5', '0x10']) {
      expectInvalid(await list(kbId, { workspaceId, limit }), 'limit');
    }
    for (const offset of ['-1', '1.5', 'abc', '', '-0.5', '1e2']) {
      expectInvalid(await list(kbId, { workspaceId, offset }), 'offset');
    }
  });

  it('refuses a parameter given twice', async () => {
    const base = `/api/v1/knowledge/${kbId}/documents?workspaceId=${workspaceId}`;
    for (const twice of [
      'limit=1&limit=2',
      'offset=0&offset=0',
      'sortBy=filename&sortBy=fileSize',
      'search=a&search=b',
    ]) {
      const res = await svc.call('GET', `${base}&${twice}`, { key: tenant.key });
      expectInvalid(res, twice.split('=')[0] as string);
    }
    expectInvalid(
      await svc.call('GET', `${base}&workspaceId=${workspaceId}`, { key: tenant.key }),
      'workspaceId',
    );
  });
});

describe('each document', () => {
  it('carries the spec fields, pending after upload and completed once processed', async () => {
    const { workspaceId, kb } = await freshBase();
    const content = prose(2, 'fields');
    const res = await uploadDocument(svc, tenant.key, kb.id, {
      workspaceId,
      name: 'guide.md',
      type: 'text/markdown',
      content,
    });
    expectOk(res);
    const uploadedDoc = res.body.data.document;
    const listed = (await page(kb.id, { workspaceId })).documents;
    expect(listed).toHaveLength(1);
    const doc = listed[0] as Doc;
    expect(doc).toMatchObject({
      id: uploadedDoc.id,
      knowledgeBaseId: kb.id,
      filename: 'guide.md',
      fileSize: Buffer.byteLength(content),
      mimeType: 'text/markdown',
      enabled: true,
      createdAt: uploadedDoc.createdAt,
    });
    expect(['pending', 'processing', 'completed']).toContain(doc.processingStatus);
    expect(Number.isInteger(doc.chunkCount)).toBe(true);
    expect(Number.isInteger(doc.tokenCount)).toBe(true);
    expect(new Date(doc.createdAt).toISOString()).toBe(doc.createdAt);

    const done = await settled(svc, doc.id);
    expect(done.processingStatus).toBe('completed');
    const after = (await page(kb.id, { workspaceId })).documents[0] as Doc;
    expect(after).toMatchObject({
      id: doc.id,
      processingStatus: 'completed',
      chunkCount: done.chunkCount,
      tokenCount: done.tokenCount,
      createdAt: doc.createdAt,
    });
    expect(after.chunkCount).toBeGreaterThan(0);
    expect(after.tokenCount).toBeGreaterThan(0);
    for (const field of ['id', 'knowledgeBaseId', 'filename', 'mimeType', 'processingStatus', 'createdAt']) {
      expect(typeof (after as unknown as Record<string, unknown>)[field], field).toBe('string');
    }
    expect(typeof after.enabled).toBe('boolean');
    expect(typeof after.fileSize).toBe('number');
  });
});

describe('search and enabledFilter', () => {
  let workspaceId: string;
  let kbId: string;
  const files = [
    'Report_2024.txt',
    'report-2024.txt',
    'REPORTx2024.txt',
    '100%.txt',
    '100 percent.txt',
    'plain.txt',
    'notes.md',
  ];
  const idOf = new Map<string, string>();

  beforeAll(async () => {
    ({
      workspaceId,
      kb: { id: kbId },
    } = await freshBase());
    for (const name of files) {
      const res = await uploadDocument(svc, tenant.key, kbId, {
        workspaceId,
        name,
        type: name.endsWith('.md') ? 'text/markdown' : 'text/plain',
        content: `contents of ${name}`,
      });
      expectOk(res);
      idOf.set(name, res.body.data.document.id);
    }
  });

  const found = async (query: Query) =>
    new Set(names((await page(kbId, { workspaceId, limit: 100, ...query })).documents));

  it('filters by a part of the file name, in any case', async () => {
    expect(await found({ search: 'report' })).toEqual(
      new Set(['Report_2024.txt', 'report-2024.txt', 'REPORTx2024.txt']),
    );
    expect(await found({ search: 'REPORT' })).toEqual(await found({ search: 'report' }));
    expect(await found({ search: 'rEpOrT-2024' })).toEqual(new Set(['report-2024.txt']));
    expect(await found({ search: '.md' })).toEqual(new Set(['notes.md']));
    expect(await found({ search: 'plain.txt' })).toEqual(new Set(['plain.txt']));
    const none = await page(kbId, { workspaceId, search: 'absent' });
    expect(none.documents).toEqual([]);
    expect(none.pagination).toEqual({ total: 0, limit: 50, offset: 0, hasMore: false });
  });

  it('takes % and _ literally', async () => {
    expect(await found({ search: '%' })).toEqual(new Set(['100%.txt']));
    expect(await found({ search: '100%' })).toEqual(new Set(['100%.txt']));
    expect(await found({ search: 'report_' })).toEqual(new Set(['Report_2024.txt']));
    expect(await found({ search: '_' })).toEqual(new Set(['Report_2024.txt']));
    expect(await found({ search: 't_2' })).toEqual(new Set(['Report_2024.txt']));
    expect(await found({ search: '\\' })).toEqual(new Set());
  });

  it('counts only the matches in the pagination', async () => {
    const first = await page(kbId, {
      workspaceId,
      search: 'report',
      limit: 2,
      sortBy: 'filename',
      sortOrder: 'asc',
    });
    expect(first.documents).toHaveLength(2);
    expect(first.pagination).toEqual({ total: 3, limit: 2, offset: 0, hasMore: true });
    const second = await page(kbId, {
      workspaceId,
      search: 'report',
      limit: 2,
      offset: 2,
      sortBy: 'filename',
      sortOrder: 'asc',
    });
    expect(second.documents).toHaveLength(1);
    expect(second.pagination).toEqual({ total: 3, limit: 2, offset: 2, hasMore: false });
    expect(new Set([...names(first.documents), ...names(second.documents)])).toEqual(
      await found({ search: 'report' }),
    );
  });

  it('lists all, only enabled or only disabled documents', async () => {
    const off = ['plain.txt', 'report-2024.txt'];
    for (const name of off) {
      const doc = await svc.admin.knowledge.setDocumentEnabled.mutate({
        documentId: idOf.get(name) as string,
        enabled: false,
      });
      expect(doc.enabled).toBe(false);
    }
    const everything = new Set(files);
    const enabled = new Set(files.filter((f) => !off.includes(f)));
    expect(await found({})).toEqual(everything);
    expect(await found({ enabledFilter: 'all' })).toEqual(everything);
    expect(await found({ enabledFilter: 'enabled' })).toEqual(enabled);
    expect(await found({ enabledFilter: 'disabled' })).toEqual(new Set(off));
    const disabled = await page(kbId, { workspaceId, enabledFilter: 'disabled' });
    expect(disabled.pagination.total).toBe(2);
    expect(disabled.documents.every((d) => d.enabled === false)).toBe(true);
    const on = await page(kbId, { workspaceId, enabledFilter: 'enabled' });
    expect(on.pagination.total).toBe(files.length - 2);
    expect(on.documents.every((d) => d.enabled === true)).toBe(true);
    // Combined with search.
    expect(await found({ search: 'report', enabledFilter: 'enabled' })).toEqual(
      new Set(['Report_2024.txt', 'REPORTx2024.txt']),
    );
    expect(await found({ search: 'report', enabledFilter: 'disabled' })).toEqual(
      new Set(['report-2024.txt']),
    );

    // Enabled again: back in the enabled listing.
    await svc.admin.knowledge.setDocumentEnabled.mutate({
      documentId: idOf.get('plain.txt') as string,
      enabled: true,
    });
    expect(await found({ enabledFilter: 'disabled' })).toEqual(new Set(['report-2024.txt']));
  });

  it('refuses a bad enabledFilter, and a search longer than a file name can be', async () => {
    for (const enabledFilter of ['yes', 'true', '', 'ALL', 'none']) {
      expectInvalid(await list(kbId, { workspaceId, enabledFilter }), 'enabledFilter');
    }
    expectInvalid(await list(kbId, { workspaceId, search: 'x'.repeat(256) }), 'search');
  });
});

describe('sorting', () => {
  let workspaceId: string;
  let kbId: string;
  /** Upload order (oldest first), with what makes each order different from the others. */
  const docs: { name: string; content: string; type?: string }[] = [
    { name: 'charlie.txt', content: prose(1, 'charlie') },
    { name: 'echo.md', content: prose(3, 'echo'), type: 'text/markdown' },
    // The biggest file, but few tokens: blank lines are not text. Tells fileSize from tokenCount.
    { name: 'foxtrot.txt', content: `A short note about foxtrot.${'\n'.repeat(50_000)}` },
    { name: 'alpha.txt', content: prose(6, 'alpha') },
    { name: 'bravo.txt', content: '' }, // fails: nothing to index
    { name: 'delta.txt', content: prose(10, 'delta') },
  ];
  const disabled = ['alpha.txt', 'delta.txt'];
  let uploadOrder: string[];

  beforeAll(async () => {
    ({
      workspaceId,
      kb: { id: kbId },
    } = await freshBase({
      chunkingConfig: { maxSize: 100, minSize: 1, overlap: 0 },
    }));
    uploadOrder = [];
    for (const d of docs) {
      const doc = await ingest(svc, tenant.key, kbId, {
        workspaceId,
        name: d.name,
        content: d.content,
        type: d.type ?? 'text/plain',
      });
      uploadOrder.push(doc.id);
    }
    for (const name of disabled) {
      const id = uploadOrder[docs.findIndex((d) => d.name === name)] as string;
      await svc.admin.knowledge.setDocumentEnabled.mutate({ documentId: id, enabled: false });
    }
  }, 60_000);

  const sorted = async (sortBy: string, sortOrder?: string) =>
    (await page(kbId, { workspaceId, sortBy, ...(sortOrder ? { sortOrder } : {}) })).documents;

  it('has documents that tell the orders apart', async () => {
    const all = await sorted('filename', 'asc');
    const byName = new Map(all.map((d) => [d.filename, d]));
    expect(byName.get('bravo.txt')?.processingStatus).toBe('failed');
    const completed = all.filter((d) => d.processingStatus === 'completed');
    expect(completed).toHaveLength(5);
    // Distinct figures, so each numeric order is one order.
    expect(new Set(all.map((d) => d.chunkCount)).size).toBe(6);
    expect(new Set(all.map((d) => d.tokenCount)).size).toBe(6);
    expect(new Set(all.map((d) => d.fileSize)).size).toBe(6);
    expect(
      all
        .filter((d) => !d.enabled)
        .map((d) => d.filename)
        .sort(),
    ).toEqual(disabled);
  });

  it('sorts by filename', async () => {
    const asc = ['alpha.txt', 'bravo.txt', 'charlie.txt', 'delta.txt', 'echo.md', 'foxtrot.txt'];
    expect(names(await sorted('filename', 'asc'))).toEqual(asc);
    expect(names(await sorted('filename', 'desc'))).toEqual([...asc].reverse());
    expect(names(await sorted('filename'))).toEqual([...asc].reverse()); // desc by default
  });

  it('sorts by uploadedAt, newest first by default', async () => {
    expect(ids(await sorted('uploadedAt', 'asc'))).toEqual(uploadOrder);
    expect(ids(await sorted('uploadedAt', 'desc'))).toEqual([...uploadOrder].reverse());
    expect(ids((await page(kbId, { workspaceId })).documents)).toEqual([...uploadOrder].reverse());
    expect(ids((await page(kbId, { workspaceId, sortOrder: 'asc' })).documents)).toEqual(uploadOrder);
  });

  for (const field of ['fileSize', 'tokenCount', 'chunkCount'] as const) {
    it(`sorts by ${field}`, async () => {
      const asc = await sorted(field, 'asc');
      const values = asc.map((d) => d[field]);
      expect(values).toEqual([...values].sort((a, b) => a - b));
      expect(new Set(values).size).toBe(6);
      const desc = await sorted(field, 'desc');
      expect(ids(desc)).toEqual(ids(asc).reverse());
      expect(ids(await sorted(field))).toEqual(ids(desc));
    });
  }

  it('sorts by fileSize and by tokenCount in orders unlike each other, the names or the uploads', async () => {
    // Sizes: bravo 0 < charlie < echo < alpha < delta < foxtrot (blank lines).
    expect(names(await sorted('fileSize', 'asc'))).toEqual([
      'bravo.txt',
      'charlie.txt',
      'echo.md',
      'alpha.txt',
      'delta.txt',
      'foxtrot.txt',
    ]);
    expect(names(await sorted('tokenCount', 'asc'))).toEqual([
      'bravo.txt',
      'foxtrot.txt',
      'charlie.txt',
      'echo.md',
      'alpha.txt',
      'delta.txt',
    ]);
    expect(names(await sorted('chunkCount', 'desc')).slice(0, 2)).toEqual(['delta.txt', 'alpha.txt']);
  });

  it('sorts by processingStatus and by enabled', async () => {
    const status = async (order: string) =>
      (await sorted('processingStatus', order)).map((d) => d.processingStatus);
    const completedFive = Array(5).fill('completed');
    expect(await status('asc')).toEqual([...completedFive, 'failed']);
    expect(await status('desc')).toEqual(['failed', ...completedFive]);
    const enabled = async (order: string) => (await sorted('enabled', order)).map((d) => d.enabled);
    expect(await enabled('asc')).toEqual([false, false, true, true, true, true]);
    expect(await enabled('desc')).toEqual([true, true, true, true, false, false]);
    expect(new Set(names((await sorted('enabled', 'asc')).slice(0, 2)))).toEqual(new Set(disabled));
  });

  it('pages through a sort without losing or repeating a document', async () => {
    const whole = ids(await sorted('chunkCount', 'desc'));
    const pages: string[] = [];
    for (let offset = 0; offset < 6; offset += 4) {
      pages.push(
        ...ids(
          (await page(kbId, { workspaceId, sortBy: 'chunkCount', sortOrder: 'desc', limit: 4, offset }))
            .documents,
        ),
      );
    }
    expect(pages).toEqual(whole);
  });

  it('refuses an unknown sortBy or sortOrder', async () => {
    for (const sortBy of ['name', 'created_at', 'createdAt', 'size', '', 'filename desc', 'id']) {
      expectInvalid(await list(kbId, { workspaceId, sortBy }), 'sortBy');
    }
    for (const sortOrder of ['up', 'descending', '', '1', 'asc;']) {
      expectInvalid(await list(kbId, { workspaceId, sortOrder }), 'sortOrder');
    }
  });
});

describe('access', () => {
  let kbId: string;

  beforeAll(async () => {
    ({
      kb: { id: kbId },
    } = await freshBase({ workspaceId: tenant.workspace.id }));
    expectOk(
      await uploadDocument(svc, tenant.key, kbId, { workspaceId: tenant.workspace.id, name: 'secret.txt' }),
    );
  });

  it('needs a workspaceId, as a UUID', async () => {
    expectInvalid(await list(kbId, {}), 'workspaceId');
    expectInvalid(await list(kbId, { workspaceId: 'nope' }), 'workspaceId');
    expectInvalid(await list(kbId, { workspaceId: '' }), 'workspaceId');
  });

  it('lets a reader of the workspace list', async () => {
    const reader = await addPerson(svc.admin, tenant, { permission: 'read' });
    const data = await page(kbId, { workspaceId: tenant.workspace.id }, reader.key);
    expect(names(data.documents)).toEqual(['secret.txt']);
  });

  it('answers 401 without a key or with a wrong one', async () => {
    expectError(await list(kbId, { workspaceId: tenant.workspace.id }, null), 401);
    expectError(await list(kbId, { workspaceId: tenant.workspace.id }, 'sk-service-not-a-real-key'), 401);
  });

  it('answers 404 for a base outside the named workspace, or in a workspace the key cannot reach', async () => {
    // Another workspace of the same tenant: the base is not in it.
    const mine = await freshWorkspace();
    expectError(await list(kbId, { workspaceId: mine }), 404);
    // Another tenant naming its own workspace, or this base's.
    expectError(await list(kbId, { workspaceId: other.workspace.id }, other.key), 404);
    expectError(await list(kbId, { workspaceId: tenant.workspace.id }, other.key), 404);
    // A workspace member without access to that workspace.
    const outsider = await addPerson(svc.admin, tenant);
    const res = await list(kbId, { workspaceId: tenant.workspace.id }, outsider.key);
    expect([403, 404], JSON.stringify(res.body)).toContain(res.status);
    expect(res.body.data).toBeUndefined();
    // A base that does not exist, and an id that is not one.
    expectError(
      await list('00000000-0000-4000-8000-000000000000', { workspaceId: tenant.workspace.id }),
      404,
    );
    expectInvalid(await list('not-a-uuid', { workspaceId: tenant.workspace.id }), 'knowledgeBaseId');
  });

  it('answers 404 once the base is deleted', async () => {
    const { kb } = await freshBase({ workspaceId: tenant.workspace.id });
    expectOk(await list(kb.id, { workspaceId: tenant.workspace.id }));
    await svc.admin.knowledge.delete.mutate({ id: kb.id });
    expectError(await list(kb.id, { workspaceId: tenant.workspace.id }), 404);
  });
});

describe('GET /api/v1/knowledge/{id}/documents/{documentId}', () => {
  const one = (kbId: string, documentId: string, query: Query, key: string | null = tenant.key) =>
    svc.call('GET', `/api/v1/knowledge/${kbId}/documents/${documentId}`, {
      ...(key !== null ? { key } : {}),
      query,
    });

  it('answers the document exactly as the list shows it, pending and then completed', async () => {
    const { workspaceId, kb } = await freshBase();
    const up = await uploadDocument(svc, tenant.key, kb.id, {
      workspaceId,
      name: 'one.md',
      content: prose(2),
    });
    expectOk(up);
    const id = up.body.data.document.id;
    const first = await one(kb.id, id, { workspaceId });
    expectOk(first);
    expect(Object.keys(first.body.data)).toEqual(['document']);
    expect(first.body.data.document).toMatchObject({ id, filename: 'one.md', knowledgeBaseId: kb.id });
    await settled(svc, id);
    const got = await one(kb.id, id, { workspaceId });
    const listed = (await page(kb.id, { workspaceId })).documents;
    expect(got.body.data.document).toEqual(listed[0]);
    expect(got.body.data.document.processingStatus).toBe('completed');
  });

  it("answers 404 for another base's document, another workspace, or a key that cannot reach it", async () => {
    const { workspaceId, kb } = await freshBase();
    const { kb: kb2 } = await freshBase({ workspaceId });
    const up = await uploadDocument(svc, tenant.key, kb.id, { workspaceId, name: 'doc.txt' });
    const id = up.body.data.document.id;
    expectOk(await one(kb.id, id, { workspaceId }));
    // The right workspace, another of its bases.
    expectError(await one(kb2.id, id, { workspaceId }), 404, /^Document not found$/);
    // Another workspace of the same tenant, with a base of its own.
    const { workspaceId: mine, kb: kb3 } = await freshBase();
    expectError(await one(kb3.id, id, { workspaceId: mine }), 404);
    expectError(await one(kb.id, id, { workspaceId: mine }), 404, /^Knowledge base not found$/);
    // Another tenant, naming its own workspace or this one.
    expectError(await one(kb.id, id, { workspaceId: other.workspace.id }, other.key), 404);
    expectError(await one(kb.id, id, { workspaceId }, other.key), 404);
    // A document that does not exist.
    expectError(await one(kb.id, '00000000-0000-4000-8000-000000000000', { workspaceId }), 404);
  });

  it('refuses ids that are not UUIDs and a missing workspaceId with 400, and needs a key', async () => {
    const { kb } = await freshBase({ workspaceId: tenant.workspace.id });
    const up = await uploadDocument(svc, tenant.key, kb.id, {
      workspaceId: tenant.workspace.id,
      name: 'shape.txt',
      content: 'another text for the shape test',
    });
    const id = up.body.data.document.id;
    expectInvalid(await one(kb.id, 'nope', { workspaceId: tenant.workspace.id }), 'documentId');
    expectInvalid(await one('nope', id, { workspaceId: tenant.workspace.id }), 'knowledgeBaseId');
    expectInvalid(await one(kb.id, id, {}), 'workspaceId');
    expectError(await one(kb.id, id, { workspaceId: tenant.workspace.id }, null), 401);
    const reader = await addPerson(svc.admin, tenant, { permission: 'read' });
    expectOk(await one(kb.id, id, { workspaceId: tenant.workspace.id }, reader.key));
  });
});
