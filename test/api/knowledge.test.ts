// /api/v1/knowledge: listing knowledge bases (4), updating one (5, re-processing on a new chunking
// config), uploading documents (8: the pending answer, processing to completed or failed, 413,
// 415, the storage quota) and who may do each. Listing documents is in knowledge-documents,
// search in knowledge-search.
import { describe, expect, it } from 'vitest';
import { addPerson, createTenant } from '../helpers/service.ts';
import { expectError, expectOk, localBlobs } from './files-helpers.ts';
import {
  documentOf,
  ingest,
  prose,
  settled,
  uploadDocument,
  useKnowledgeService,
} from './knowledge-helpers.ts';

const { svc, tenant, other, freshWorkspace, freshBase, freshBaseWithDocument } = useKnowledgeService();

describe('GET /api/v1/knowledge', () => {
  it('lists the workspace knowledge bases with their document and token counts', async () => {
    const workspaceId = await freshWorkspace();
    const empty = await svc.call('GET', '/api/v1/knowledge', { key: tenant.key, query: { workspaceId } });
    expectOk(empty);
    expect(empty.body.data).toEqual({ knowledgeBases: [], totalCount: 0 });

    const { kb } = await freshBase({ workspaceId, name: 'Handbook' });
    await freshBase({ workspaceId, name: 'Second' });
    const doc = await ingest(svc, tenant.key, kb.id, { workspaceId, content: prose(3) });
    expect(doc.processingStatus).toBe('completed');

    const res = await svc.call('GET', '/api/v1/knowledge', { key: tenant.key, query: { workspaceId } });
    expectOk(res);
    expect(res.body.data.totalCount).toBe(2);
    const [first, second] = res.body.data.knowledgeBases;
    expect(first).toMatchObject({
      id: kb.id,
      name: 'Handbook',
      description: '',
      docCount: 1,
      tokenCount: doc.tokenCount,
      embeddingModel: 'local-hashed-ngrams-v1',
    });
    expect(doc.tokenCount).toBeGreaterThan(0);
    expect(Date.parse(first.createdAt)).not.toBeNaN();
    expect(Date.parse(first.updatedAt)).not.toBeNaN();
    expect(second).toMatchObject({ name: 'Second', docCount: 0, tokenCount: 0 });
  });

  it('needs a workspaceId the key reaches', async () => {
    expectError(await svc.call('GET', '/api/v1/knowledge', { key: tenant.key }), 400);
    expectError(
      await svc.call('GET', '/api/v1/knowledge', { key: tenant.key, query: { workspaceId: 'nope' } }),
      400,
    );
    const res = await svc.call('GET', '/api/v1/knowledge', {
      key: other.key,
      query: { workspaceId: tenant.workspace.id },
    });
    expect([403, 404]).toContain(res.status);
    expectError(
      await svc.call('GET', '/api/v1/knowledge', { query: { workspaceId: tenant.workspace.id } }),
      401,
    );
  });
});

