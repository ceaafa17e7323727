// /api/v1/knowledge: creating a knowledge base, reading one and deleting one over the public API
// (its documents' stored bytes removed and released from the storage quota), with who may do each.
import { describe, expect, it } from 'vitest';
import { addPerson, createTenant } from '../helpers/service.ts';
import { expectError, expectOk, localBlobs } from './files-helpers.ts';
import { documentOf, ingest, prose, uploadDocument, useKnowledgeService } from './knowledge-helpers.ts';

const { svc, tenant, other, freshWorkspace, freshBaseWithDocument } = useKnowledgeService();

const create = (key: string, body: Record<string, unknown>) =>
  svc.call('POST', '/api/v1/knowledge', { key, body });

describe('POST /api/v1/knowledge', () => {
  it('creates a knowledge base with its chunking config and the default model, and records it', async () => {
    const workspaceId = await freshWorkspace();
    const res = await create(tenant.key, {
      workspaceId,
      name: 'Handbook',
      description: 'Policies',
      chunkingConfig: { maxSize: 256, minSize: 10, overlap: 32 },
    });
    expectOk(res);
    const kb = res.body.data.knowledgeBase;
    expect(kb).toMatchObject({
      name: 'Handbook',
      description: 'Policies',
      docCount: 0,
      tokenCount: 0,
      embeddingModel: 'local-hashed-ngrams-v1',
      chunkingConfig: { maxSize: 256, minSize: 10, overlap: 32 },
      workspaceId,
    });
    expect(res.body.data.message).toBe('Knowledge base Handbook created');

    const list = await svc.call('GET', '/api/v1/knowledge', { key: tenant.key, query: { workspaceId } });
    expect(list.body.data.knowledgeBases.map((k: { id: string }) => k.id)).toEqual([kb.id]);
    const audit = await svc.call('GET', '/api/v1/audit-logs', {
      key: tenant.key,
      query: { workspaceId, action: 'knowledge.created' },
    });
    expect(audit.status).toBe(200);
    expect(JSON.stringify(audit.body)).toContain(kb.id);

    // Documents go into it and are processed with its config.
    const doc = await ingest(svc, tenant.key, kb.id, { workspaceId, content: prose(4) });
    expect(doc.processingStatus).toBe('completed');
    expect(doc.chunkCount).toBeGreaterThan(1);
  });

  it('refuses bad input with a 400 naming the field, creating nothing', async () => {
    const workspaceId = await freshWorkspace();
    const cases: [Record<string, unknown>, string][] = [
      [{ workspaceId }, 'name'],
      [{ workspaceId, name: '' }, 'name'],
      [{ workspaceId: 'nope', name: 'x' }, 'workspaceId'],
      [
        { workspaceId, name: 'x', chunkingConfig: { maxSize: 100, minSize: 1, overlap: 100 } },
        'chunkingConfig',
      ],
      [{ workspaceId, name: 'x', chunkingConfig: { maxSize: 50, minSize: 1, overlap: 0 } }, 'chunkingConfig'],
      [{ workspaceId, name: 'x', embeddingModel: 'other-model' }, 'embeddingModel'],
      [{ workspaceId, name: 'x', description: 7 }, 'description'],
    ];
    for (const [body, field] of cases) {
      const res = await create(tenant.key, body);
      expectError(res, 400);
      expect(JSON.stringify(res.body.details ?? res.body.error)).toContain(field);
    }
    const list = await svc.call('GET', '/api/v1/knowledge', { key: tenant.key, query: { workspaceId } });
    expect(list.body.data.totalCount).toBe(0);
  });

  it('needs write permission on the workspace; another tenant workspace is refused', async () => {
    const reader = await addPerson(svc.admin, tenant, { permission: 'read' });
    expectError(await create(reader.key, { workspaceId: tenant.workspace.id, name: 'x' }), 403);
    const res = await create(other.key, { workspaceId: tenant.workspace.id, name: 'x' });
    expect([403, 404]).toContain(res.status);
    expectError(
      await create(tenant.key, { workspaceId: '00000000-0000-4000-8000-000000000000', name: 'x' }),
      404,
    );
  });
});

