// Admin plane: folders (create, nested, unique names beside siblings) and a file's place and
// lifecycle (move, archive, restore), each recorded in the audit log as the admin plane.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectOk, upload } from '../api/files-helpers.ts';
import {
  adminError,
  createTenant,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';

const NOWHERE = '00000000-0000-4000-8000-000000000000';

let svc: TestService;
let tenant: Tenant;

beforeAll(async () => {
  svc = await startTestService();
  tenant = await createTenant(svc.admin, { plan: 'enterprise' });
});
afterAll(() => svc.close());

async function newWorkspace() {
  const ws = await svc.admin.workspaces.create.mutate({
    orgId: tenant.org.id,
    ownerId: tenant.user.id,
    name: `ws ${Math.random()}`,
    skipDefaultWorkflow: true,
  });
  return ws.id as string;
}

async function newFile(workspaceId: string, name = 'f.txt') {
  const res = await upload(svc, tenant.key, { workspaceId, name });
  expectOk(res);
  return res.body.data.file as { id: string; name: string; folderId: string | null };
}

async function audits(resourceId: string) {
  return svc.db.query<{ action: string; actor_id: string | null; actor_name: string; resource_type: string }>(
    'select action, actor_id, actor_name, resource_type from audit_logs where resource_id = $1 order by created_at, action',
    [resourceId],
  );
}

describe('folders.create', () => {
  it('creates a folder at the top of a workspace, and one inside it', async () => {
    const workspaceId = await newWorkspace();
    const top = await svc.admin.folders.create.mutate({ workspaceId, name: 'Reports' });
    expect(top).toMatchObject({ workspaceId, name: 'Reports', parentId: null, createdBy: null });
    expect(new Date(top.createdAt).toISOString()).toBe(top.createdAt);
    const inner = await svc.admin.folders.create.mutate({ workspaceId, name: '2024', parentId: top.id });
    expect(inner).toMatchObject({ workspaceId, name: '2024', parentId: top.id });
    expect(await audits(top.id)).toEqual([
      { action: 'folder.created', actor_id: null, actor_name: 'admin plane', resource_type: 'folder' },
    ]);
  });

  it('refuses a second folder of one name beside the first with CONFLICT; elsewhere it is fine', async () => {
    const workspaceId = await newWorkspace();
    const a = await svc.admin.folders.create.mutate({ workspaceId, name: 'Same' });
    expect(await adminError(svc.admin.folders.create.mutate({ workspaceId, name: 'Same' }))).toMatchObject({
      code: 'CONFLICT',
      httpStatus: 409,
    });
    await svc.admin.folders.create.mutate({ workspaceId, name: 'Same', parentId: a.id });
    const again = svc.admin.folders.create.mutate({ workspaceId, name: 'Same', parentId: a.id });
    expect((await adminError(again)).code).toBe('CONFLICT');
    await svc.admin.folders.create.mutate({ workspaceId: await newWorkspace(), name: 'Same' });
  });

  it('refuses an unknown workspace, or a parent in another workspace, with NOT_FOUND', async () => {
    const workspaceId = await newWorkspace();
    const elsewhere = await svc.admin.folders.create.mutate({ workspaceId: await newWorkspace(), name: 'X' });
    expect(
      await adminError(svc.admin.folders.create.mutate({ workspaceId, name: 'Y', parentId: elsewhere.id })),
    ).toMatchObject({ code: 'NOT_FOUND', message: 'Folder not found' });
    expect(
      await adminError(svc.admin.folders.create.mutate({ workspaceId: NOWHERE, name: 'Y' })),
    ).toMatchObject({ code: 'NOT_FOUND', message: 'Workspace not found' });
  });

  it('refuses a blank name or one with control characters with BAD_REQUEST', async () => {
    const workspaceId = await newWorkspace();
    for (const name of ['', '   ', 'a\nb']) {
      expect((await adminError(svc.admin.folders.create.mutate({ workspaceId, name }))).code).toBe(
        'BAD_REQUEST',
      );
    }
  });
});

describe('files.move', () => {
  it('moves a file into a folder and back to the top, recording file.moved', async () => {
    const workspaceId = await newWorkspace();
    const folder = await svc.admin.folders.create.mutate({ workspaceId, name: 'In' });
    const file = await newFile(workspaceId);
    const moved = await svc.admin.files.move.mutate({ fileId: file.id, folderId: folder.id });
    expect(moved).toMatchObject({ id: file.id, name: file.name, folderId: folder.id });
    const back = await svc.admin.files.move.mutate({ fileId: file.id, folderId: null });
    expect(back.folderId).toBeNull();
    expect((await audits(file.id)).map((a) => a.action)).toEqual([
      'file.uploaded',
      'file.moved',
      'file.moved',
    ]);
  });

  it("refuses another workspace's folder or an unknown one, and an unknown file, with NOT_FOUND", async () => {
    const workspaceId = await newWorkspace();
    const file = await newFile(workspaceId);
    const elsewhere = await svc.admin.folders.create.mutate({ workspaceId: await newWorkspace(), name: 'X' });
    for (const folderId of [elsewhere.id, NOWHERE]) {
      expect(await adminError(svc.admin.files.move.mutate({ fileId: file.id, folderId }))).toMatchObject({
        code: 'NOT_FOUND',
        message: 'Folder not found',
      });
    }
    expect(await adminError(svc.admin.files.move.mutate({ fileId: NOWHERE, folderId: null }))).toMatchObject({
      code: 'NOT_FOUND',
      message: 'File not found',
    });
  });

  it('leaves a file at the top of its workspace when its folder is deleted', async () => {
    const workspaceId = await newWorkspace();
    const folder = await svc.admin.folders.create.mutate({ workspaceId, name: 'Doomed' });
    const file = await newFile(workspaceId);
    await svc.admin.files.move.mutate({ fileId: file.id, folderId: folder.id });
    await svc.db.query('delete from folders where id = $1', [folder.id]);
    const [row] = await svc.db.query<{ folder_id: string | null }>(
      'select folder_id from files where id = $1',
      [file.id],
    );
    expect(row?.folder_id).toBeNull();
  });
});

describe('files.archive and files.restore', () => {
  it('archives and restores a file, recording each once', async () => {
    const workspaceId = await newWorkspace();
    const file = await newFile(workspaceId);
    const archived = await svc.admin.files.archive.mutate({ fileId: file.id });
    expect(archived.id).toBe(file.id);
    expect(new Date(archived.archivedAt as string).toISOString()).toBe(archived.archivedAt);
    // Archiving again changes nothing and records nothing.
    expect(await svc.admin.files.archive.mutate({ fileId: file.id })).toEqual(archived);
    const restored = await svc.admin.files.restore.mutate({ fileId: file.id });
    expect(restored).toEqual({ ...archived, archivedAt: null });
    expect(await svc.admin.files.restore.mutate({ fileId: file.id })).toEqual(restored);
    expect((await audits(file.id)).map((a) => a.action)).toEqual([
      'file.uploaded',
      'file.archived',
      'file.restored',
    ]);
  });

  it('keeps the name of an archived file reserved: an upload of that name is 409', async () => {
    const workspaceId = await newWorkspace();
    const file = await newFile(workspaceId, 'reserved.txt');
    await svc.admin.files.archive.mutate({ fileId: file.id });
    expectError(await upload(svc, tenant.key, { workspaceId, name: 'reserved.txt' }), 409);
    await svc.admin.files.restore.mutate({ fileId: file.id });
  });

  it('refuses an unknown file with NOT_FOUND and a malformed id with BAD_REQUEST', async () => {
    expect((await adminError(svc.admin.files.archive.mutate({ fileId: NOWHERE }))).code).toBe('NOT_FOUND');
    expect((await adminError(svc.admin.files.restore.mutate({ fileId: NOWHERE }))).code).toBe('NOT_FOUND');
    expect((await adminError(svc.admin.files.archive.mutate({ fileId: 'x' }))).code).toBe('BAD_REQUEST');
  });
});
