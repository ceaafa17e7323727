// PATCH /api/v1/knowledge/{id}/documents/{documentId} (enabled, file name, tags, all or none) and
// the bulk PATCH …/documents (enable, disable, delete by id): what searches see afterwards, the
// audit entries and storage figures, and who may not (reader, read-only scope, other base, other
// tenant, bad input), changing nothing.
import { describe, expect, it } from 'vitest';
import { addPerson } from '../helpers/service.ts';
import { useService } from '../helpers/use-service.ts';
import { expectError, expectOk, localBlobs } from './files-helpers.ts';
import { createKnowledgeBase, documentOf, ingest } from './knowledge-helpers.ts';

const { svc, tenant, other } = useService({ runner: true, plan: 'pro' });

const docPath = (kb: string, doc = '') => `/api/v1/knowledge/${kb}/documents${doc ? `/${doc}` : ''}`;

async function searchNames(kb: string, query: string): Promise<string[]> {
  const res = await svc.call('POST', '/api/v1/knowledge/search', {
    key: tenant.key,
    body: { workspaceId: tenant.workspace.id, knowledgeBaseIds: [kb], query, topK: 10 },
  });
  expectOk(res);
  return [
    ...new Set((res.body.data.results as { documentName: string }[]).map((r) => r.documentName)),
  ].sort();
}

async function auditActions(resourceId: string): Promise<string[]> {
  const rows = await svc.db.query<{ action: string }>(
    'select action from audit_logs where resource_id = $1',
    [resourceId],
  );
  return rows.map((r) => r.action);
}

async function setup() {
  const workspaceId = tenant.workspace.id;
  const kb = await createKnowledgeBase(svc, workspaceId);
  await svc.admin.knowledge.defineTag.mutate({ knowledgeBaseId: kb.id, name: 'department', type: 'text' });
  await svc.admin.knowledge.defineTag.mutate({ knowledgeBaseId: kb.id, name: 'year', type: 'number' });
  const a = await ingest(svc, tenant.key, kb.id, {
    workspaceId,
    name: 'alpha.txt',
    content: 'zebra stripes alpha',
  });
  const b = await ingest(svc, tenant.key, kb.id, {
    workspaceId,
    name: 'beta.txt',
    content: 'zebra crossing beta',
  });
  return { workspaceId, kb, a, b };
}

describe('PATCH a document', () => {
  it('disables (not searched), renames and tags it, and enables it again', async () => {
    const { workspaceId, kb, a } = await setup();
    expect(await searchNames(kb.id, 'zebra')).toEqual(['alpha.txt', 'beta.txt']);
    const res = await svc.call('PATCH', docPath(kb.id, a.id), {
      key: tenant.key,
      body: {
        workspaceId,
        enabled: false,
        filename: 'alpha-2025.txt',
        tags: { department: 'HR', year: 2025 },
      },
    });
    expectOk(res);
    expect(res.body.data.document).toMatchObject({ id: a.id, enabled: false, filename: 'alpha-2025.txt' });
    expect(res.body.data.tags).toEqual({ department: 'HR', year: 2025 });
    expect(await searchNames(kb.id, 'zebra')).toEqual(['beta.txt']);

    const cleared = await svc.call('PATCH', docPath(kb.id, a.id), {
      key: tenant.key,
      body: { workspaceId, enabled: true, tags: { year: null } },
    });
    expectOk(cleared);
    expect(cleared.body.data.tags).toEqual({ department: 'HR' });
    expect(await searchNames(kb.id, 'zebra')).toEqual(['alpha-2025.txt', 'beta.txt']);
    const actions = await auditActions(a.id);
    for (const action of [
      'knowledge.document_disabled',
      'knowledge.document_enabled',
      'knowledge.document_renamed',
      'knowledge.document_tags_set',
    ]) {
      expect(actions).toContain(action);
    }
  });

  it('refuses bad input, a reader, a read-only key, another base and another tenant, changing nothing', async () => {
    const { workspaceId, kb, a } = await setup();
    const second = await createKnowledgeBase(svc, workspaceId);
    const reader = await addPerson(svc.admin, tenant, { permission: 'read' });
    const { key: readOnly } = await svc.admin.keys.create.mutate({
      type: 'personal',
      userId: tenant.user.id,
      name: 'read only',
      scopes: ['knowledge:read'],
    });
    const patch = (body: Record<string, unknown>, o: { key?: string; kb?: string; doc?: string } = {}) =>
      svc.call('PATCH', docPath(o.kb ?? kb.id, o.doc ?? a.id), { key: o.key ?? tenant.key, body });
    const change = { workspaceId, enabled: false, tags: { department: 'Ops' } };
    expectError(await patch({ workspaceId }), 400);
    expectError(await patch({ workspaceId, enabled: 'no' }), 400);
    expectError(await patch({ ...change, tags: { department: 'Ops', year: 'soon' } }), 400, /Invalid tags/);
    expectError(await patch({ ...change, tags: { colour: 'red' } }), 400);
    expectError(await patch({ workspaceId, enabled: false, filename: 'alpha.pdf' }), 400);
    expectError(await patch({ workspaceId, filename: 'bad\u0001name.txt' }), 400);
    expectError(await patch(change, { key: reader.key }), 403);
    expectError(await patch(change, { key: readOnly }), 403, /knowledge:write/);
    expectError(await patch(change, { kb: second.id }), 404);
    expectError(await patch({ ...change, workspaceId: other.workspace.id }, { key: other.key }), 404);
    expectError(await patch(change, { doc: '00000000-0000-4000-8000-000000000000' }), 404);
    expectError(await patch(change, { doc: 'nope' }), 400);
    const kept = await documentOf(svc, a.id);
    expect(kept).toMatchObject({ enabled: true, filename: 'alpha.txt' });
    const read = await svc.call('GET', docPath(kb.id, a.id), { key: tenant.key, query: { workspaceId } });
    expect(read.body.data.document.enabled).toBe(true);
    expect(await auditActions(a.id)).not.toContain('knowledge.document_tags_set');
  });
});

