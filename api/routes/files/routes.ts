// /api/v1/files: upload (16, multipart, streamed to storage), list (15), download and delete a
// workspace's files. An upload needs write permission in the workspace its `workspaceId` field
// names; when that field comes before the file part the caller is authorised (and the name checked)
// before a byte is stored, otherwise once the file is in. Whatever refuses the upload, its bytes are
// removed.
import { Readable } from 'node:stream';
import { createRoute } from '@hono/zod-openapi';
import { authorizeResource, authorizeWorkspace, type WorkspaceAccess } from '../../../db/access.ts';
import {
  assertFileNameFree,
  checkFileName,
  createFile,
  deleteFile,
  getFile,
  listFiles,
  MAX_FILE_BYTES,
} from '../../../db/files.ts';
import type { StorageDriver } from '../../../storage/driver.ts';
import { receiveUpload } from '../../../storage/multipart-upload.ts';
import type { ApiDeps } from '../../context.ts';
import { uploadFields } from '../../middleware/validate.ts';
import {
  API_RATE_LIMITED,
  idempotencyHeaders,
  ok,
  okMedia,
  READ_DENIED,
  RESOURCE_WRITE_DENIED,
  WRITE_DENIED,
} from '../../openapi/components.ts';
import { errors, withIdempotency } from '../../openapi/error-answers.ts';
import { contentDisposition } from '../content-disposition.ts';
import { type Guards, Router } from '../router.ts';
import {
  downloadHeaders,
  FILE_400,
  fileDeletedExample,
  fileListExample,
  fileUploadedExample,
  nameTaken,
  READ_400,
  uploadInvalid,
  uploadTooLarge,
} from './examples.ts';
import {
  fileBytes,
  fileDeleted,
  fileList,
  fileParams,
  filesQuery,
  fileUploaded,
  uploadFileFields,
  uploadForm,
} from './schemas.ts';

// Read by the upload itself (router.plain): the multipart body streams to storage as it arrives,
// and its fields are judged as they come, so the Router never parses it.
export const uploadFileRoute = createRoute({
  method: 'post',
  path: '/api/v1/files',
  operationId: 'uploadFile',
  scope: 'files:write' as const,
  tags: ['Files'],
  summary: 'Upload a file',
  description:
    'Streams the file to storage (never held whole in memory). A name already in the workspace (archived files ' +
    'included) is a 409 naming the file that holds it: delete that file (DELETE /api/v1/files/{fileId}) to free the name; ' +
    'over 100 MB or past the storage quota, a 413. Whatever refuses the upload, nothing is kept.',
  request: {
    headers: idempotencyHeaders,
    body: { required: true, content: { 'multipart/form-data': { schema: uploadForm } } },
  },
  responses: {
    200: ok({ description: 'The stored file', schema: fileUploaded, example: fileUploadedExample }, 'api', {
      idempotent: true,
    }),
    ...errors(
      withIdempotency({
        400: uploadInvalid,
        403: WRITE_DENIED,
        404: 'Workspace not found',
        409: nameTaken,
        413: uploadTooLarge,
        429: API_RATE_LIMITED,
      }),
      { metering: 'api', retryAfter: [409] },
    ),
  },
});

export const listFilesRoute = createRoute({
  method: 'get',
  path: '/api/v1/files',
  operationId: 'listFiles',
  scope: 'files:read' as const,
  tags: ['Files'],
  summary: 'List files',
  description: "The workspace's live (not archived) files, newest first.",
  request: { query: filesQuery },
  responses: {
    200: ok({ description: 'The files', schema: fileList, example: fileListExample }, 'api'),
    ...errors(
      { 400: READ_400, 403: READ_DENIED, 404: 'Workspace not found', 429: API_RATE_LIMITED },
      { metering: 'api' },
    ),
  },
});

// The bytes are no JSON: zod-openapi types the answer of a `*/*` response as a plain Response.
export const downloadFileRoute = createRoute({
  method: 'get',
  path: '/api/v1/files/{fileId}/content',
  operationId: 'downloadFile',
  scope: 'files:read' as const,
  tags: ['Files'],
  summary: 'Download a file',
  description: "The file's bytes, streamed, as its media type.",
  request: { params: fileParams, query: filesQuery },
  responses: {
    200: okMedia(
      '*/*',
      { description: "The bytes; Content-Type is the file's media type", schema: fileBytes },
      'api',
      { headers: downloadHeaders },
    ),
    ...errors(
      {
        400: FILE_400,
        403: 'Personal API keys are disabled in this workspace; use a workspace key',
        404: 'File not found',
        429: API_RATE_LIMITED,
      },
      { metering: 'api' },
    ),
  },
});