describe('PUT /api/v1/knowledge/{id}', () => {
  it('renames and describes, with a new updatedAt', async () => {
    const { workspaceId, kb } = await freshBase();
    const res = await svc.call('PUT', `/api/v1/knowledge/${kb.id}`, {
      key: tenant.key,
      body: { workspaceId, name: 'Renamed', description: 'About things' },
    });
    expectOk(res);
    expect(res.body.data.knowledgeBase).toMatchObject({
      id: kb.id,
      name: 'Renamed',
      description: 'About things',
    });
    expect(typeof res.body.data.message).toBe('string');
    expect(Date.parse(res.body.data.knowledgeBase.updatedAt)).toBeGreaterThan(Date.parse(kb.updatedAt));
    const again = await svc.call('PUT', `/api/v1/knowledge/${kb.id}`, {
      key: tenant.key,
      body: { workspaceId, description: 'Again' },
    });
    expect(Date.parse(again.body.data.knowledgeBase.updatedAt)).toBeGreaterThan(
      Date.parse(res.body.data.knowledgeBase.updatedAt),
    );
    expect(again.body.data.knowledgeBase.name).toBe('Renamed');
  });

  it('refuses a body without a changeable field, and bad chunking configs, changing nothing', async () => {
    const { workspaceId, kb } = await freshBase();
    const put = (body: object) => svc.call('PUT', `/api/v1/knowledge/${kb.id}`, { key: tenant.key, body });
    expectError(await put({ workspaceId }), 400);
    expectError(await put({ workspaceId, chunkingConfig: {} }), 400);
    const bad = [
      { maxSize: 99 },
      { maxSize: 4001 },
      { maxSize: 100.5 },
      { minSize: 0 },
      { minSize: 2001 },
      { overlap: -1 },
      { overlap: 501 },
      // Merged with the current config (overlap 200), maxSize 150 leaves overlap not below it.
      { maxSize: 150 },
      { maxSize: 300, overlap: 300 },
      { maxSize: '500' },
      { chunkSize: 500 },
    ];
    for (const chunkingConfig of bad) {
      const res = await put({ workspaceId, chunkingConfig });
      expectError(res, 400);
      expect(res.body.details?.length, JSON.stringify(chunkingConfig)).toBeGreaterThan(0);
    }
    expectError(await put({ workspaceId, name: '' }), 400);
    expectError(await put({ workspaceId, name: 'x'.repeat(201) }), 400);
    expectError(await put({ name: 'No workspace' }), 400);
    const after = await svc.admin.knowledge.get.query({ id: kb.id });
    expect(after.chunkingConfig).toEqual({ maxSize: 1024, minSize: 100, overlap: 200 });
    expect(after.updatedAt).toBe(kb.updatedAt);
    expect(after.name).toBe(kb.name);
  });

  it('answers 404 for a base of another workspace, 400 for an id that is not one, 403 for a reader', async () => {
    const mine = await freshWorkspace();
    const { kb: theirs } = await freshBase({ workspaceId: other.workspace.id });
    const res = await svc.call('PUT', `/api/v1/knowledge/${theirs.id}`, {
      key: tenant.key,
      body: { workspaceId: mine, name: 'Taken' },
    });
    expectError(res, 404);
    expect((await svc.admin.knowledge.get.query({ id: theirs.id })).name).toBe(theirs.name);
    // Their workspace, named by a key that cannot act there: not found either, nothing learnt.
    expectError(
      await svc.call('PUT', `/api/v1/knowledge/${theirs.id}`, {
        key: tenant.key,
        body: { workspaceId: other.workspace.id, name: 'Taken' },
      }),
      404,
    );
    expectError(
      await svc.call('PUT', '/api/v1/knowledge/not-a-uuid', {
        key: tenant.key,
        body: { workspaceId: mine, name: 'x' },
      }),
      400,
    );
    const { kb } = await freshBase({ workspaceId: tenant.workspace.id });
    const reader = await addPerson(svc.admin, tenant, { permission: 'read' });
    expectError(
      await svc.call('PUT', `/api/v1/knowledge/${kb.id}`, {
        key: reader.key,
        body: { workspaceId: tenant.workspace.id, name: 'Mine now' },
      }),
      403,
    );
  });

  it('re-processes the documents under a new chunking config; search answers from the old chunks meanwhile', async () => {
    const { workspaceId, kb } = await freshBase();
    // Big enough that re-processing it at 100-token chunks takes a while to watch.
    const big = await ingest(svc, tenant.key, kb.id, {
      workspaceId,
      name: 'big.txt',
      content: `${prose(300, 'zebra')}\n\nThe secret word is quartzite.`,
    });
    expect(big.processingStatus).toBe('completed');
    const before = big.chunkCount;

    const search = () =>
      svc.call('POST', '/api/v1/knowledge/search', {
        key: tenant.key,
        body: { workspaceId, knowledgeBaseIds: [kb.id], query: 'secret word quartzite', topK: 1 },
      });
    expect((await search()).body.data.results[0].content).toContain('quartzite');

    const res = await svc.call('PUT', `/api/v1/knowledge/${kb.id}`, {
      key: tenant.key,
      body: { workspaceId, chunkingConfig: { maxSize: 100, overlap: 0 } },
    });
    expectOk(res);
    expect(res.body.data.knowledgeBase.chunkingConfig).toEqual({ maxSize: 100, minSize: 100, overlap: 0 });
    expect(res.body.data.message).toMatch(/1 document/);

    let seenWhileProcessing = 0;
    for (;;) {
      const [doc, found] = await Promise.all([documentOf(svc, big.id), search()]);
      expect(found.body.data.results).toHaveLength(1);
      expect(found.body.data.results[0].content).toContain('quartzite');
      if (doc.processingStatus === 'completed') break;
      expect(['pending', 'processing']).toContain(doc.processingStatus);
      seenWhileProcessing++;
    }
    expect(seenWhileProcessing).toBeGreaterThan(0);
    const after = await documentOf(svc, big.id);
    expect(after.chunkCount).toBeGreaterThan(before * 5);
    // Only the new generation is left: every chunk fits the new maximum.
    const [row] = await svc.db.query<{ n: number | string; biggest: number }>(
      'select count(*) as n, max(token_count) as biggest from knowledge_chunks where document_id = $1',
      [big.id],
    );
    expect(Number(row?.n)).toBe(after.chunkCount);
    expect(row?.biggest).toBeLessThanOrEqual(100);
    // Re-processing the big document takes most of the default 30 s on a loaded 2-core machine.
  }, 90_000);

  it('leaves the documents alone when the chunking config does not really change', async () => {
    const { workspaceId, kb, doc } = await freshBaseWithDocument(2);
    const res = await svc.call('PUT', `/api/v1/knowledge/${kb.id}`, {
      key: tenant.key,
      body: { workspaceId, chunkingConfig: { maxSize: 1024 } },
    });
    expectOk(res);
    expect((await documentOf(svc, doc.id)).processingStatus).toBe('completed');
  });
});

