// The chunks of a document over the public API: listed (paged, filtered), added, changed (content
// embedded again: searches find the new words, not the old), disabled (not searched) and deleted,
// with the document's figures kept true; and what is refused: a chunk of another document, another
// base or tenant, a reader or read-only key, a document still processing, bad input.
import { describe, expect, it } from 'vitest';
import { addPerson } from '../helpers/service.ts';
import { useService } from '../helpers/use-service.ts';
import { expectError, expectOk } from './files-helpers.ts';
import { createKnowledgeBase, documentOf, ingest, prose, settled } from './knowledge-helpers.ts';

const { svc, tenant, other } = useService({ runner: true, plan: 'pro' });

const chunksPath = (kb: string, doc: string, chunk?: number | string) =>
  `/api/v1/knowledge/${kb}/documents/${doc}/chunks${chunk === undefined ? '' : `/${chunk}`}`;
const small = { maxSize: 100, minSize: 10, overlap: 0 };

async function searchContents(kb: string, query: string): Promise<string[]> {
  const res = await svc.call('POST', '/api/v1/knowledge/search', {
    key: tenant.key,
    body: {
      workspaceId: tenant.workspace.id,
      knowledgeBaseIds: [kb],
      query,
      topK: 50,
      searchMode: 'fulltext',
    },
  });
  expectOk(res);
  return (res.body.data.results as { content: string }[]).map((r) => r.content);
}

