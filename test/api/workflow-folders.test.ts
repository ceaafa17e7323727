// Workflow folders through the public API and the admin plane: create, import and move into a
// folder, list by folder, the folder shown on get and export; a folder of another workspace, a file
// folder or a missing one refused with a 404 whose details name folderId, changing nothing; and
// deleting a folder that holds workflows: they move to the top, still deployed.
import { describe, expect, it } from 'vitest';
import { createTenant, createWorkspace } from '../helpers/service.ts';
import { expectOk, upload } from './files-helpers.ts';
// The service and its roomy (enterprise, unmetered) tenant are those the table tests start with.
import { useTablesService } from './tables-helpers.ts';

const { svc, tenant } = useTablesService();

const definition = {
  inputs: {},
  blocks: [{ id: 'done', type: 'response', data: { ok: true } }],
  edges: [],
};

const folder = async (
  workspaceId: string,
  name: string,
  more: { kind?: 'file' | 'workflow'; parentId?: string } = {},
) =>
  (await svc.admin.folders.create.mutate({ workspaceId, name, kind: more.kind ?? 'workflow', ...more })).id;
const create = (body: Record<string, unknown>) =>
  svc.call('POST', '/api/v1/workflows', { key: tenant.key, body: { name: 'W', definition, ...body } });
const list = (query: Record<string, string>) =>
  svc.call('GET', '/api/v1/workflows', { key: tenant.key, query });
const get = async (id: string) =>
  (await svc.call('GET', `/api/v1/workflows/${id}`, { key: tenant.key })).body.data;
const countWorkflows = async () =>
  Number((await svc.db.query<{ n: string }>('select count(*) as n from workflows'))[0]?.n);
const noFolder = {
  error: 'Folder not found',
  details: [
    { code: 'custom', path: ['folderId'], message: 'No workflow folder with this id in the workspace' },
  ],
};

