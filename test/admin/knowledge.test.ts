// Admin plane: knowledge bases (create with its defaults and checks, list, get with its tags,
// delete with everything it holds) and their documents (enable/disable, re-process, delete,
// get), each leaving its audit entry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOk, localBlobs } from '../api/files-helpers.ts';
import {
  createKnowledgeBase,
  documentOf,
  ingest,
  prose,
  settled,
  uploadDocument,
} from '../api/knowledge-helpers.ts';
import {
  adminError,
  createTenant,
  createWorkspace,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';

const NOWHERE = '00000000-0000-4000-8000-000000000000';

let svc: TestService;
let tenant: Tenant;

beforeAll(async () => {
  svc = await startTestService({}, { runner: true });
  tenant = await createTenant(svc.admin, { plan: 'enterprise' });
});
afterAll(() => svc.close());

const freshWorkspace = () => createWorkspace(svc.admin, tenant);

interface Entry {
  action: string;
  actorId: string | null;
  actorName: string | null;
  resourceType: string;
  resourceId: string | null;
  workspaceId: string | null;
  metadata: Record<string, unknown>;
}

/** The audit entries of a resource, read through GET /api/v1/audit-logs, oldest first. */
async function auditsOf(workspaceId: string, resourceId: string): Promise<Entry[]> {
  const res = await svc.call('GET', '/api/v1/audit-logs', {
    key: tenant.key,
    query: { workspaceId, resourceId, limit: 100 },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.data as Entry[]).reverse();
}

const actions = async (workspaceId: string, resourceId: string) =>
  (await auditsOf(workspaceId, resourceId)).map((e) => e.action);

async function storageKeyOf(documentId: string): Promise<string> {
  const [row] = await svc.db.query<{ storage_key: string }>(
    'select storage_key from knowledge_documents where id = $1',
    [documentId],
  );
  if (!row) throw new Error(`no document ${documentId}`);
  return row.storage_key;
}

async function chunkCount(where: { documentId?: string; knowledgeBaseId?: string }): Promise<number> {
  const [row] = where.documentId
    ? await svc.db.query<{ n: number | string }>(
        'select count(*) as n from knowledge_chunks where document_id = $1',
        [where.documentId],
      )
    : await svc.db.query<{ n: number | string }>(
        'select count(*) as n from knowledge_chunks where knowledge_base_id = $1',
        [where.knowledgeBaseId],
      );
  return Number(row?.n);
}

async function usedBytes(): Promise<number> {
  const res = await svc.call('GET', '/api/users/me/usage-limits', { key: tenant.key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.storage.usedBytes;
}

describe('knowledge.create', () => {
  it('creates a base with the default chunking config and embedding model, and audits it', async () => {
    const workspaceId = await freshWorkspace();
    const kb = await svc.admin.knowledge.create.mutate({ workspaceId, name: 'Handbook' });
    expect(kb).toMatchObject({
      name: 'Handbook',
      description: '',
      docCount: 0,
      tokenCount: 0,
      workspaceId,
      embeddingModel: 'local-hashed-ngrams-v1',
      chunkingConfig: { maxSize: 1024, minSize: 100, overlap: 200 },
    });
    expect(new Date(kb.createdAt).toISOString()).toBe(kb.createdAt);
    expect(new Date(kb.updatedAt).toISOString()).toBe(kb.updatedAt);

    const [entry, ...rest] = await auditsOf(workspaceId, kb.id);
    expect(rest).toEqual([]);
    expect(entry).toMatchObject({
      action: 'knowledge.created',
      actorId: null,
      actorName: 'admin plane',
      resourceType: 'knowledge_base',
      resourceId: kb.id,
      workspaceId,
    });
    expect(entry?.metadata).toMatchObject({ name: 'Handbook', embeddingModel: 'local-hashed-ngrams-v1' });
  });

  it('takes a description, a chunking config and the model by name', async () => {
    const workspaceId = await freshWorkspace();
    const kb = await svc.admin.knowledge.create.mutate({
      workspaceId,
      name: 'Small chunks',
      description: 'For testing',
      chunkingConfig: { maxSize: 100, minSize: 1, overlap: 0 },
      embeddingModel: 'local-hashed-ngrams-v1',
    });
    expect(kb).toMatchObject({
      description: 'For testing',
      chunkingConfig: { maxSize: 100, minSize: 1, overlap: 0 },
      embeddingModel: 'local-hashed-ngrams-v1',
    });
    const edges = await svc.admin.knowledge.create.mutate({
      workspaceId,
      name: 'Edges',
      chunkingConfig: { maxSize: 4000, minSize: 2000, overlap: 500 },
    });
    expect(edges.chunkingConfig).toEqual({ maxSize: 4000, minSize: 2000, overlap: 500 });
  });

  it('refuses a bad chunking config with BAD_REQUEST and details, creating nothing', async () => {
    const workspaceId = await freshWorkspace();
    const bad = [
      { maxSize: 99, minSize: 100, overlap: 0 },
      { maxSize: 4001, minSize: 100, overlap: 0 },
      { maxSize: 500.5, minSize: 100, overlap: 0 },
      { maxSize: 500, minSize: 0, overlap: 0 },
      { maxSize: 500, minSize: 2001, overlap: 0 },
      { maxSize: 500, minSize: 100, overlap: -1 },
      { maxSize: 1000, minSize: 100, overlap: 501 },
      { maxSize: 200, minSize: 100, overlap: 200 },
      { maxSize: 500, minSize: 100 },
      { maxSize: 500, minSize: 100, overlap: 0, chunkSize: 5 },
      { maxSize: '500', minSize: 100, overlap: 0 },
    ];
    for (const chunkingConfig of bad) {
      const err = await adminError(
        svc.admin.knowledge.create.mutate({
          workspaceId,
          name: 'Bad',
          chunkingConfig: chunkingConfig as { maxSize: number; minSize: number; overlap: number },
        }),
      );
      expect(err.code, JSON.stringify(chunkingConfig)).toBe('BAD_REQUEST');
      expect(err.details?.length, JSON.stringify(chunkingConfig)).toBeGreaterThan(0);
      expect(err.details?.[0]?.path[0], JSON.stringify(err.details)).toBe('chunkingConfig');
    }
    expect(await svc.admin.knowledge.list.query({ workspaceId })).toEqual([]);
  });

  it('refuses an embedding model this service does not have, a bad name, and an unknown workspace', async () => {
    const workspaceId = await freshWorkspace();
    const model = await adminError(
      svc.admin.knowledge.create.mutate({ workspaceId, name: 'x', embeddingModel: 'text-embedding-3-small' }),
    );
    expect(model.code).toBe('BAD_REQUEST');
    expect(model.details).toEqual([expect.objectContaining({ path: ['embeddingModel'] })]);
    expect(model.details?.[0]?.message).toContain('local-hashed-ngrams-v1');
    expect(
      (await adminError(svc.admin.knowledge.create.mutate({ workspaceId, name: 'x', embeddingModel: '' })))
        .code,
    ).toBe('BAD_REQUEST');
    for (const name of ['', '   ', 'x'.repeat(201), 'bad\u0000name']) {
      const err = await adminError(svc.admin.knowledge.create.mutate({ workspaceId, name }));
      expect(err.code, JSON.stringify(name)).toBe('BAD_REQUEST');
    }
    expect(await svc.admin.knowledge.list.query({ workspaceId })).toEqual([]);

    const unknown = await adminError(svc.admin.knowledge.create.mutate({ workspaceId: NOWHERE, name: 'x' }));
    expect(unknown.code).toBe('NOT_FOUND');
    expect(
      (await adminError(svc.admin.knowledge.create.mutate({ workspaceId: 'not-a-uuid', name: 'x' }))).code,
    ).toBe('BAD_REQUEST');
  });
});

describe('knowledge.list and knowledge.get', () => {
  it('lists the bases of one workspace, oldest first, with their document figures', async () => {
    const workspaceId = await freshWorkspace();
    const elsewhere = await freshWorkspace();
    const first = await createKnowledgeBase(svc, workspaceId, { name: 'First' });
    const second = await createKnowledgeBase(svc, workspaceId, { name: 'Second' });
    await createKnowledgeBase(svc, elsewhere, { name: 'Elsewhere' });
    const doc = await ingest(svc, tenant.key, second.id, { workspaceId, content: prose(2) });
    expect(doc.processingStatus).toBe('completed');

    const listed = await svc.admin.knowledge.list.query({ workspaceId });
    expect(listed.map((k) => k.name)).toEqual(['First', 'Second']);
    expect(listed[0]).toMatchObject({ id: first.id, docCount: 0, tokenCount: 0 });
    expect(listed[1]).toMatchObject({ id: second.id, docCount: 1, tokenCount: doc.tokenCount });
    expect(doc.tokenCount).toBeGreaterThan(0);
    expect((await svc.admin.knowledge.list.query({ workspaceId: elsewhere })).map((k) => k.name)).toEqual([
      'Elsewhere',
    ]);
  });

  it('gets a base with its figures and its tag definitions', async () => {
    const workspaceId = await freshWorkspace();
    const kb = await createKnowledgeBase(svc, workspaceId, { name: 'Tagged' });
    const bare = await svc.admin.knowledge.get.query({ id: kb.id });
    expect(bare).toMatchObject({ id: kb.id, name: 'Tagged', workspaceId, docCount: 0 });
    expect(bare.tags).toEqual([]);

    await svc.admin.knowledge.defineTag.mutate({ knowledgeBaseId: kb.id, name: 'author', type: 'text' });
    await svc.admin.knowledge.defineTag.mutate({ knowledgeBaseId: kb.id, name: 'year', type: 'number' });
    const got = await svc.admin.knowledge.get.query({ id: kb.id });
    expect(got.tags).toEqual([
      expect.objectContaining({ name: 'author', type: 'text' }),
      expect.objectContaining({ name: 'year', type: 'number' }),
    ]);
    expect(got).toMatchObject({
      id: kb.id,
      chunkingConfig: kb.chunkingConfig,
      embeddingModel: kb.embeddingModel,
      createdAt: kb.createdAt,
    });
  });

  it('answers NOT_FOUND for an unknown base, BAD_REQUEST for an id that is not one', async () => {
    expect((await adminError(svc.admin.knowledge.get.query({ id: NOWHERE }))).code).toBe('NOT_FOUND');
    expect((await adminError(svc.admin.knowledge.get.query({ id: 'nope' }))).code).toBe('BAD_REQUEST');
  });
});

describe('knowledge.delete', () => {
  it('deletes the base with its documents, chunks and stored bytes, and audits it', async () => {
    const workspaceId = await freshWorkspace();
    const kb = await createKnowledgeBase(svc, workspaceId, { name: 'Doomed' });
    const keep = await createKnowledgeBase(svc, workspaceId, { name: 'Kept' });
    const a = await ingest(svc, tenant.key, kb.id, {
      workspaceId,
      name: 'a.txt',
      content: prose(3, 'alpha'),
    });
    const b = await ingest(svc, tenant.key, kb.id, {
      workspaceId,
      name: 'b.txt',
      content: prose(2, 'bravo'),
    });
    const kept = await ingest(svc, tenant.key, keep.id, {
      workspaceId,
      name: 'k.txt',
      content: prose(2, 'kilo'),
    });
    for (const d of [a, b, kept]) expect(d.processingStatus).toBe('completed');
    const keys = [await storageKeyOf(a.id), await storageKeyOf(b.id)];
    const keptKey = await storageKeyOf(kept.id);
    expect(localBlobs(svc)).toEqual(expect.arrayContaining([...keys, keptKey]));
    expect(await chunkCount({ knowledgeBaseId: kb.id })).toBe(a.chunkCount + b.chunkCount);
    const usedBefore = await usedBytes();

    expect(await svc.admin.knowledge.delete.mutate({ id: kb.id })).toEqual({
      id: kb.id,
      deletedDocuments: 2,
    });

    expect((await adminError(svc.admin.knowledge.get.query({ id: kb.id }))).code).toBe('NOT_FOUND');
    for (const d of [a, b]) {
      expect((await adminError(svc.admin.knowledge.getDocument.query({ documentId: d.id }))).code).toBe(
        'NOT_FOUND',
      );
    }
    const [docs] = await svc.db.query<{ n: number | string }>(
      'select count(*) as n from knowledge_documents where knowledge_base_id = $1',
      [kb.id],
    );
    expect(Number(docs?.n)).toBe(0);
    expect(await chunkCount({ knowledgeBaseId: kb.id })).toBe(0);
    const blobs = localBlobs(svc);
    for (const key of keys) expect(blobs).not.toContain(key);
    // The other base is untouched.
    expect(blobs).toContain(keptKey);
    expect(await chunkCount({ knowledgeBaseId: keep.id })).toBe(kept.chunkCount);
    expect((await documentOf(svc, kept.id)).processingStatus).toBe('completed');
    expect(await usedBytes()).toBe(usedBefore - a.fileSize - b.fileSize);
    expect((await svc.admin.knowledge.list.query({ workspaceId })).map((k) => k.id)).toEqual([keep.id]);

    const entries = await auditsOf(workspaceId, kb.id);
    expect(entries.map((e) => e.action)).toEqual(['knowledge.created', 'knowledge.deleted']);
    expect(entries[1]).toMatchObject({
      actorName: 'admin plane',
      resourceType: 'knowledge_base',
      metadata: expect.objectContaining({ name: 'Doomed', documents: 2 }),
    });

    expect((await adminError(svc.admin.knowledge.delete.mutate({ id: kb.id }))).code).toBe('NOT_FOUND');
    expect(await actions(workspaceId, kb.id)).toEqual(['knowledge.created', 'knowledge.deleted']);
  });

  it('answers NOT_FOUND for a base that never was', async () => {
    expect((await adminError(svc.admin.knowledge.delete.mutate({ id: NOWHERE }))).code).toBe('NOT_FOUND');
  });
});

describe('documents', () => {
  it('records an upload in the audit log, as the uploader', async () => {
    const workspaceId = await freshWorkspace();
    const kb = await createKnowledgeBase(svc, workspaceId);
    const res = await uploadDocument(svc, tenant.key, kb.id, {
      workspaceId,
      name: 'audited.txt',
      content: prose(1),
    });
    expectOk(res);
    const id = res.body.data.document.id as string;
    const entries = await auditsOf(workspaceId, id);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      action: 'knowledge.document_uploaded',
      actorId: tenant.user.id,
      resourceType: 'knowledge_document',
      resourceId: id,
      workspaceId,
      metadata: expect.objectContaining({
        knowledgeBaseId: kb.id,
        filename: 'audited.txt',
        fileSize: Buffer.byteLength(prose(1)),
      }),
    });
    // The action filter finds it too.
    const byAction = await svc.call('GET', '/api/v1/audit-logs', {
      key: tenant.key,
      query: { workspaceId, action: 'knowledge.document_uploaded' },
    });
    expect(byAction.body.data.map((e: Entry) => e.resourceId)).toEqual([id]);
    await settled(svc, id);
  });

  it('disables and enables a document, auditing each', async () => {
    const workspaceId = await freshWorkspace();
    const kb = await createKnowledgeBase(svc, workspaceId);
    const doc = await ingest(svc, tenant.key, kb.id, { workspaceId, content: prose(1) });
    const off = await svc.admin.knowledge.setDocumentEnabled.mutate({ documentId: doc.id, enabled: false });
    expect(off).toMatchObject({
      id: doc.id,
      enabled: false,
      processingStatus: 'completed',
      chunkCount: doc.chunkCount,
    });
    expect((await documentOf(svc, doc.id)).enabled).toBe(false);
    const on = await svc.admin.knowledge.setDocumentEnabled.mutate({ documentId: doc.id, enabled: true });
    expect(on.enabled).toBe(true);
    expect((await documentOf(svc, doc.id)).enabled).toBe(true);
    const entries = await auditsOf(workspaceId, doc.id);
    expect(entries.map((e) => e.action)).toEqual([
      'knowledge.document_uploaded',
      'knowledge.document_disabled',
      'knowledge.document_enabled',
    ]);
    expect(entries[1]).toMatchObject({
      actorName: 'admin plane',
      resourceType: 'knowledge_document',
      metadata: expect.objectContaining({ knowledgeBaseId: kb.id }),
    });
    expect(
      (
        await adminError(
          svc.admin.knowledge.setDocumentEnabled.mutate({ documentId: NOWHERE, enabled: false }),
        )
      ).code,
    ).toBe('NOT_FOUND');
  });

  it('re-processes a document: pending again, then completed with the same figures from a new generation', async () => {
    const workspaceId = await freshWorkspace();
    const kb = await createKnowledgeBase(svc, workspaceId, {
      chunkingConfig: { maxSize: 100, minSize: 1, overlap: 0 },
    });
    const doc = await ingest(svc, tenant.key, kb.id, { workspaceId, content: prose(5, 'again') });
    expect(doc.processingStatus).toBe('completed');
    expect(doc.chunkCount).toBeGreaterThan(1);

    const again = await svc.admin.knowledge.reprocessDocument.mutate({ documentId: doc.id });
    expect(again).toMatchObject({ id: doc.id, processingStatus: 'pending' });
    const done = await settled(svc, doc.id);
    expect(done).toMatchObject({
      processingStatus: 'completed',
      chunkCount: doc.chunkCount,
      tokenCount: doc.tokenCount,
    });
    const rows = await svc.db.query<{ generation: number; n: number | string; tokens: number | string }>(
      `select generation, count(*) as n, sum(token_count) as tokens from knowledge_chunks
        where document_id = $1 group by generation`,
      [doc.id],
    );
    expect(rows.map((r) => ({ generation: r.generation, n: Number(r.n), tokens: Number(r.tokens) }))).toEqual(
      [{ generation: 2, n: doc.chunkCount, tokens: doc.tokenCount }],
    );
    expect(await actions(workspaceId, doc.id)).toEqual([
      'knowledge.document_uploaded',
      'knowledge.document_reprocessed',
    ]);
    expect(
      (await adminError(svc.admin.knowledge.reprocessDocument.mutate({ documentId: NOWHERE }))).code,
    ).toBe('NOT_FOUND');
  });

  it('deletes a document with its chunks and bytes; storage use drops by its size', async () => {
    const workspaceId = await freshWorkspace();
    const kb = await createKnowledgeBase(svc, workspaceId);
    const doc = await ingest(svc, tenant.key, kb.id, {
      workspaceId,
      name: 'gone.txt',
      content: prose(4, 'gone'),
    });
    const other = await ingest(svc, tenant.key, kb.id, {
      workspaceId,
      name: 'stays.txt',
      content: prose(1, 'stays'),
    });
    const key = await storageKeyOf(doc.id);
    expect(localBlobs(svc)).toContain(key);
    expect(await chunkCount({ documentId: doc.id })).toBe(doc.chunkCount);
    const before = await usedBytes();
    expect(before).toBeGreaterThanOrEqual(doc.fileSize + other.fileSize);

    expect(await svc.admin.knowledge.deleteDocument.mutate({ documentId: doc.id })).toEqual({
      documentId: doc.id,
    });
    expect(localBlobs(svc)).not.toContain(key);
    expect(localBlobs(svc)).toContain(await storageKeyOf(other.id));
    expect(await chunkCount({ documentId: doc.id })).toBe(0);
    expect(await chunkCount({ documentId: other.id })).toBe(other.chunkCount);
    expect(await usedBytes()).toBe(before - doc.fileSize);
    expect((await adminError(svc.admin.knowledge.getDocument.query({ documentId: doc.id }))).code).toBe(
      'NOT_FOUND',
    );
    expect(await svc.admin.knowledge.get.query({ id: kb.id })).toMatchObject({
      docCount: 1,
      tokenCount: other.tokenCount,
    });
    const listed = await svc.call('GET', `/api/v1/knowledge/${kb.id}/documents`, {
      key: tenant.key,
      query: { workspaceId },
    });
    expect(listed.body.data.documents.map((d: { id: string }) => d.id)).toEqual([other.id]);

    const entries = await auditsOf(workspaceId, doc.id);
    expect(entries.map((e) => e.action)).toEqual([
      'knowledge.document_uploaded',
      'knowledge.document_deleted',
    ]);
    expect(entries[1]?.metadata).toMatchObject({ knowledgeBaseId: kb.id, filename: 'gone.txt' });
    expect((await adminError(svc.admin.knowledge.deleteDocument.mutate({ documentId: doc.id }))).code).toBe(
      'NOT_FOUND',
    );
  });

  it('gets a document; NOT_FOUND for an unknown one, BAD_REQUEST for an id that is not one', async () => {
    const workspaceId = await freshWorkspace();
    const kb = await createKnowledgeBase(svc, workspaceId);
    const doc = await ingest(svc, tenant.key, kb.id, {
      workspaceId,
      name: 'got.md',
      type: 'text/markdown',
      content: prose(1),
    });
    expect(await svc.admin.knowledge.getDocument.query({ documentId: doc.id })).toMatchObject({
      id: doc.id,
      knowledgeBaseId: kb.id,
      workspaceId,
      filename: 'got.md',
      mimeType: 'text/markdown',
      processingStatus: 'completed',
      processingError: null,
      enabled: true,
    });
    expect((await adminError(svc.admin.knowledge.getDocument.query({ documentId: NOWHERE }))).code).toBe(
      'NOT_FOUND',
    );
    expect((await adminError(svc.admin.knowledge.getDocument.query({ documentId: 'nope' }))).code).toBe(
      'BAD_REQUEST',
    );
  });
});
