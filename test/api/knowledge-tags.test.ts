// Tag definitions over the public API (GET/POST /api/v1/knowledge/{id}/tags, DELETE …/tags/{tagName})
// and the document list's `tag.<name>=<value>` filters: defined, listed, used to filter, deleted
// (values cleared, slot freed); refused for readers, read-only keys, other tenants, bad input.
import { describe, expect, it } from 'vitest';
import { addPerson } from '../helpers/service.ts';
import { useService } from '../helpers/use-service.ts';
import { expectError, expectOk } from './files-helpers.ts';
import { createKnowledgeBase, ingest } from './knowledge-helpers.ts';

const { svc, tenant, other } = useService({ runner: true, plan: 'pro' });

const tagsPath = (kb: string, name?: string) =>
  `/api/v1/knowledge/${kb}/tags${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;

describe('tag definitions and tag filters', () => {
  it('defines, lists, filters documents by, and deletes tags', async () => {
    const workspaceId = tenant.workspace.id;
    const kb = await createKnowledgeBase(svc, workspaceId);
    const define = (name: string, type: string) =>
      svc.call('POST', tagsPath(kb.id), { key: tenant.key, body: { workspaceId, name, type } });
    const dept = await define('department', 'text');
    expectOk(dept);
    expect(dept.body.data.tag).toEqual({ name: 'department', type: 'text', slot: 'text1' });
    expectOk(await define('year', 'number'));
    expectOk(await define('public', 'boolean'));
    expectOk(await define('cost centre / ü', 'date'));
    expectError(await define('department', 'number'), 409);
    const listed = await svc.call('GET', tagsPath(kb.id), { key: tenant.key, query: { workspaceId } });
    expectOk(listed);
    expect(listed.body.data.tags.map((t: { name: string }) => t.name)).toEqual([
      'department',
      'year',
      'public',
      'cost centre / ü',
    ]);

    const a = await ingest(svc, tenant.key, kb.id, { workspaceId, name: 'a.txt', content: 'first document' });
    const b = await ingest(svc, tenant.key, kb.id, {
      workspaceId,
      name: 'b.txt',
      content: 'second document',
    });
    const tag = (id: string, tags: Record<string, unknown>) =>
      svc.call('PATCH', `/api/v1/knowledge/${kb.id}/documents/${id}`, {
        key: tenant.key,
        body: { workspaceId, tags },
      });
    expectOk(await tag(a.id, { department: 'HR', year: 2024, public: true }));
    expectOk(await tag(b.id, { department: 'Sales', year: 2025, public: false }));
    const names = async (query: Record<string, string>) => {
      const res = await svc.call('GET', `/api/v1/knowledge/${kb.id}/documents`, {
        key: tenant.key,
        query: { workspaceId, ...query },
      });
      expectOk(res);
      return res.body.data.documents.map((d: { filename: string }) => d.filename).sort();
    };
    expect(await names({ 'tag.department': 'hr' })).toEqual(['a.txt']);
    expect(await names({ 'tag.year': '2025' })).toEqual(['b.txt']);
    expect(await names({ 'tag.public': 'true', 'tag.year': '2024' })).toEqual(['a.txt']);
    expect(await names({ 'tag.public': 'false', 'tag.year': '2024' })).toEqual([]);
    expect(await names({})).toEqual(['a.txt', 'b.txt']);
    // Reads show each document's tag values.
    const one = await svc.call('GET', `/api/v1/knowledge/${kb.id}/documents/${a.id}`, {
      key: tenant.key,
      query: { workspaceId },
    });
    expect(one.body.data.document.tags).toEqual({ department: 'HR', year: 2024, public: true });
    const page = await svc.call('GET', `/api/v1/knowledge/${kb.id}/documents`, {
      key: tenant.key,
      query: { workspaceId, 'tag.department': 'sales' },
    });
    expect(page.body.data.documents[0].tags).toEqual({ department: 'Sales', year: 2025, public: false });

    const bad = await svc.call('GET', `/api/v1/knowledge/${kb.id}/documents`, {
      key: tenant.key,
      query: { workspaceId, 'tag.year': 'soon' },
    });
    expectError(bad, 400);
    expect(bad.body.details[0].path).toEqual(['tag.year']);
    expectError(
      await svc.call('GET', `/api/v1/knowledge/${kb.id}/documents`, {
        key: tenant.key,
        query: { workspaceId, 'tag.colour': 'red' },
      }),
      400,
    );

    const gone = await svc.call('DELETE', tagsPath(kb.id, 'department'), {
      key: tenant.key,
      body: { workspaceId },
    });
    expectOk(gone);
    expect(gone.body.data).toEqual({
      name: 'department',
      clearedDocuments: 2,
      message: 'Tag department deleted',
    });
    expectError(
      await svc.call('DELETE', tagsPath(kb.id, 'department'), { key: tenant.key, body: { workspaceId } }),
      404,
    );
    // The freed slot starts empty for the next text tag.
    const again = await define('team', 'text');
    expect(again.body.data.tag.slot).toBe('text1');
    expect(await names({ 'tag.team': 'HR' })).toEqual([]);
    const weird = await svc.call('DELETE', tagsPath(kb.id, 'cost centre / ü'), {
      key: tenant.key,
      body: { workspaceId },
    });
    expectOk(weird);
    const actions = await svc.db.query<{ action: string }>(
      "select action from audit_logs where resource_id = $1 and action like 'knowledge.tag%'",
      [kb.id],
    );
    expect(actions.filter((r) => r.action === 'knowledge.tag_deleted')).toHaveLength(2);
  });

  it('refuses readers, read-only keys, other tenants, full slots and bad input, changing nothing', async () => {
    const workspaceId = tenant.workspace.id;
    const kb = await createKnowledgeBase(svc, workspaceId);
    const reader = await addPerson(svc.admin, tenant, { permission: 'read' });
    const { key: readOnly } = await svc.admin.keys.create.mutate({
      type: 'personal',
      userId: tenant.user.id,
      name: 'read only',
      scopes: ['knowledge:read'],
    });
    const define = (body: Record<string, unknown>, key = tenant.key, base = kb.id) =>
      svc.call('POST', tagsPath(base), { key, body });
    expectOk(await define({ workspaceId, name: 'd1', type: 'date' }));
    expectOk(await define({ workspaceId, name: 'd2', type: 'date' }));
    expectError(await define({ workspaceId, name: 'd3', type: 'date' }), 400);
    expectError(await define({ workspaceId, name: 'x', type: 'colour' }), 400);
    expectError(await define({ workspaceId, name: '', type: 'text' }), 400);
    expectError(await define({ workspaceId, name: 'x'.repeat(101), type: 'text' }), 400);
    expectError(await define({ workspaceId, name: 'a\u0001b', type: 'text' }), 400);
    expectError(await define({ workspaceId, name: 'x', type: 'text' }, reader.key), 403);
    expectError(await define({ workspaceId, name: 'x', type: 'text' }, readOnly), 403, /knowledge:write/);
    expectError(await define({ workspaceId: other.workspace.id, name: 'x', type: 'text' }, other.key), 404);
    expectError(
      await svc.call('GET', tagsPath(kb.id), { key: other.key, query: { workspaceId: other.workspace.id } }),
      404,
    );
    expectError(
      await svc.call('DELETE', tagsPath(kb.id, 'd1'), { key: reader.key, body: { workspaceId } }),
      403,
    );
    expectError(
      await svc.call('DELETE', tagsPath(kb.id, 'd1'), { key: readOnly, body: { workspaceId } }),
      403,
    );
    expectError(
      await svc.call('DELETE', tagsPath(kb.id, 'd1'), {
        key: other.key,
        body: { workspaceId: other.workspace.id },
      }),
      404,
    );
    const theirs = await createKnowledgeBase(svc, other.workspace.id);
    expectError(
      await svc.call('DELETE', tagsPath(theirs.id, 'd1'), { key: tenant.key, body: { workspaceId } }),
      404,
    );
    expectError(await svc.call('DELETE', tagsPath(kb.id, 'd1'), { key: tenant.key, body: {} }), 400);
    const listed = await svc.call('GET', tagsPath(kb.id), { key: readOnly, query: { workspaceId } });
    expectOk(listed);
    expect(listed.body.data.tags.map((t: { name: string }) => t.name)).toEqual(['d1', 'd2']);
  });
});
