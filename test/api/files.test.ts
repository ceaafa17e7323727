// /api/v1/files: uploading (the answer, names that are only names, media types, duplicate names in
// sequence and in a race, who may upload, malformed requests), listing, downloading, deleting, and
// the storage figures and quota. Storage drivers and the size cap are tested in files-storage, docs
// and their folders in files-docs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addPerson,
  createTenant,
  createWorkspace,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';
import {
  digestBody,
  download,
  expectError,
  expectOk,
  fileRows,
  localBlobs,
  multipart,
  sha256,
  upload,
} from './files-helpers.ts';

let svc: TestService;
let tenant: Tenant;

beforeAll(async () => {
  svc = await startTestService();
  tenant = await createTenant(svc.admin, { plan: 'enterprise' });
});
afterAll(() => svc.close());

const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5d0a0b00000000049454e44ae426082',
  'hex',
);

/** A workspace of its own per test, so names and counts do not meet. */
const freshWorkspace = (t: Tenant = tenant) => createWorkspace(svc.admin, t);

async function list(workspaceId: string, key = tenant.key) {
  const res = await svc.call('GET', '/api/v1/files', { key, query: { workspaceId } });
  expectOk(res);
  return res.body.data as { files: { id: string; name: string }[]; totalCount: number };
}

describe('POST /api/v1/files', () => {
  it('stores the file and answers the File with a message', async () => {
    const workspaceId = await freshWorkspace();
    const res = await upload(svc, tenant.key, {
      workspaceId,
      name: 'report.csv',
      type: 'text/csv',
      content: Buffer.from('a,b\n1,2\n'),
    });
    expectOk(res);
    expect(Object.keys(res.body.data).sort()).toEqual(['file', 'message']);
    expect(res.body.data.message).toBe('File report.csv uploaded');
    const file = res.body.data.file;
    expect(Object.keys(file).sort()).toEqual(
      [
        'archivedAt',
        'folderId',
        'id',
        'key',
        'name',
        'size',
        'type',
        'uploadedAt',
        'uploadedBy',
        'workspaceId',
      ].sort(),
    );
    expect(file).toMatchObject({
      name: 'report.csv',
      size: 8,
      type: 'text/csv',
      uploadedBy: tenant.user.id,
      workspaceId,
      folderId: null,
      archivedAt: null,
    });
    expect(new Date(file.uploadedAt).toISOString()).toBe(file.uploadedAt);
    // The key is the service's own: the workspace, then a fresh uuid; never the file's name.
    expect(file.key).toMatch(new RegExp(`^${workspaceId}/[0-9a-f-]{36}$`));
    expect(localBlobs(svc)).toContain(file.key);
  });

  it('accepts the workspaceId after the file part (the key then starts with pending/)', async () => {
    const workspaceId = await freshWorkspace();
    const res = await upload(svc, tenant.key, { workspaceId, name: 'late.txt', order: 'fileFirst' });
    expectOk(res);
    expect(res.body.data.file).toMatchObject({ name: 'late.txt', workspaceId, size: 5 });
    expect(res.body.data.file.key).toMatch(/^pending\/[0-9a-f-]{36}$/);
    expect((await list(workspaceId)).files.map((f) => f.name)).toEqual(['late.txt']);
  });

  it.each([
    ['unicode', 'Résumé – 履歴書 🗂️.pdf'],
    ['slashes', 'reports/2024/q1.txt'],
    ['dot-dot segments', '../../../etc/passwd'],
    ['a bare ..', '..'],
    ['backslashes', '..\\..\\windows\\win.ini'],
    ['quotes and percent signs', 'say "hi" 100%.txt'],
  ])('keeps a name with %s as a name, never as a path', async (_what, name) => {
    const workspaceId = await freshWorkspace();
    const content = Buffer.from(`content of ${name}`);
    const res = await upload(svc, tenant.key, { workspaceId, name, content });
    expectOk(res);
    const file = res.body.data.file;
    expect(file.name).toBe(name);
    expect(file.key).toMatch(new RegExp(`^${workspaceId}/[0-9a-f-]{36}$`));
    // Storage holds it under its key only: nothing named after the file exists anywhere.
    const blobs = localBlobs(svc);
    expect(blobs).toContain(file.key);
    expect(blobs.every((b) => /^[0-9a-z-]+\/[0-9a-f-]{36}$/.test(b))).toBe(true);
    expect((await list(workspaceId)).files.map((f) => f.name)).toEqual([name]);
    const got = await download(svc, tenant.key, file.id, workspaceId);
    expect(got.status).toBe(200);
    expect(Buffer.from(await got.arrayBuffer())).toEqual(content);
    const disposition = got.headers.get('content-disposition') as string;
    expect(disposition).toMatch(/^attachment; filename="[\x20-\x7e]*"; filename\*=UTF-8''/);
    const encoded = disposition.split("filename*=UTF-8''")[1] as string;
    expect(encoded).toMatch(/^[A-Za-z0-9!#$&+.^_`|~%-]+$/);
    expect(decodeURIComponent(encoded)).toBe(name);
  });

  it('refuses names that cannot be shown: control characters, blank', async () => {
    const workspaceId = await freshWorkspace();
    for (const name of ['tab\there.txt', '   ']) {
      expectError(await upload(svc, tenant.key, { workspaceId, name }), 400);
    }
    expect(await fileRows(svc, workspaceId)).toEqual([]);
  });

  describe('media type', () => {
    it('keeps the type the part declares', async () => {
      const workspaceId = await freshWorkspace();
      const res = await upload(svc, tenant.key, { workspaceId, name: 'x.json', type: 'application/json' });
      expect(res.body.data.file.type).toBe('application/json');
    });

    it('sniffs the bytes when the part says application/octet-stream', async () => {
      const workspaceId = await freshWorkspace();
      const res = await upload(svc, tenant.key, {
        workspaceId,
        name: 'pixel',
        type: 'application/octet-stream',
        content: PNG,
      });
      expect(res.body.data.file.type).toBe('image/png');
    });

    it('sniffs the bytes when the part has no Content-Type', async () => {
      const workspaceId = await freshWorkspace();
      const png = await upload(svc, tenant.key, { workspaceId, name: 'p', type: null, content: PNG });
      expect(png.body.data.file.type).toBe('image/png');
      const text = await upload(svc, tenant.key, { workspaceId, name: 't', type: null });
      expect(text.body.data.file.type).toBe('text/plain');
    });

    it('falls back to application/octet-stream when nothing is recognised', async () => {
      const workspaceId = await freshWorkspace();
      const res = await upload(svc, tenant.key, {
        workspaceId,
        name: 'blob',
        type: 'application/octet-stream',
        content: Buffer.from([1, 2, 3, 4]),
      });
      expect(res.body.data.file.type).toBe('application/octet-stream');
    });
  });

  describe('a name already in the workspace', () => {
    it('is refused with 409, whichever field comes first, and nothing more is stored', async () => {
      const workspaceId = await freshWorkspace();
      const first = await upload(svc, tenant.key, { workspaceId, name: 'twice.txt' });
      expectOk(first);
      const blobs = localBlobs(svc).length;
      for (const order of ['fieldsFirst', 'fileFirst'] as const) {
        expectError(
          await upload(svc, tenant.key, {
            workspaceId,
            name: 'twice.txt',
            order,
            content: { size: 100_000 },
          }),
          409,
          new RegExp(
            `^A file named "twice\\.txt" already exists in this workspace \\(id ${first.body.data.file.id}\\): ` +
              `delete it first with DELETE /api/v1/files/${first.body.data.file.id}$`,
          ),
        );
      }
      expect(await fileRows(svc, workspaceId)).toHaveLength(1);
      expect(localBlobs(svc)).toHaveLength(blobs);
    });

    it('is compared exactly: another case is another name', async () => {
      const workspaceId = await freshWorkspace();
      expectOk(await upload(svc, tenant.key, { workspaceId, name: 'Case.txt' }));
      expectOk(await upload(svc, tenant.key, { workspaceId, name: 'case.txt' }));
    });

    it('is free in another workspace', async () => {
      const a = await freshWorkspace();
      const b = await freshWorkspace();
      expectOk(await upload(svc, tenant.key, { workspaceId: a, name: 'same.txt' }));
      expectOk(await upload(svc, tenant.key, { workspaceId: b, name: 'same.txt' }));
    });

    it.each(['fieldsFirst', 'fileFirst'] as const)(
      'lets exactly one of many racing uploads of one name win (%s); the losers keep nothing',
      async (order) => {
        const workspaceId = await freshWorkspace();
        const blobs = localBlobs(svc).length;
        const results = await Promise.all(
          Array.from({ length: 6 }, (_, i) =>
            upload(svc, tenant.key, {
              workspaceId,
              name: 'race.bin',
              order,
              content: Buffer.alloc(200_000, i),
            }),
          ),
        );
        const statuses = results.map((r) => r.status).sort();
        expect(statuses).toEqual([200, 409, 409, 409, 409, 409]);
        // Each loser is told which file won the name.
        const winnerId = results.find((r) => r.status === 200)?.body.data.file.id;
        for (const r of results.filter((r) => r.status === 409)) {
          expect(r.body.error).toContain(
            `(id ${winnerId}): delete it first with DELETE /api/v1/files/${winnerId}`,
          );
        }
        const rows = await fileRows(svc, workspaceId);
        expect(rows).toHaveLength(1);
        expect(localBlobs(svc)).toHaveLength(blobs + 1);
        expect(localBlobs(svc)).toContain(rows[0]?.storage_key);
        // The winner's bytes are the ones kept.
        const winner = results.find((r) => r.status === 200)?.body.data.file;
        const got = await download(svc, tenant.key, winner.id, workspaceId);
        const fill = results.indexOf(results.find((r) => r.status === 200) as (typeof results)[number]);
        expect(Buffer.from(await got.arrayBuffer())).toEqual(Buffer.alloc(200_000, fill));
      },
    );
  });

  describe('who may upload', () => {
    it('refuses a reader with 403 and stores nothing, whichever field comes first', async () => {
      const workspaceId = tenant.workspace.id;
      const reader = await addPerson(svc.admin, tenant, { permission: 'read' });
      const before = localBlobs(svc).length;
      for (const order of ['fieldsFirst', 'fileFirst'] as const) {
        const res = await upload(svc, reader.key, { workspaceId, name: `reader-${order}.txt`, order });
        expectError(res, 403, /write permission/);
      }
      expect(localBlobs(svc)).toHaveLength(before);
      expect((await fileRows(svc, workspaceId)).map((r) => r.name)).not.toContain('reader-fileFirst.txt');
    });

    it("refuses another organization's workspace with 403, and an unknown one with 404", async () => {
      const other = await createTenant(svc.admin, { plan: 'enterprise' });
      const before = localBlobs(svc).length;
      expectError(await upload(svc, other.key, { workspaceId: tenant.workspace.id, name: 'x.txt' }), 403);
      expectError(
        await upload(svc, other.key, { workspaceId: '00000000-0000-4000-8000-000000000000', name: 'x.txt' }),
        404,
      );
      expect(localBlobs(svc)).toHaveLength(before);
    });

    it('accepts a workspace key of that workspace (uploadedBy null) and refuses one of another', async () => {
      const workspaceId = await freshWorkspace();
      const { key } = await svc.admin.keys.create.mutate({ type: 'workspace', workspaceId, name: 'bot' });
      const res = await upload(svc, key, { workspaceId, name: 'bot.txt' });
      expectOk(res);
      expect(res.body.data.file.uploadedBy).toBeNull();
      expectError(await upload(svc, key, { workspaceId: tenant.workspace.id, name: 'bot.txt' }), 403);
    });

    it('needs an API key', async () => {
      const { body, contentType } = multipart([{ field: 'workspaceId', value: tenant.workspace.id }]);
      const res = await svc.app.request(
        new Request('http://api.test/api/v1/files', {
          method: 'POST',
          headers: { 'Content-Type': contentType },
          body,
          duplex: 'half',
        } as RequestInit),
      );
      expect(res.status).toBe(401);
    });
  });

  describe('malformed requests are 400 and keep nothing', () => {
    let workspaceId: string;
    let blobs: number;
    beforeAll(async () => {
      workspaceId = await freshWorkspace();
    });
    const expectNothingKept = async () => {
      expect(await fileRows(svc, workspaceId)).toEqual([]);
      expect(localBlobs(svc)).toHaveLength(blobs);
    };
    const raw = async (body: string, contentType: string) => {
      const res = await svc.app.request('http://api.test/api/v1/files', {
        method: 'POST',
        headers: { 'X-API-Key': tenant.key, 'Content-Type': contentType },
        body,
      });
      return { status: res.status, headers: res.headers, body: await res.json() };
    };

    it('without the file part', async () => {
      blobs = localBlobs(svc).length;
      expectError(
        await upload(svc, tenant.key, { parts: [{ field: 'workspaceId', value: workspaceId }] }),
        400,
        /file part is missing/,
      );
      await expectNothingKept();
    });

    it('without workspaceId, after the file was streamed', async () => {
      blobs = localBlobs(svc).length;
      const res = await upload(svc, tenant.key, { name: 'orphan.txt', content: { size: 50_000 } });
      expectError(res, 400);
      expect(res.body.details).toEqual([expect.objectContaining({ path: ['workspaceId'] })]);
      await expectNothingKept();
    });

    it('with a workspaceId that is not a uuid, before or after the file', async () => {
      blobs = localBlobs(svc).length;
      for (const order of ['fieldsFirst', 'fileFirst'] as const) {
        const res = await upload(svc, tenant.key, { workspaceId: 'nope', name: 'a.txt', order });
        expectError(res, 400);
        expect(res.body.details[0].path).toEqual(['workspaceId']);
      }
      await expectNothingKept();
    });

    it('with workspaceId given twice', async () => {
      blobs = localBlobs(svc).length;
      const res = await upload(svc, tenant.key, {
        parts: [
          { field: 'workspaceId', value: workspaceId },
          { file: 'file', name: 'a.txt', content: Buffer.from('x') },
          { field: 'workspaceId', value: workspaceId },
        ],
      });
      expectError(res, 400, /once/);
      await expectNothingKept();
    });

    it('with two file parts', async () => {
      blobs = localBlobs(svc).length;
      const res = await upload(svc, tenant.key, {
        parts: [
          { field: 'workspaceId', value: workspaceId },
          { file: 'file', name: 'a.txt', content: Buffer.from('x') },
          { file: 'file', name: 'b.txt', content: Buffer.from('y') },
        ],
      });
      expectError(res, 400, /one file part/);
      await expectNothingKept();
    });

    it('with the file under another part name', async () => {
      blobs = localBlobs(svc).length;
      const res = await upload(svc, tenant.key, {
        parts: [
          { field: 'workspaceId', value: workspaceId },
          { file: 'document', name: 'a.txt', content: Buffer.from('x') },
        ],
      });
      expectError(res, 400, /named file/);
      await expectNothingKept();
    });

    it('with a body cut off in the middle of the file', async () => {
      blobs = localBlobs(svc).length;
      const boundary = 'cut';
      const body =
        `--${boundary}\r\nContent-Disposition: form-data; name="workspaceId"\r\n\r\n${workspaceId}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.txt"\r\n\r\n` +
        'x'.repeat(70_000);
      expectError(await raw(body, `multipart/form-data; boundary=${boundary}`), 400, /Malformed/);
      await expectNothingKept();
    });

    it('that is JSON, or multipart without a boundary', async () => {
      blobs = localBlobs(svc).length;
      expectError(await raw(JSON.stringify({ workspaceId }), 'application/json'), 400, /multipart/);
      expectError(await raw('--x--', 'multipart/form-data'), 400, /boundary/);
      await expectNothingKept();
    });
  });

  it('records file.uploaded in the audit log, naming the uploader', async () => {
    const workspaceId = await freshWorkspace();
    const res = await upload(svc, tenant.key, { workspaceId, name: 'audited.txt' });
    const audit = await svc.call('GET', '/api/v1/audit-logs', {
      key: tenant.key,
      query: { workspaceId, action: 'file.uploaded', resourceId: res.body.data.file.id },
    });
    expect(audit.body.data).toEqual([
      expect.objectContaining({ action: 'file.uploaded', actorId: tenant.user.id, resourceType: 'file' }),
    ]);
  });
});

describe('GET /api/v1/files', () => {
  it('lists the workspace files newest first, with totalCount', async () => {
    const workspaceId = await freshWorkspace();
    for (const name of ['one.txt', 'two.txt', 'three.txt']) {
      expectOk(await upload(svc, tenant.key, { workspaceId, name }));
    }
    const data = await list(workspaceId);
    expect(data.totalCount).toBe(3);
    expect(data.files.map((f) => f.name)).toEqual(['three.txt', 'two.txt', 'one.txt']);
    expect(Object.keys(data)).toEqual(['files', 'totalCount']);
  });

  it('is empty for a workspace without files; needs read access', async () => {
    const workspaceId = await freshWorkspace();
    expect(await list(workspaceId)).toEqual({ files: [], totalCount: 0 });
    const other = await createTenant(svc.admin, { plan: 'enterprise' });
    const res = await svc.call('GET', '/api/v1/files', { key: other.key, query: { workspaceId } });
    expectError(res, 403);
    expectError(await svc.call('GET', '/api/v1/files', { key: tenant.key, query: {} }), 400);
  });
});

describe('GET /api/v1/files/{id}/content', () => {
  it('streams the bytes back with their type, length and name', async () => {
    const workspaceId = await freshWorkspace();
    const content = { size: 3 * 1024 * 1024 + 17 };
    const up = await upload(svc, tenant.key, {
      workspaceId,
      name: 'data.bin',
      type: 'application/x-thing',
      content,
    });
    const res = await download(svc, tenant.key, up.body.data.file.id, workspaceId);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-thing');
    expect(res.headers.get('content-length')).toBe(String(content.size));
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="data.bin"; filename*=UTF-8''data.bin`,
    );
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await digestBody(res)).toEqual({ sha256: sha256(content), size: content.size });
  });

  it("is 404 for another workspace's file, or for a workspace out of reach", async () => {
    const a = await freshWorkspace();
    const b = await freshWorkspace();
    const up = await upload(svc, tenant.key, { workspaceId: a, name: 'a.txt' });
    const id = up.body.data.file.id;
    expect((await download(svc, tenant.key, id, b)).status).toBe(404);
    const other = await createTenant(svc.admin, { plan: 'enterprise' });
    const res = await download(svc, other.key, id, a);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'File not found' });
    expect((await download(svc, tenant.key, 'not-a-uuid', a)).status).toBe(400);
  });
});

describe('DELETE /api/v1/files/{id}', () => {
  const remove = (id: string, workspaceId: string, key = tenant.key) =>
    svc.call('DELETE', `/api/v1/files/${id}`, { key, query: { workspaceId } });

  it('deletes the file: gone from the list, the download and storage; its name is free again', async () => {
    const workspaceId = await freshWorkspace();
    const up = await upload(svc, tenant.key, { workspaceId, name: 'old.txt', content: Buffer.from('v1') });
    const kept = await upload(svc, tenant.key, { workspaceId, name: 'kept.txt' });
    const { id, key } = up.body.data.file;
    expect(localBlobs(svc)).toContain(key);
    const res = await remove(id, workspaceId);
    expectOk(res);
    expect(res.body).toEqual({ success: true, data: { message: 'File old.txt deleted' } });
    expect((await list(workspaceId)).files.map((f) => f.name)).toEqual(['kept.txt']);
    expect((await download(svc, tenant.key, id, workspaceId)).status).toBe(404);
    expect(localBlobs(svc)).not.toContain(key);
    expect(localBlobs(svc)).toContain(kept.body.data.file.key);
    expectError(await remove(id, workspaceId), 404, /^File not found$/);
    // The name takes a new upload, with its own bytes.
    const again = await upload(svc, tenant.key, { workspaceId, name: 'old.txt', content: Buffer.from('v2') });
    expectOk(again);
    expect(again.body.data.file.id).not.toBe(id);
    const got = await download(svc, tenant.key, again.body.data.file.id, workspaceId);
    expect(await got.text()).toBe('v2');
  });

  it('is the way out of the 409, for an archived file too', async () => {
    const workspaceId = await freshWorkspace();
    const up = await upload(svc, tenant.key, { workspaceId, name: 'plan.md' });
    const id = up.body.data.file.id;
    await svc.admin.files.archive.mutate({ fileId: id });
    const refused = await upload(svc, tenant.key, { workspaceId, name: 'plan.md' });
    expectError(
      refused,
      409,
      new RegExp(`\\(id ${id}, archived\\): delete it first with DELETE /api/v1/files/${id}$`),
    );
    expectOk(await remove(id, workspaceId));
    const docs = await svc.call('GET', '/api/v1/docs', {
      key: tenant.key,
      query: { workspaceId, scope: 'all' },
    });
    expect(docs.body.data.totalCount).toBe(0);
    expectOk(await upload(svc, tenant.key, { workspaceId, name: 'plan.md' }));
  });

  it('records file.deleted in the audit log, naming who deleted it', async () => {
    const workspaceId = await freshWorkspace();
    const up = await upload(svc, tenant.key, { workspaceId, name: 'gone.txt' });
    expectOk(await remove(up.body.data.file.id, workspaceId));
    const audit = await svc.call('GET', '/api/v1/audit-logs', {
      key: tenant.key,
      query: { workspaceId, action: 'file.deleted', resourceId: up.body.data.file.id },
    });
    expect(audit.body.data).toEqual([
      expect.objectContaining({
        action: 'file.deleted',
        actorId: tenant.user.id,
        resourceType: 'file',
        metadata: expect.objectContaining({ name: 'gone.txt', size: 5 }),
      }),
    ]);
  });

  it('needs write permission; a workspace key of that workspace may', async () => {
    const t = await createTenant(svc.admin, { plan: 'enterprise' });
    const workspaceId = t.workspace.id;
    const reader = await addPerson(svc.admin, t, { permission: 'read' });
    const writer = await addPerson(svc.admin, t, { permission: 'write' });
    const a = await upload(svc, t.key, { workspaceId, name: 'a.txt' });
    const b = await upload(svc, t.key, { workspaceId, name: 'b.txt' });
    expectError(await remove(a.body.data.file.id, workspaceId, reader.key), 403, /write permission/);
    expectOk(await remove(a.body.data.file.id, workspaceId, writer.key));
    const { key } = await svc.admin.keys.create.mutate({ type: 'workspace', workspaceId, name: 'ci' });
    expectOk(await remove(b.body.data.file.id, workspaceId, key));
    expect(await fileRows(svc, workspaceId)).toEqual([]);
  });

  it("is 404 for another workspace's or organization's file, and deletes nothing", async () => {
    const a = await freshWorkspace();
    const b = await freshWorkspace();
    const up = await upload(svc, tenant.key, { workspaceId: a, name: 'mine.txt' });
    const id = up.body.data.file.id;
    expectError(await remove(id, b), 404, /^File not found$/);
    const other = await createTenant(svc.admin, { plan: 'enterprise' });
    expectError(await remove(id, a, other.key), 404, /^File not found$/);
    expectError(await remove(id, other.workspace.id, other.key), 404, /^File not found$/);
    expect((await fileRows(svc, a)).map((r) => r.name)).toEqual(['mine.txt']);
    expect(localBlobs(svc)).toContain(up.body.data.file.key);
  });

  it('refuses a fileId that is not a UUID and a missing workspaceId with 400', async () => {
    const workspaceId = await freshWorkspace();
    const up = await upload(svc, tenant.key, { workspaceId, name: 'x.txt' });
    expectError(await remove('not-a-uuid', workspaceId), 400);
    const res = await svc.call('DELETE', `/api/v1/files/${up.body.data.file.id}`, { key: tenant.key });
    expectError(res, 400);
    expect(res.body.details[0].path).toEqual(['workspaceId']);
    expect(await fileRows(svc, workspaceId)).toHaveLength(1);
  });
});

describe('storage figures and quota', () => {
  const usage = async (key: string) => {
    const res = await svc.call('GET', '/api/users/me/usage-limits', { key });
    expect(res.status).toBe(200);
    return res.body.storage as { usedBytes: number; limitBytes: number; percentUsed: number };
  };

  it('reports the bytes of the files billed to the caller, archived ones included', async () => {
    const free = await createTenant(svc.admin, { plan: 'free' });
    expect((await usage(free.key)).usedBytes).toBe(0);
    const a = await upload(svc, free.key, {
      workspaceId: free.workspace.id,
      name: 'a',
      content: { size: 1000 },
    });
    await upload(svc, free.key, { workspaceId: free.workspace.id, name: 'b', content: { size: 234 } });
    expect(await usage(free.key)).toEqual({ usedBytes: 1234, limitBytes: 5_000_000_000, percentUsed: 0 });
    await svc.admin.files.archive.mutate({ fileId: a.body.data.file.id });
    expect((await usage(free.key)).usedBytes).toBe(1234);
    // Deleted files are not counted.
    const del = await svc.call('DELETE', `/api/v1/files/${a.body.data.file.id}`, {
      key: free.key,
      query: { workspaceId: free.workspace.id },
    });
    expectOk(del);
    expect((await usage(free.key)).usedBytes).toBe(234);
  });

  it('gives the bytes of a deleted file back to the quota', async () => {
    const t = await createTenant(svc.admin, { plan: 'free' });
    await svc.admin.quotas.set.mutate({ orgId: t.org.id, storageLimitBytes: 1000 });
    const workspaceId = t.workspace.id;
    const a = await upload(svc, t.key, { workspaceId, name: 'a', content: { size: 800 } });
    expectError(await upload(svc, t.key, { workspaceId, name: 'b', content: { size: 800 } }), 413);
    expectOk(
      await svc.call('DELETE', `/api/v1/files/${a.body.data.file.id}`, {
        key: t.key,
        query: { workspaceId },
      }),
    );
    expectOk(await upload(svc, t.key, { workspaceId, name: 'b', content: { size: 800 } }));
    expect((await usage(t.key)).usedBytes).toBe(800);
  });

  it('counts an organization on team or enterprise as one, and a user on free or pro apart', async () => {
    const team = await createTenant(svc.admin, { plan: 'team' });
    const teammate = await addPerson(svc.admin, team, { permission: 'write' });
    await upload(svc, team.key, { workspaceId: team.workspace.id, name: 'x', content: { size: 300 } });
    await upload(svc, teammate.key, { workspaceId: team.workspace.id, name: 'y', content: { size: 200 } });
    expect((await usage(team.key)).usedBytes).toBe(500);
    expect((await usage(teammate.key)).usedBytes).toBe(500);

    // The same owner in a free organization: their own files there, not the team's.
    const freeOrg = await svc.admin.orgs.create.mutate({ name: 'Solo', plan: 'free' });
    const solo = await svc.admin.users.create.mutate({
      name: 'Solo',
      email: `solo-${Date.now()}@example.com`,
    });
    await svc.admin.members.add.mutate({ orgId: freeOrg.id, userId: solo.id, role: 'owner' });
    const ws = await svc.admin.workspaces.create.mutate({
      orgId: freeOrg.id,
      ownerId: solo.id,
      name: 'Solo',
      skipDefaultWorkflow: true,
    });
    const { key } = await svc.admin.keys.create.mutate({ type: 'personal', userId: solo.id, name: 'k' });
    await upload(svc, key, { workspaceId: ws.id, name: 'z', content: { size: 70 } });
    expect((await usage(key)).usedBytes).toBe(70);
    expect((await usage(team.key)).usedBytes).toBe(500);
  });

  it('refuses with 413 an upload that would pass the quota, keeping nothing; up to it is fine', async () => {
    const t = await createTenant(svc.admin, { plan: 'free' });
    await svc.admin.quotas.set.mutate({ orgId: t.org.id, storageLimitBytes: 1000 });
    const workspaceId = t.workspace.id;
    expectOk(await upload(svc, t.key, { workspaceId, name: 'a', content: { size: 600 } }));
    const before = localBlobs(svc).length;
    const over = await upload(svc, t.key, { workspaceId, name: 'b', content: { size: 401 } });
    expectError(over, 413, /Storage limit/);
    expect(localBlobs(svc)).toHaveLength(before);
    expect((await fileRows(svc, workspaceId)).map((r) => r.name)).toEqual(['a']);
    expectOk(await upload(svc, t.key, { workspaceId, name: 'c', content: { size: 400 } }));
    expect(await usage(t.key)).toEqual({ usedBytes: 1000, limitBytes: 1000, percentUsed: 100 });
  });

  it('lets only as many racing uploads in as the quota holds', async () => {
    const t = await createTenant(svc.admin, { plan: 'team' });
    await svc.admin.quotas.set.mutate({ orgId: t.org.id, storageLimitBytes: 1000 });
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        upload(svc, t.key, { workspaceId: t.workspace.id, name: `r${i}`, content: { size: 400 } }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 413, 413, 413]);
    expect((await usage(t.key)).usedBytes).toBe(800);
    expect(await fileRows(svc, t.workspace.id)).toHaveLength(2);
  });
});