describe('GET /api/v1/knowledge/{id}', () => {
  it('answers the base with its counts to a reader; not found in another workspace or tenant', async () => {
    const { workspaceId, kb, doc } = await freshBaseWithDocument(2, {
      workspaceId: tenant.workspace.id,
      name: 'Read me',
    });
    const id = kb.id;

    const reader = await addPerson(svc.admin, tenant, { permission: 'read' });
    const res = await svc.call('GET', `/api/v1/knowledge/${id}`, { key: reader.key, query: { workspaceId } });
    expectOk(res);
    expect(res.body.data.knowledgeBase).toMatchObject({
      id,
      name: 'Read me',
      docCount: 1,
      tokenCount: doc.tokenCount,
    });

    const elsewhere = await freshWorkspace();
    expectError(
      await svc.call('GET', `/api/v1/knowledge/${id}`, {
        key: tenant.key,
        query: { workspaceId: elsewhere },
      }),
      404,
    );
    expectError(
      await svc.call('GET', `/api/v1/knowledge/${id}`, { key: other.key, query: { workspaceId } }),
      404,
    );
    expectError(
      await svc.call('GET', `/api/v1/knowledge/${id}`, {
        key: other.key,
        query: { workspaceId: other.workspace.id },
      }),
      404,
    );
    expectError(
      await svc.call('GET', '/api/v1/knowledge/not-a-uuid', { key: tenant.key, query: { workspaceId } }),
      400,
    );
    expectError(await svc.call('GET', `/api/v1/knowledge/${id}`, { key: tenant.key }), 400);
  });
});

describe('DELETE /api/v1/knowledge/{id}', () => {
  it('deletes the base with its documents, removes their bytes and releases their storage', async () => {
    const t = await createTenant(svc.admin, { plan: 'pro' });
    const blobs = localBlobs(svc).length;
    const { workspaceId, kb, doc } = await freshBaseWithDocument(2, {
      workspaceId: t.workspace.id,
      key: t.key,
    });
    const id = kb.id;
    expectOk(await uploadDocument(svc, t.key, id, { workspaceId, name: 'b.txt', content: 'y'.repeat(300) }));
    expect(localBlobs(svc)).toHaveLength(blobs + 2);
    const before = await svc.call('GET', '/api/users/me/usage-limits', { key: t.key });
    expect(before.body.storage.usedBytes).toBe(doc.fileSize + 300);

    const res = await svc.call('DELETE', `/api/v1/knowledge/${id}`, { key: t.key, body: { workspaceId } });
    expectOk(res);
    expect(res.body.data).toEqual({
      id,
      deletedDocuments: 2,
      message: 'Knowledge base deleted with 2 document(s)',
    });

    expect(localBlobs(svc)).toHaveLength(blobs);
    const after = await svc.call('GET', '/api/users/me/usage-limits', { key: t.key });
    expect(after.body.storage.usedBytes).toBe(0);
    expectError(
      await svc.call('GET', `/api/v1/knowledge/${id}`, { key: t.key, query: { workspaceId } }),
      404,
    );
    expectError(
      await svc.call('GET', `/api/v1/knowledge/${id}/documents/${doc.id}`, {
        key: t.key,
        query: { workspaceId },
      }),
      404,
    );
    const search = await svc.call('POST', '/api/v1/knowledge/search', {
      key: t.key,
      body: { workspaceId, knowledgeBaseIds: [id], query: 'fox' },
    });
    expectError(search, 404);
    // Gone is gone: a second delete finds nothing.
    expectError(
      await svc.call('DELETE', `/api/v1/knowledge/${id}`, { key: t.key, body: { workspaceId } }),
      404,
    );
  });

  it('refuses a reader, another workspace, another tenant and bad input, deleting nothing', async () => {
    const elsewhere = await freshWorkspace();
    const { workspaceId, kb, doc } = await freshBaseWithDocument(2, { workspaceId: tenant.workspace.id });
    const id = kb.id;

    const reader = await addPerson(svc.admin, tenant, { permission: 'read' });
    expectError(
      await svc.call('DELETE', `/api/v1/knowledge/${id}`, { key: reader.key, body: { workspaceId } }),
      403,
    );
    expectError(
      await svc.call('DELETE', `/api/v1/knowledge/${id}`, {
        key: tenant.key,
        body: { workspaceId: elsewhere },
      }),
      404,
    );
    expectError(
      await svc.call('DELETE', `/api/v1/knowledge/${id}`, {
        key: other.key,
        body: { workspaceId: other.workspace.id },
      }),
      404,
    );
    expectError(await svc.call('DELETE', `/api/v1/knowledge/${id}`, { key: tenant.key, body: {} }), 400);
    expectError(
      await svc.call('DELETE', '/api/v1/knowledge/not-a-uuid', { key: tenant.key, body: { workspaceId } }),
      400,
    );

    const kept = await documentOf(svc, doc.id);
    expect(kept.processingStatus).toBe('completed');
  });
});