describe('workflows in folders (public API)', () => {
  it('creates, imports and moves into folders, lists by folder, and shows the folder', async () => {
    const ws = await createWorkspace(svc.admin, tenant);
    const ops = await folder(ws, 'Ops');
    const sales = await folder(ws, 'Sales');
    const a = await create({ workspaceId: ws, name: 'A', folderId: ops });
    expect(a.status).toBe(201);
    expect(a.body.data.folderId).toBe(ops);
    const top = await create({ workspaceId: ws, name: 'Top' });
    expect(top.body.data.folderId).toBeNull();
    const imported = await svc.call('POST', '/api/v1/workflows/import', {
      key: tenant.key,
      body: { workspaceId: ws, workflow: definition, name: 'Imported', folderId: sales },
    });
    expect(imported.status).toBe(201);
    expect(imported.body.data.folderId).toBe(sales);

    const inOps = await list({ workspaceId: ws, folderId: ops });
    expect(inOps.status).toBe(200);
    expect(inOps.body.data.map((w: { name: string }) => w.name)).toEqual(['A']);
    expect(inOps.body.data[0].folderId).toBe(ops);
    const all = await list({ workspaceId: ws });
    expect(all.body.data.map((w: { folderId: string | null }) => w.folderId)).toEqual([ops, null, sales]);
    expect((await get(a.body.data.id)).folderId).toBe(ops);

    // Moved to another folder, then to the top (null); a change of name leaves the folder as it is.
    const moved = await svc.call('PUT', `/api/v1/workflows/${a.body.data.id}`, {
      key: tenant.key,
      body: { folderId: sales },
    });
    expect(moved.status).toBe(200);
    expect(moved.body.data.folderId).toBe(sales);
    await svc.call('PUT', `/api/v1/workflows/${a.body.data.id}`, { key: tenant.key, body: { name: 'A2' } });
    expect((await get(a.body.data.id)).folderId).toBe(sales);
    expect((await list({ workspaceId: ws, folderId: ops })).body.data).toEqual([]);
    const toTop = await svc.call('PUT', `/api/v1/workflows/${a.body.data.id}`, {
      key: tenant.key,
      body: { folderId: null },
    });
    expect(toTop.body.data.folderId).toBeNull();

    const exported = await svc.call('GET', `/api/v1/workflows/${imported.body.data.id}/export`, {
      key: tenant.key,
    });
    expect(exported.body.data.workflow.folderId).toBe(sales);
    const audits = await svc.db.query<{ action: string; metadata: Record<string, unknown> }>(
      `select action, metadata from audit_logs where resource_id = $1 order by created_at, action`,
      [a.body.data.id],
    );
    expect(audits.map((r) => [r.action, r.metadata.folderId])).toEqual([
      ['workflow.created', ops],
      ['workflow.updated', sales],
      ['workflow.updated', undefined],
      ['workflow.updated', null],
    ]);
  });

  it('refuses a folder of another workspace, a file folder or a missing one, and changes nothing', async () => {
    const ws = await createWorkspace(svc.admin, tenant);
    const mine = await folder(ws, 'Mine');
    const elsewhere = await folder(await createWorkspace(svc.admin, tenant), 'Elsewhere');
    const stranger = await createTenant(svc.admin);
    const strangers = await folder(stranger.workspace.id, 'Theirs');
    const files = await folder(ws, 'Docs', { kind: 'file' });
    const missing = '00000000-0000-4000-8000-000000000000';
    const w = (await create({ workspaceId: ws, name: 'Stays', folderId: mine })).body.data;
    const before = await countWorkflows();
    for (const bad of [elsewhere, strangers, files, missing]) {
      const created = await create({ workspaceId: ws, folderId: bad });
      expect(created.status).toBe(404);
      expect(created.body).toEqual(noFolder);
      const imported = await svc.call('POST', '/api/v1/workflows/import', {
        key: tenant.key,
        body: { workspaceId: ws, workflow: definition, folderId: bad },
      });
      expect(imported.status).toBe(404);
      expect(imported.body).toEqual(noFolder);
      const updated = await svc.call('PUT', `/api/v1/workflows/${w.id}`, {
        key: tenant.key,
        body: { name: 'Changed', folderId: bad },
      });
      expect(updated.status).toBe(404);
      expect(updated.body).toEqual(noFolder);
      const listed = await list({ workspaceId: ws, folderId: bad });
      expect(listed.status).toBe(404);
      expect(listed.body).toEqual(noFolder);
    }
    const notUuid = await create({ workspaceId: ws, folderId: 'ops' });
    expect(notUuid.status).toBe(400);
    expect(notUuid.body.details[0].path).toEqual(['folderId']);
    const badQuery = await list({ workspaceId: ws, folderId: 'ops' });
    expect(badQuery.status).toBe(400);
    expect(badQuery.body.details[0].path).toEqual(['folderId']);
    expect(await countWorkflows()).toBe(before);
    expect(await get(w.id)).toMatchObject({ name: 'Stays', folderId: mine });
    const audits = await svc.db.query('select 1 from audit_logs where resource_id = $1', [w.id]);
    expect(audits).toHaveLength(1);
  });
});

describe('deleting a folder that holds workflows', () => {
  it('moves its workflows (and those of its subfolders) to the top, still deployed', async () => {
    const ws = await createWorkspace(svc.admin, tenant);
    const parent = await folder(ws, 'Parent');
    const child = await folder(ws, 'Child', { parentId: parent });
    const keep = await folder(ws, 'Keep');
    const inParent = (await create({ workspaceId: ws, name: 'P', folderId: parent })).body.data.id;
    const inChild = (await create({ workspaceId: ws, name: 'C', folderId: child })).body.data.id;
    const kept = (await create({ workspaceId: ws, name: 'K', folderId: keep })).body.data.id;
    expect((await svc.call('POST', `/api/v1/workflows/${inParent}/deploy`, { key: tenant.key })).status).toBe(
      200,
    );

    const done = await svc.admin.folders.delete.mutate({ id: parent });
    expect(done).toEqual({ id: parent, deletedFolders: 2, movedFiles: 0, movedWorkflows: 2 });
    expect(await get(inParent)).toMatchObject({ folderId: null, isDeployed: true, deployedVersion: 1 });
    expect((await get(inChild)).folderId).toBeNull();
    expect((await get(kept)).folderId).toBe(keep);
    expect((await svc.admin.folders.list.query({ workspaceId: ws })).map((f) => f.name)).toEqual(['Keep']);
    // The deleted folder is gone for every route that takes one.
    expect((await list({ workspaceId: ws, folderId: parent })).status).toBe(404);
    expect((await create({ workspaceId: ws, folderId: child })).status).toBe(404);
    const [audit] = await svc.db.query<{ metadata: Record<string, unknown> }>(
      `select metadata from audit_logs where action = 'folder.deleted' and resource_id = $1`,
      [parent],
    );
    expect(audit?.metadata).toMatchObject({ name: 'Parent', kind: 'workflow', movedWorkflows: 2 });
    await expect(svc.admin.folders.delete.mutate({ id: parent })).rejects.toThrow('Folder not found');
  });
});