describe('bulk PATCH of documents', () => {
  it('disables, enables and deletes documents by id (bytes and storage released)', async () => {
    const { workspaceId, kb, a, b } = await setup();
    const bulk = (operation: string, documentIds: string[]) =>
      svc.call('PATCH', docPath(kb.id), { key: tenant.key, body: { workspaceId, operation, documentIds } });
    const off = await bulk('disable', [a.id, b.id, a.id]);
    expectOk(off);
    expect(off.body.data.successCount).toBe(2);
    expect(await searchNames(kb.id, 'zebra')).toEqual([]);
    expectOk(await bulk('enable', [b.id]));
    expect(await searchNames(kb.id, 'zebra')).toEqual(['beta.txt']);

    const blobs = localBlobs(svc).length;
    const usage = async () =>
      (await svc.call('GET', '/api/users/me/usage-limits', { key: tenant.key })).body.storage
        .usedBytes as number;
    const before = await usage();
    const gone = await bulk('delete', [a.id, b.id]);
    expectOk(gone);
    expect(gone.body.data).toEqual({ operation: 'delete', successCount: 2, updatedDocuments: [] });
    expect(localBlobs(svc)).toHaveLength(blobs - 2);
    expect(await usage()).toBe(before - a.fileSize - b.fileSize);
    expectError(await bulk('delete', [a.id]), 404);
  });

  it('refuses all when one id is not in the base, and refuses readers, scopes and bad input', async () => {
    const { workspaceId, kb, a, b } = await setup();
    const elsewhere = await createKnowledgeBase(svc, workspaceId);
    const c = await ingest(svc, tenant.key, elsewhere.id, { workspaceId, name: 'c.txt', content: 'gamma' });
    const reader = await addPerson(svc.admin, tenant, { permission: 'read' });
    const call = (body: Record<string, unknown>, key = tenant.key) =>
      svc.call('PATCH', docPath(kb.id), { key, body });
    const res = await call({ workspaceId, operation: 'delete', documentIds: [a.id, c.id] });
    expectError(res, 404, /Document not found/);
    expect(res.body.details).toEqual([expect.objectContaining({ path: ['documentIds', 1] })]);
    expectError(await call({ workspaceId, operation: 'archive', documentIds: [a.id] }), 400);
    expectError(await call({ workspaceId, operation: 'delete', documentIds: [] }), 400);
    expectError(await call({ workspaceId, operation: 'delete', documentIds: ['x'] }), 400);
    const many = Array.from({ length: 101 }, () => a.id);
    expectError(await call({ workspaceId, operation: 'delete', documentIds: many }), 400);
    expectError(await call({ workspaceId, operation: 'delete', documentIds: [a.id] }, reader.key), 403);
    expectError(
      await svc.call('PATCH', docPath(kb.id), {
        key: other.key,
        body: { workspaceId: other.workspace.id, operation: 'delete', documentIds: [a.id] },
      }),
      404,
    );
    for (const id of [a.id, b.id, c.id]) expect((await documentOf(svc, id)).enabled).toBe(true);
  });
});
