// GET /api/v1/docs: a workspace's files by folder (that folder only) and lifecycle scope (active by
// default, archived, all), and how archiving shows in GET /api/v1/files.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';
import { expectError, expectOk, upload } from './files-helpers.ts';

let svc: TestService;
let tenant: Tenant;
let workspaceId: string;
const ids: Record<string, string> = {};
let folderA: string;
let folderB: string;

beforeAll(async () => {
  svc = await startTestService();
  tenant = await createTenant(svc.admin, { plan: 'enterprise' });
  workspaceId = tenant.workspace.id;
  folderA = (await svc.admin.folders.create.mutate({ workspaceId, name: 'A' })).id;
  folderB = (await svc.admin.folders.create.mutate({ workspaceId, name: 'B', parentId: folderA })).id;
  // top: at the top; inA and oldA in A (oldA archived); inB in B, under A.
  for (const [name, folder] of [
    ['top', null],
    ['inA', folderA],
    ['oldA', folderA],
    ['inB', folderB],
  ] as const) {
    const res = await upload(svc, tenant.key, { workspaceId, name });
    expectOk(res);
    ids[name] = res.body.data.file.id;
    if (folder) await svc.admin.files.move.mutate({ fileId: res.body.data.file.id, folderId: folder });
  }
  await svc.admin.files.archive.mutate({ fileId: ids.oldA as string });
});
afterAll(() => svc.close());

async function docs(query: Record<string, string>, key = tenant.key) {
  return svc.call('GET', '/api/v1/docs', { key, query: { workspaceId, ...query } });
}
async function docNames(query: Record<string, string> = {}) {
  const res = await docs(query);
  expectOk(res);
  expect(res.body.data.totalCount).toBe(res.body.data.files.length);
  return (res.body.data.files as { name: string }[]).map((f) => f.name).sort();
}

describe('GET /api/v1/docs', () => {
  it('lists the live docs of the whole workspace by default', async () => {
    expect(await docNames()).toEqual(['inA', 'inB', 'top']);
    expect(await docNames({ scope: 'active' })).toEqual(['inA', 'inB', 'top']);
  });

  it('answers Files with their folder and archive state', async () => {
    const res = await docs({ scope: 'all' });
    type Doc = { name: string; folderId: string | null; archivedAt: string | null; workspaceId: string };
    const byName: Record<string, Doc> = Object.fromEntries(
      (res.body.data.files as Doc[]).map((f) => [f.name, f]),
    );
    expect(byName.top).toMatchObject({ folderId: null, archivedAt: null, workspaceId });
    expect(byName.inB).toMatchObject({ folderId: folderB, archivedAt: null });
    expect(byName.oldA?.folderId).toBe(folderA);
    expect(new Date(byName.oldA?.archivedAt as string).toISOString()).toBe(byName.oldA?.archivedAt);
  });

  it('lists the archived docs, or all of them', async () => {
    expect(await docNames({ scope: 'archived' })).toEqual(['oldA']);
    expect(await docNames({ scope: 'all' })).toEqual(['inA', 'inB', 'oldA', 'top']);
  });

  it('lists only the docs in the given folder (not those of its subfolders), in each scope', async () => {
    expect(await docNames({ folderId: folderA })).toEqual(['inA']);
    expect(await docNames({ folderId: folderA, scope: 'archived' })).toEqual(['oldA']);
    expect(await docNames({ folderId: folderA, scope: 'all' })).toEqual(['inA', 'oldA']);
    expect(await docNames({ folderId: folderB })).toEqual(['inB']);
  });

  it('refuses a bad scope or folder id with 400, naming the parameter', async () => {
    const scope = await docs({ scope: 'deleted' });
    expectError(scope, 400);
    expect(scope.body.details[0].path).toEqual(['scope']);
    const folder = await docs({ folderId: 'A' });
    expectError(folder, 400);
    expect(folder.body.details[0].path).toEqual(['folderId']);
    expectError(await svc.call('GET', '/api/v1/docs', { key: tenant.key }), 400);
  });

  it("is 404 for an unknown folder or another workspace's folder", async () => {
    expectError(await docs({ folderId: '00000000-0000-4000-8000-000000000000' }), 404, /Folder not found/);
    const other = await svc.admin.workspaces.create.mutate({
      orgId: tenant.org.id,
      ownerId: tenant.user.id,
      name: 'Other',
      skipDefaultWorkflow: true,
    });
    const elsewhere = await svc.admin.folders.create.mutate({ workspaceId: other.id, name: 'A' });
    expectError(await docs({ folderId: elsewhere.id }), 404, /Folder not found/);
  });

  it('needs read access to the workspace', async () => {
    const stranger = await createTenant(svc.admin, { plan: 'enterprise' });
    expectError(await docs({}, stranger.key), 403);
  });
});

describe('archiving as GET /api/v1/files shows it', () => {
  it('leaves archived files out of the file list, and a restored file comes back', async () => {
    const names = async () => {
      const res = await svc.call('GET', '/api/v1/files', { key: tenant.key, query: { workspaceId } });
      expectOk(res);
      expect(res.body.data.totalCount).toBe(res.body.data.files.length);
      return (res.body.data.files as { name: string }[]).map((f) => f.name).sort();
    };
    expect(await names()).toEqual(['inA', 'inB', 'top']);
    await svc.admin.files.restore.mutate({ fileId: ids.oldA as string });
    expect(await names()).toEqual(['inA', 'inB', 'oldA', 'top']);
    await svc.admin.files.archive.mutate({ fileId: ids.oldA as string });
    expect(await names()).toEqual(['inA', 'inB', 'top']);
  });
});