describe('a folder deleted while a workflow is put in it', () => {
  // Only a server interleaves the two (PGlite runs one transaction at a time).
  it.skipIf(!process.env.TEST_DATABASE_URL)(
    'is the same 404 when the delete commits first: the key refuses the workflow, nothing is made',
    async () => {
      const ws = await createWorkspace(svc.admin, tenant);
      const doomed = await folder(ws, 'Doomed');
      const before = await countWorkflows();
      let answer: Promise<{ status: number; body: unknown }> | undefined;
      await svc.db.transaction(async (tx) => {
        await tx.query('delete from folders where id = $1', [doomed]);
        // The create checks the folder (still there for it), then its insert waits on the deleted row.
        answer = create({ workspaceId: ws, name: 'Racer', folderId: doomed });
        for (;;) {
          const [waiting] = await svc.db.query<{ n: number }>(
            `select count(*)::int as n from pg_stat_activity
              where wait_event_type = 'Lock' and query like 'insert into workflows%'`,
          );
          if ((waiting?.n ?? 0) > 0) break;
        }
      });
      const res = await (answer as Promise<{ status: number; body: unknown }>);
      expect(res.status).toBe(404);
      expect(res.body).toEqual(noFolder);
      expect(await countWorkflows()).toBe(before);
    },
  );
});

describe('admin plane', () => {
  it('creates, lists and moves workflows by folder; kinds keep their own trees and names', async () => {
    const ws = await createWorkspace(svc.admin, tenant);
    const wf = await folder(ws, 'Shared name');
    const docs = await folder(ws, 'Shared name', { kind: 'file' });
    const created = await svc.admin.workflows.create.mutate({
      workspaceId: ws,
      name: 'Adm',
      folderId: wf,
      definition,
    });
    expect(created.folderId).toBe(wf);
    await svc.admin.workflows.create.mutate({ workspaceId: ws, name: 'Loose', definition });
    expect(
      (await svc.admin.workflows.list.query({ workspaceId: ws, folderId: wf })).map((w) => w.name),
    ).toEqual(['Adm']);
    expect(
      (await svc.admin.workflows.list.query({ workspaceId: ws, folderId: null })).map((w) => w.name),
    ).toEqual(['Loose']);
    expect((await svc.admin.workflows.get.query({ id: created.id })).folderId).toBe(wf);
    const moved = await svc.admin.workflows.update.mutate({ id: created.id, folderId: null });
    expect(moved.folderId).toBeNull();
    await expect(svc.admin.workflows.update.mutate({ id: created.id, folderId: docs })).rejects.toThrow(
      'Folder not found',
    );
    expect(
      (await svc.admin.folders.list.query({ workspaceId: ws, kind: 'workflow' })).map((f) => f.id),
    ).toEqual([wf]);
    // A subfolder is of its parent's kind; a file never goes into a workflow folder.
    await expect(folder(ws, 'Sub', { kind: 'file', parentId: wf })).rejects.toThrow('Folder not found');
    const res = await upload(svc, tenant.key, { workspaceId: ws, name: 'a.txt' });
    expectOk(res);
    const file = res.body.data.file as { id: string };
    await expect(svc.admin.files.move.mutate({ fileId: file.id, folderId: wf })).rejects.toThrow(
      'Folder not found',
    );
    expect((await svc.admin.files.move.mutate({ fileId: file.id, folderId: docs })).folderId).toBe(docs);
  });
});
