// /api/v1/files: upload (16, multipart, streamed to storage), list (15), download and delete a
// workspace's files. An upload needs write permission in the workspace its `workspaceId` field names; when that
// field comes before the file part the caller is authorised (and the name checked) before a byte
// is stored, otherwise once the file is in. Whatever refuses the upload, its bytes are removed.
import { Readable } from 'node:stream';
import { type Context, Hono } from 'hono';
import { z } from 'zod';
import { authorizeResource, authorizeWorkspace, type WorkspaceAccess } from '../../db/access.ts';
import {
  assertFileNameFree,
  checkFileName,
  createFile,
  deleteFile,
  getFile,
  listFiles,
  MAX_FILE_BYTES,
} from '../../db/files.ts';
import { invalidField } from '../../errors.ts';
import type { StorageDriver } from '../../storage/driver.ts';
import { receiveUpload } from '../../storage/multipart-upload.ts';
import type { ApiDeps, ApiEnv } from '../context.ts';
import { queryParams } from '../middleware/validate.ts';

/** The text fields of an upload (others are ignored); the file part is named `file`. */
export const uploadFileFields = z.object({ workspaceId: z.uuid() });
export const listFilesQuery = z.object({ workspaceId: z.uuid() });
export const fileContentQuery = z.object({ workspaceId: z.uuid() });
export const deleteFileQuery = z.object({ workspaceId: z.uuid() });

function parseFields(fields: Record<string, string>) {
  const r = uploadFileFields.safeParse(fields);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw invalidField(String(issue?.path[0] ?? 'workspaceId'), issue?.message ?? 'Invalid', issue?.code);
  }
  return r.data;
}

const uuid = z.uuid();
function fileIdParam(c: Context<ApiEnv>): string {
  const id = c.req.param('fileId');
  if (!uuid.safeParse(id).success) throw invalidField('fileId', 'Must be a UUID', 'invalid_format');
  return id as string;
}

// RFC 6266 / 5987: a plain ASCII fallback for old clients, and the exact name as UTF-8 in filename*.
function contentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\/%]/g, '_');
  const exact = encodeURIComponent(name).replace(
    /['()*]/g,
    (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${exact}`;
}

export function fileRoutes({ db, log, storage }: ApiDeps & { storage: StorageDriver }) {
  return new Hono<ApiEnv>()
    .post('/', async (c) => {
      const principal = c.get('principal');
      let access: WorkspaceAccess | undefined;
      const upload = await receiveUpload(c.req.raw.body, c.req.header('content-type'), {
        storage,
        maxBytes: MAX_FILE_BYTES,
        fileField: 'file',
        async onFile(fields, name) {
          checkFileName(name);
          if (fields.workspaceId === undefined) return null;
          access = await authorizeWorkspace(db, principal, parseFields(fields).workspaceId, 'write');
          await assertFileNameFree(db, access.workspace.id, name);
          return access.workspace.id;
        },
      });
      try {
        const { workspaceId } = parseFields(upload.fields);
        access ??= await authorizeWorkspace(db, principal, workspaceId, 'write');
        const file = await createFile(db, access.actor, {
          workspaceId: access.workspace.id,
          name: upload.file.name,
          size: upload.file.size,
          mediaType: upload.file.type,
          storageKey: upload.file.key,
        });
        return c.json({ success: true, data: { file, message: `File ${file.name} uploaded` } });
      } catch (err) {
        await storage.delete(upload.file.key).catch((cause: unknown) => {
          log.error('could not delete the bytes of a refused upload', { key: upload.file.key, err: cause });
        });
        throw err;
      }
    })
    .get('/', async (c) => {
      const q = queryParams(c, listFilesQuery);
      const access = await authorizeWorkspace(db, c.get('principal'), q.workspaceId, 'read');
      const files = await listFiles(db, access.workspace.id);
      return c.json({ success: true, data: { files, totalCount: files.length } });
    })
    .get('/:fileId/content', async (c) => {
      const id = fileIdParam(c);
      const q = queryParams(c, fileContentQuery);
      const access = await authorizeResource(db, c.get('principal'), q.workspaceId, 'read', 'File');
      const file = await getFile(db, { id, workspaceId: access.workspace.id });
      const { body, size } = await storage.get(file.key);
      return c.body(Readable.toWeb(body) as ReadableStream<Uint8Array>, 200, {
        'Content-Type': file.type,
        'Content-Length': String(size),
        'Content-Disposition': contentDisposition(file.name),
        // Served as the bytes they are: never sniffed into something a browser would run.
        'X-Content-Type-Options': 'nosniff',
      });
    })
    .delete('/:fileId', async (c) => {
      const id = fileIdParam(c);
      const q = queryParams(c, deleteFileQuery);
      const access = await authorizeResource(db, c.get('principal'), q.workspaceId, 'write', 'File');
      const file = await deleteFile(db, access.actor, { id, workspaceId: access.workspace.id });
      // The record is gone (name and quota freed); bytes left behind by a failure here are only logged.
      await storage.delete(file.key).catch((cause: unknown) => {
        log.error('could not delete the bytes of a deleted file', { key: file.key, err: cause });
      });
      return c.json({ success: true, data: { message: `File ${file.name} deleted` } });
    });
}
