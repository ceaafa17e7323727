// DELETE /api/v1/knowledge/{id}/documents/{documentId} and POST …/reprocess: who may, where the
// document must be, and what each leaves behind (bytes, storage figures, a new processing round).
import { describe, expect, it } from 'vitest';
import { addPerson } from '../helpers/service.ts';
import { expectError, expectOk, localBlobs } from './files-helpers.ts';
import { createKnowledgeBase, documentOf, settled, useKnowledgeService } from './knowledge-helpers.ts';

const { svc, tenant, other, freshBaseWithDocument } = useKnowledgeService('pro');

const docPath = (kb: string, doc: string, tail = '') => `/api/v1/knowledge/${kb}/documents/${doc}${tail}`;

describe('document delete and reprocess', () => {
  it('reprocesses a document to completed again, then deletes it with its bytes and storage', async () => {
    const blobs = localBlobs(svc).length;
    const { workspaceId, kb, doc } = await freshBaseWithDocument(3);
    expect(localBlobs(svc)).toHaveLength(blobs + 1);

    const again = await svc.call('POST', docPath(kb.id, doc.id, '/reprocess'), {
      key: tenant.key,
      body: { workspaceId },
    });
    expectOk(again);
    expect(again.body.data.document.processingStatus).toBe('pending');
    const done = await settled(svc, doc.id);
    expect(done.processingStatus).toBe('completed');
    expect(done.chunkCount).toBe(doc.chunkCount);

    const res = await svc.call('DELETE', docPath(kb.id, doc.id), { key: tenant.key, body: { workspaceId } });
    expectOk(res);
    expect(res.body.data).toEqual({ documentId: doc.id, message: 'Document deleted' });
    expect(localBlobs(svc)).toHaveLength(blobs);
    const usage = await svc.call('GET', '/api/users/me/usage-limits', { key: tenant.key });
    expect(usage.body.storage.usedBytes).toBe(0);
    expectError(
      await svc.call('DELETE', docPath(kb.id, doc.id), { key: tenant.key, body: { workspaceId } }),
      404,
    );
    expectError(
      await svc.call('POST', docPath(kb.id, doc.id, '/reprocess'), {
        key: tenant.key,
        body: { workspaceId },
      }),
      404,
    );
  });

  it('refuses a reader, another base, another tenant and bad input, changing nothing', async () => {
    const { workspaceId, kb, doc } = await freshBaseWithDocument(2, { workspaceId: tenant.workspace.id });
    const second = await createKnowledgeBase(svc, workspaceId);
    const reader = await addPerson(svc.admin, tenant, { permission: 'read' });
    for (const tail of ['', '/reprocess']) {
      const method = tail ? 'POST' : 'DELETE';
      expectError(
        await svc.call(method, docPath(kb.id, doc.id, tail), { key: reader.key, body: { workspaceId } }),
        403,
      );
      expectError(
        await svc.call(method, docPath(second.id, doc.id, tail), { key: tenant.key, body: { workspaceId } }),
        404,
      );
      expectError(
        await svc.call(method, docPath(kb.id, doc.id, tail), {
          key: other.key,
          body: { workspaceId: other.workspace.id },
        }),
        404,
      );
      expectError(await svc.call(method, docPath(kb.id, doc.id, tail), { key: tenant.key, body: {} }), 400);
      expectError(
        await svc.call(method, docPath(kb.id, 'nope', tail), { key: tenant.key, body: { workspaceId } }),
        400,
      );
    }
    const kept = await documentOf(svc, doc.id);
    expect(kept.processingStatus).toBe('completed');
  });
});