describe('document chunks', () => {
  it('lists, adds, changes, disables and deletes chunks; searches and figures follow', async () => {
    const workspaceId = tenant.workspace.id;
    const kb = await createKnowledgeBase(svc, workspaceId, { chunkingConfig: small });
    const doc = await ingest(svc, tenant.key, kb.id, { workspaceId, content: prose(4) });
    expect(doc.chunkCount).toBeGreaterThan(2);
    const list = async (query: Record<string, string | number> = {}) => {
      const res = await svc.call('GET', chunksPath(kb.id, doc.id), {
        key: tenant.key,
        query: { workspaceId, ...query },
      });
      expectOk(res);
      return res.body.data;
    };
    const all = await list();
    expect(all.pagination).toMatchObject({ total: doc.chunkCount, hasMore: false });
    expect(all.chunks.map((c: { chunkIndex: number }) => c.chunkIndex)).toEqual(
      Array.from({ length: doc.chunkCount }, (_, i) => i),
    );
    const page = await list({ limit: 1, offset: 1 });
    expect(page.chunks).toHaveLength(1);
    expect(page.chunks[0].id).toBe(all.chunks[1].id);
    expect(page.pagination.hasMore).toBe(true);

    const added = await svc.call('POST', chunksPath(kb.id, doc.id), {
      key: tenant.key,
      body: { workspaceId, content: 'Xylophone lessons happen on Tuesdays.' },
    });
    expectOk(added);
    const chunk = added.body.data.chunk;
    expect(chunk).toMatchObject({ chunkIndex: doc.chunkCount, enabled: true, documentId: doc.id });
    expect(chunk.tokenCount).toBeGreaterThan(0);
    expect(await searchContents(kb.id, 'xylophone')).toEqual(['Xylophone lessons happen on Tuesdays.']);
    let figures = await documentOf(svc, doc.id);
    expect(figures.chunkCount).toBe(doc.chunkCount + 1);
    expect(figures.tokenCount).toBe(doc.tokenCount + chunk.tokenCount);

    const changed = await svc.call('PATCH', chunksPath(kb.id, doc.id, chunk.id), {
      key: tenant.key,
      body: { workspaceId, content: 'Marimba lessons happen on Fridays instead.' },
    });
    expectOk(changed);
    expect(await searchContents(kb.id, 'xylophone')).toEqual([]);
    expect(await searchContents(kb.id, 'marimba')).toHaveLength(1);
    // By meaning too: the new content was embedded again.
    const vector = await svc.call('POST', '/api/v1/knowledge/search', {
      key: tenant.key,
      body: { workspaceId, knowledgeBaseIds: [kb.id], query: 'Marimba lessons on Fridays', topK: 1 },
    });
    expect(vector.body.data.results[0].content).toBe('Marimba lessons happen on Fridays instead.');
    figures = await documentOf(svc, doc.id);
    expect(figures.tokenCount).toBe(doc.tokenCount + changed.body.data.chunk.tokenCount);

    const off = await svc.call('PATCH', chunksPath(kb.id, doc.id, chunk.id), {
      key: tenant.key,
      body: { workspaceId, enabled: false },
    });
    expect(off.body.data.chunk.enabled).toBe(false);
    expect(await searchContents(kb.id, 'marimba')).toEqual([]);
    expect((await list({ enabled: 'false' })).chunks.map((c: { id: number }) => c.id)).toEqual([chunk.id]);
    expect((await list({ search: 'MARIMBA' })).pagination.total).toBe(1);

    const first = all.chunks[0];
    const gone = await svc.call('DELETE', chunksPath(kb.id, doc.id, first.id), {
      key: tenant.key,
      body: { workspaceId },
    });
    expectOk(gone);
    expect(gone.body.data).toEqual({ chunkId: first.id, message: 'Chunk deleted' });
    figures = await documentOf(svc, doc.id);
    expect(figures.chunkCount).toBe(doc.chunkCount);
    expectError(
      await svc.call('DELETE', chunksPath(kb.id, doc.id, first.id), {
        key: tenant.key,
        body: { workspaceId },
      }),
      404,
    );
    const rows = await svc.db.query<{ action: string }>(
      "select action from audit_logs where resource_id = $1 and action like 'knowledge.chunk%'",
      [doc.id],
    );
    expect(rows.map((r) => r.action).sort()).toEqual([
      'knowledge.chunk_added',
      'knowledge.chunk_deleted',
      'knowledge.chunk_updated',
      'knowledge.chunk_updated',
    ]);

    // Reprocessing rebuilds the chunks from the file: the edits are gone.
    expectOk(
      await svc.call('POST', `/api/v1/knowledge/${kb.id}/documents/${doc.id}/reprocess`, {
        key: tenant.key,
        body: { workspaceId },
      }),
    );
    const again = await settled(svc, doc.id);
    expect(again.chunkCount).toBe(doc.chunkCount);
    expect(await searchContents(kb.id, 'marimba')).toEqual([]);
  });

  it('refuses other documents, bases, tenants, readers, scopes, a processing document and bad input', async () => {
    const workspaceId = tenant.workspace.id;
    const kb = await createKnowledgeBase(svc, workspaceId, { chunkingConfig: small });
    const doc = await ingest(svc, tenant.key, kb.id, { workspaceId, content: prose(2, 'alpha') });
    const sibling = await ingest(svc, tenant.key, kb.id, { workspaceId, content: prose(2, 'beta') });
    const second = await createKnowledgeBase(svc, workspaceId);
    const reader = await addPerson(svc.admin, tenant, { permission: 'read' });
    const { key: readOnly } = await svc.admin.keys.create.mutate({
      type: 'personal',
      userId: tenant.user.id,
      name: 'read only',
      scopes: ['knowledge:read'],
    });
    const listed = await svc.call('GET', chunksPath(kb.id, doc.id), {
      key: tenant.key,
      query: { workspaceId },
    });
    const chunk = listed.body.data.chunks[0] as { id: number; content: string };
    const siblingChunk = (
      await svc.call('GET', chunksPath(kb.id, sibling.id), { key: tenant.key, query: { workspaceId } })
    ).body.data.chunks[0] as { id: number };
    const patch = (
      body: Record<string, unknown>,
      o: { key?: string; kb?: string; doc?: string; chunk?: number | string } = {},
    ) =>
      svc.call('PATCH', chunksPath(o.kb ?? kb.id, o.doc ?? doc.id, o.chunk ?? chunk.id), {
        key: o.key ?? tenant.key,
        body,
      });
    const change = { workspaceId, content: 'replaced' };

    expectError(await patch(change, { chunk: siblingChunk.id }), 404, /Chunk not found/);
    expectError(await patch(change, { kb: second.id }), 404);
    expectError(await patch({ ...change, workspaceId: other.workspace.id }, { key: other.key }), 404);
    expectError(await patch(change, { key: reader.key }), 403);
    expectError(await patch(change, { key: readOnly }), 403, /knowledge:write/);
    expectError(await patch({ workspaceId }), 400);
    expectError(await patch({ workspaceId, content: '   ' }), 400);
    expectError(await patch({ workspaceId, content: 'x'.repeat(10_001) }), 400);
    expectError(await patch(change, { chunk: 'abc' }), 400);
    expectError(await patch(change, { chunk: 0 }), 400);
    expectError(await patch(change, { doc: 'nope' }), 400);
    expectError(
      await svc.call('POST', chunksPath(kb.id, doc.id), {
        key: readOnly,
        body: { workspaceId, content: 'new' },
      }),
      403,
    );
    expectError(
      await svc.call('GET', chunksPath(kb.id, doc.id), {
        key: other.key,
        query: { workspaceId: other.workspace.id },
      }),
      404,
    );
    expectError(
      await svc.call('GET', chunksPath(second.id, doc.id), { key: tenant.key, query: { workspaceId } }),
      404,
    );
    expectError(
      await svc.call('DELETE', chunksPath(kb.id, doc.id, siblingChunk.id), {
        key: tenant.key,
        body: { workspaceId },
      }),
      404,
    );

    // While a new generation is pending, edits would be lost: 409.
    await svc.db.query("update knowledge_documents set processing_status = 'processing' where id = $1", [
      doc.id,
    ]);
    expectError(await patch(change), 409, /completed/);
    expectError(
      await svc.call('POST', chunksPath(kb.id, doc.id), {
        key: tenant.key,
        body: { workspaceId, content: 'new' },
      }),
      409,
    );
    await svc.db.query("update knowledge_documents set processing_status = 'completed' where id = $1", [
      doc.id,
    ]);

    const after = await svc.call('GET', chunksPath(kb.id, doc.id), {
      key: tenant.key,
      query: { workspaceId },
    });
    expect(after.body.data.chunks).toEqual(listed.body.data.chunks);
    expect((await documentOf(svc, doc.id)).chunkCount).toBe(doc.chunkCount);
  });

  it('numbers racing additions apart and counts each once', async () => {
    const workspaceId = tenant.workspace.id;
    const kb = await createKnowledgeBase(svc, workspaceId, { chunkingConfig: small });
    const doc = await ingest(svc, tenant.key, kb.id, { workspaceId, content: prose(2, 'race') });
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        svc.call('POST', chunksPath(kb.id, doc.id), {
          key: tenant.key,
          body: { workspaceId, content: `Racing chunk number ${i}` },
        }),
      ),
    );
    for (const a of answers) expectOk(a);
    const indexes = answers.map((a) => a.body.data.chunk.chunkIndex as number).sort((x, y) => x - y);
    expect(indexes).toEqual(Array.from({ length: 6 }, (_, i) => doc.chunkCount + i));
    const figures = await documentOf(svc, doc.id);
    expect(figures.chunkCount).toBe(doc.chunkCount + 6);
    const added = answers.reduce((n, a) => n + (a.body.data.chunk.tokenCount as number), 0);
    expect(figures.tokenCount).toBe(doc.tokenCount + added);
  });
});