export const deleteFileRoute = createRoute({
  method: 'delete',
  path: '/api/v1/files/{fileId}',
  operationId: 'deleteFile',
  scope: 'files:write' as const,
  tags: ['Files'],
  summary: 'Delete a file',
  description:
    'Deletes a file of the workspace, archived or not: it leaves the file list and the docs, its name is free ' +
    'for a new upload, its bytes are removed from storage and no longer count in the storage figures ' +
    '(`storage.usedBytes` of GET /api/users/me/usage-limits). Needs write permission; recorded in the audit log ' +
    'as `file.deleted`. There is no undo. (Archiving, through the admin plane, keeps the name and the bytes.)',
  request: { params: fileParams, query: filesQuery },
  responses: {
    200: ok({ description: 'The file is deleted', schema: fileDeleted, example: fileDeletedExample }, 'api'),
    ...errors(
      { 400: FILE_400, 403: RESOURCE_WRITE_DENIED, 404: 'File not found', 429: API_RATE_LIMITED },
      { metering: 'api' },
    ),
  },
});

/** The upload's text fields, judged as the stream reaches them: a 400 names the first bad one. */
export function fileRoutes({ db, log, storage }: ApiDeps & { storage: StorageDriver }, guards: Guards) {
  return new Router(guards, { rateLimited: true })
    .plain(uploadFileRoute, async (c) => {
      const principal = c.get('principal');
      let access: WorkspaceAccess | undefined;
      const upload = await receiveUpload(c.req.raw.body, c.req.header('content-type'), {
        storage,
        maxBytes: MAX_FILE_BYTES,
        fileField: 'file',
        async onFile(fields, name) {
          checkFileName(name);
          if (fields.workspaceId === undefined) return null;
          access = await authorizeWorkspace(
            db,
            principal,
            uploadFields(uploadFileFields, fields).workspaceId,
            'write',
          );
          await assertFileNameFree(db, access.workspace.id, name);
          return access.workspace.id;
        },
      });
      try {
        const { workspaceId } = uploadFields(uploadFileFields, upload.fields);
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
    .openapi(listFilesRoute, async (c) => {
      const { workspaceId } = c.req.valid('query');
      const access = await authorizeWorkspace(db, c.get('principal'), workspaceId, 'read');
      const files = await listFiles(db, access.workspace.id);
      return c.json({ success: true as const, data: { files, totalCount: files.length } }, 200);
    })
    .openapi(downloadFileRoute, async (c) => {
      const { fileId } = c.req.valid('param');
      const { workspaceId } = c.req.valid('query');
      const access = await authorizeResource(db, c.get('principal'), workspaceId, 'read', 'File');
      const file = await getFile(db, { id: fileId, workspaceId: access.workspace.id });
      const { body, size } = await storage.get(file.key);
      return c.body(Readable.toWeb(body) as ReadableStream<Uint8Array>, 200, {
        'Content-Type': file.type,
        'Content-Length': String(size),
        'Content-Disposition': contentDisposition(file.name),
        // Served as the bytes they are: never sniffed into something a browser would run.
        'X-Content-Type-Options': 'nosniff',
      });
    })
    .openapi(deleteFileRoute, async (c) => {
      const { fileId } = c.req.valid('param');
      const { workspaceId } = c.req.valid('query');
      const access = await authorizeResource(db, c.get('principal'), workspaceId, 'write', 'File');
      const file = await deleteFile(db, access.actor, { id: fileId, workspaceId: access.workspace.id });
      // The record is gone (name and quota freed); bytes left behind by a failure here are only logged.
      await storage.delete(file.key).catch((cause: unknown) => {
        log.error('could not delete the bytes of a deleted file', { key: file.key, err: cause });
      });
      return c.json({ success: true as const, data: { message: `File ${file.name} deleted` } }, 200);
    }).app;
}