describe('POST /api/v1/knowledge/{id}/documents', () => {
  it('answers the pending document, then the runner completes it with its counts', async () => {
    const { workspaceId, kb } = await freshBase();
    const res = await uploadDocument(svc, tenant.key, kb.id, {
      workspaceId,
      name: 'guide.md',
      type: 'text/markdown',
      content: `# Guide\n\n${prose(4)}`,
    });
    expectOk(res);
    const { document, message } = res.body.data;
    expect(document).toMatchObject({
      knowledgeBaseId: kb.id,
      filename: 'guide.md',
      mimeType: 'text/markdown',
      processingStatus: 'pending',
      chunkCount: 0,
      tokenCount: 0,
      enabled: true,
    });
    expect(document.fileSize).toBe(Buffer.byteLength(`# Guide\n\n${prose(4)}`));
    expect(typeof message).toBe('string');
    expect(Date.parse(document.createdAt)).not.toBeNaN();

    const done = await settled(svc, document.id);
    expect(done.processingStatus).toBe('completed');
    expect(done.chunkCount).toBeGreaterThan(0);
    expect(done.tokenCount).toBeGreaterThan(0);
    const [sum] = await svc.db.query<{ tokens: number | string; n: number | string }>(
      'select sum(token_count) as tokens, count(*) as n from knowledge_chunks where document_id = $1',
      [document.id],
    );
    expect(Number(sum?.n)).toBe(done.chunkCount);
    expect(Number(sum?.tokens)).toBe(done.tokenCount);
  });

  it('records the media type of its kind when the upload says only application/octet-stream', async () => {
    const { workspaceId, kb } = await freshBase();
    const res = await uploadDocument(svc, tenant.key, kb.id, {
      workspaceId,
      name: 'notes.md',
      type: 'application/octet-stream',
      content: '# Notes\n\nSome text.',
    });
    expectOk(res);
    expect(res.body.data.document.mimeType).toBe('text/markdown');
    const csv = await uploadDocument(svc, tenant.key, kb.id, {
      workspaceId,
      name: 'rows.csv',
      type: 'text/csv; charset=utf-8',
      content: 'a,b\n1,2',
    });
    expect(csv.body.data.document.mimeType).toBe('text/csv');
  });

  it('takes the workspace field after the file too', async () => {
    const { workspaceId, kb } = await freshBase();
    const res = await uploadDocument(svc, tenant.key, kb.id, {
      workspaceId,
      order: 'fileFirst',
      content: prose(1),
    });
    expectOk(res);
    expect((await settled(svc, res.body.data.document.id)).processingStatus).toBe('completed');
  });

  it('ends a corrupt or empty file failed with the reason', async () => {
    const { workspaceId, kb } = await freshBase();
    const cases = [
      {
        name: 'broken.pdf',
        type: 'application/pdf',
        content: Buffer.from('%PDF-1.7\nthis is not really a pdf'),
      },
      {
        name: 'broken.docx',
        type: 'application/octet-stream',
        content: Buffer.from('PK\u0003\u0004 not a zip'),
      },
      { name: 'empty.txt', type: 'text/plain', content: Buffer.alloc(0) },
      { name: 'blank.md', type: 'text/markdown', content: Buffer.from('   \n\n  ') },
      { name: 'bad.json', type: 'application/json', content: Buffer.from('{"a": ') },
    ];
    for (const c of cases) {
      const doc = await ingest(svc, tenant.key, kb.id, { workspaceId, ...c });
      expect(doc.processingStatus, c.name).toBe('failed');
      expect(doc.processingError, c.name).toMatch(/\w/);
      expect(doc.chunkCount).toBe(0);
    }
    const [row] = await svc.db.query<{ n: number | string }>(
      'select count(*) as n from knowledge_chunks where knowledge_base_id = $1',
      [kb.id],
    );
    expect(Number(row?.n)).toBe(0);
  });

  it('refuses an unsupported type with 415 and stores nothing', async () => {
    const { workspaceId, kb } = await freshBase();
    const blobs = localBlobs(svc).length;
    for (const order of ['fieldsFirst', 'fileFirst'] as const) {
      const res = await uploadDocument(svc, tenant.key, kb.id, {
        workspaceId,
        name: 'photo.png',
        type: 'image/png',
        content: Buffer.from('89504e470d0a1a0a', 'hex'),
        order,
      });
      expectError(res, 415);
    }
    expect(localBlobs(svc)).toHaveLength(blobs);
    const docs = await svc.admin.knowledge.documents.query({ knowledgeBaseId: kb.id });
    expect(docs.total).toBe(0);
  });

  it('refuses a file over 100 MB with 413 and stores nothing', async () => {
    const { workspaceId, kb } = await freshBase();
    const blobs = localBlobs(svc).length;
    const res = await uploadDocument(svc, tenant.key, kb.id, {
      workspaceId,
      name: 'huge.txt',
      content: { size: 104_857_601 },
    });
    expectError(res, 413);
    expect(localBlobs(svc)).toHaveLength(blobs);
    expect((await svc.admin.knowledge.documents.query({ knowledgeBaseId: kb.id })).total).toBe(0);
  });

  it('counts documents against the storage quota: 413 past it, nothing stored', async () => {
    const t = await createTenant(svc.admin, { plan: 'pro' });
    const { kb } = await freshBase({ workspaceId: t.workspace.id });
    await svc.admin.quotas.set.mutate({ orgId: t.org.id, storageLimitBytes: 1000 });
    const ok = await uploadDocument(svc, t.key, kb.id, {
      workspaceId: t.workspace.id,
      content: 'x'.repeat(600),
    });
    expectOk(ok);
    const usage = await svc.call('GET', '/api/users/me/usage-limits', { key: t.key });
    expect(usage.body.storage.usedBytes).toBe(600);
    const blobs = localBlobs(svc).length;
    const res = await uploadDocument(svc, t.key, kb.id, {
      workspaceId: t.workspace.id,
      content: 'y'.repeat(600),
    });
    expectError(res, 413, /Storage limit/);
    expect(localBlobs(svc)).toHaveLength(blobs);
  });

  it('needs write access to the base workspace; another workspace base is not found', async () => {
    const { kb } = await freshBase({ workspaceId: tenant.workspace.id });
    const reader = await addPerson(svc.admin, tenant, { permission: 'read' });
    const blobs = localBlobs(svc).length;
    expectError(await uploadDocument(svc, reader.key, kb.id, { workspaceId: tenant.workspace.id }), 403);
    expectError(await uploadDocument(svc, other.key, kb.id, { workspaceId: other.workspace.id }), 404);
    expectError(await uploadDocument(svc, other.key, kb.id, { workspaceId: tenant.workspace.id }), 404);
    expectError(await uploadDocument(svc, tenant.key, kb.id, { workspaceId: 'not-a-uuid' }), 400);
    expectError(
      await uploadDocument(svc, tenant.key, '00000000-0000-4000-8000-000000000000', {
        workspaceId: tenant.workspace.id,
      }),
      404,
    );
    expectError(await uploadDocument(svc, tenant.key, 'nope', { workspaceId: tenant.workspace.id }), 400);
    expect(localBlobs(svc)).toHaveLength(blobs);
    expect((await svc.admin.knowledge.documents.query({ knowledgeBaseId: kb.id })).total).toBe(0);
  });

  it('refuses a body that is not multipart, or has no file', async () => {
    const { kb } = await freshBase({ workspaceId: tenant.workspace.id });
    const res = await svc.call('POST', `/api/v1/knowledge/${kb.id}/documents`, {
      key: tenant.key,
      body: { workspaceId: tenant.workspace.id },
    });
    expectError(res, 400);
  });
});
