// POST /api/v1/knowledge/{id}/documents with a JSON body {workspaceId, name, text}: a document from
// text, processed and searched as an upload of the same bytes is, under the same quota and
// duplicate rules; and the requests it refuses, storing nothing.
import { describe, expect, it } from 'vitest';
import { addPerson } from '../helpers/service.ts';
import { useService } from '../helpers/use-service.ts';
import { expectError, expectOk, localBlobs } from './files-helpers.ts';
import { createKnowledgeBase, settled, uploadDocument } from './knowledge-helpers.ts';

const { svc, tenant, other } = useService({ runner: true, plan: 'pro' });

const docs = (kb: string) => `/api/v1/knowledge/${kb}/documents`;
const usedBytes = async () =>
  (await svc.call('GET', '/api/users/me/usage-limits', { key: tenant.key })).body.storage.usedBytes as number;

describe('documents from text', () => {
  it('creates, processes and searches a Markdown document; its bytes count against storage', async () => {
    const workspaceId = tenant.workspace.id;
    const kb = await createKnowledgeBase(svc, workspaceId);
    const text = '# Leave policy\n\nParental leave lasts sixteen weeks — ünïcode included.';
    const before = await usedBytes();
    const res = await svc.call('POST', docs(kb.id), {
      key: tenant.key,
      body: { workspaceId, name: 'leave.md', text },
    });
    expectOk(res);
    expect(res.body.data.document).toMatchObject({
      filename: 'leave.md',
      mimeType: 'text/markdown',
      fileSize: Buffer.byteLength(text),
      processingStatus: 'pending',
    });
    const done = await settled(svc, res.body.data.document.id);
    expect(done.processingStatus).toBe('completed');
    expect(done.chunkCount).toBeGreaterThan(0);
    expect(await usedBytes()).toBe(before + Buffer.byteLength(text));
    const found = await svc.call('POST', '/api/v1/knowledge/search', {
      key: tenant.key,
      body: { workspaceId, knowledgeBaseIds: [kb.id], query: 'parental leave weeks' },
    });
    expectOk(found);
    expect(found.body.data.results[0].documentName).toBe('leave.md');

    // The same content again, as text or as an uploaded file, is a duplicate unless allowed.
    expectError(
      await svc.call('POST', docs(kb.id), {
        key: tenant.key,
        body: { workspaceId, name: 'again.txt', text },
      }),
      409,
    );
    expectError(
      await uploadDocument(svc, tenant.key, kb.id, { workspaceId, name: 'x.md', content: text }),
      409,
    );
    const allowed = await svc.call('POST', docs(kb.id), {
      key: tenant.key,
      body: { workspaceId, name: 'again', text, allowDuplicate: true },
    });
    expectOk(allowed);
    expect(allowed.body.data.document.mimeType).toBe('text/plain');
  });

  it('refuses bad input, a reader, another tenant and a base of another workspace, storing nothing', async () => {
    const workspaceId = tenant.workspace.id;
    const kb = await createKnowledgeBase(svc, workspaceId);
    const reader = await addPerson(svc.admin, tenant, { permission: 'read' });
    const blobs = localBlobs(svc).length;
    const before = await usedBytes();
    const post = (body: unknown, key = tenant.key, base = kb.id) =>
      svc.call('POST', docs(base), { key, body: body as Record<string, unknown> });
    const good = { workspaceId, name: 'a.txt', text: 'hello there' };
    expectError(await post({ ...good, text: '' }), 400);
    expectError(await post({ workspaceId, name: 'a.txt' }), 400);
    expectError(await post({ ...good, name: '' }), 400);
    const pdf = await post({ ...good, name: 'scan.pdf' });
    expectError(pdf, 400);
    expect(JSON.stringify(pdf.body.details)).toContain('cannot be sent as text');
    expectError(await post({ ...good, allowDuplicate: 'yes' }), 400);
    expectError(await post({ ...good, workspaceId: 'nope' }), 400);
    const malformed = await svc.app.request(docs(kb.id), {
      method: 'POST',
      headers: { 'X-API-Key': tenant.key, 'Content-Type': 'application/json' },
      body: '{"workspaceId": ',
    });
    expect(malformed.status).toBe(400);
    expectError(await post(good, reader.key), 403);
    expectError(await post({ ...good, workspaceId: other.workspace.id }, other.key), 404);
    const theirs = await createKnowledgeBase(svc, other.workspace.id);
    expectError(await post(good, tenant.key, theirs.id), 404);
    expect(localBlobs(svc)).toHaveLength(blobs);
    expect(await usedBytes()).toBe(before);
    const list = await svc.call('GET', docs(kb.id), { key: tenant.key, query: { workspaceId } });
    expect(list.body.data.documents).toEqual([]);
  });
});
