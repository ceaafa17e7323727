// OpenAPI: /api/v1/files: upload (16), list (15), download and delete a workspace's files; and
// /api/v1/docs (14), the same files by folder and lifecycle scope.
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import type { FileRecord } from '../../db/files.ts';
import { listDocsQuery } from '../routes/docs.ts';
import { deleteFileQuery, fileContentQuery, listFilesQuery, uploadFileFields } from '../routes/files.ts';
import {
  API_RATE_LIMITED,
  annotateFields,
  EX,
  envelope,
  errors,
  idempotencyHeaders,
  invalid,
  ok,
  okMedia,
  READ_DENIED,
  RESOURCE_WRITE_DENIED,
  WRITE_DENIED,
  withIdempotency,
} from './components.ts';

const fileSchema = z
  .object({
    id: z.uuid(),
    name: z
      .string()
      .meta({ description: 'Unique in the workspace; kept exactly as given (a name, never a path)' }),
    size: z.number().int().meta({ description: 'Bytes' }),
    type: z
      .string()
      .meta({ description: 'Media type: as sent, or sniffed when sent as application/octet-stream' }),
    key: z.string().meta({ description: 'Storage key, made by the service: `<workspaceId>/<uuid>`' }),
    uploadedBy: z.uuid().nullable().meta({ description: 'The uploading user; null for a workspace key' }),
    uploadedAt: z.iso.datetime(),
    workspaceId: z.uuid(),
    folderId: z.uuid().nullable(),
    archivedAt: z.iso.datetime().nullable().meta({ description: 'Set when archived' }),
  })
  .meta({ id: 'File' }) satisfies z.ZodType<FileRecord>;

const fileExample = {
  id: EX.fileId,
  name: 'report.pdf',
  size: 48213,
  type: 'application/pdf',
  key: `${EX.workspaceId}/${EX.fileId}`,
  uploadedBy: EX.userId,
  uploadedAt: EX.time,
  workspaceId: EX.workspaceId,
  folderId: null,
  archivedAt: null,
};

const fileList = envelope({ files: z.array(fileSchema), totalCount: z.number().int() }).meta({
  id: 'FileList',
});

const WORKSPACE = { description: 'The workspace of the files', example: EX.workspaceId };
annotateFields(listFilesQuery, { workspaceId: WORKSPACE });
annotateFields(fileContentQuery, { workspaceId: WORKSPACE });
annotateFields(deleteFileQuery, { workspaceId: WORKSPACE });
annotateFields(uploadFileFields, {
  workspaceId: { description: 'The workspace to store the file in', example: EX.workspaceId },
});
annotateFields(listDocsQuery, {
  workspaceId: WORKSPACE,
  folderId: {
    description: 'Only the docs in this folder (not its subfolders); omit for the whole workspace',
    example: EX.folderId,
  },
  scope: { description: '`active`: live docs; `archived`; or `all`', example: 'all' },
});

const uploadForm = uploadFileFields
  .extend({
    file: z.string().meta({ format: 'binary', description: 'The file, at most 100 MB (104,857,600 bytes)' }),
  })
  .meta({
    description:
      'Send `workspaceId` before `file`: the caller is then authorised and the name checked before a byte is stored',
  });

const filePath = z.object({ fileId: z.uuid().meta({ description: 'The file id', example: EX.fileId }) });

const READ_400 = invalid(['workspaceId'], 'Invalid UUID', 'invalid_format', 'Invalid query parameters');

export function registerFiles(registry: OpenAPIRegistry) {
  registry.registerPath({
    method: 'post',
    path: '/api/v1/files',
    operationId: 'uploadFile',
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
      200: ok(
        {
          description: 'The stored file',
          schema: envelope({ file: fileSchema, message: z.string() }).meta({ id: 'FileUploaded' }),
          example: { success: true, data: { file: fileExample, message: 'File report.pdf uploaded' } },
        },
        'api',
        { idempotent: true },
      ),
      ...errors(
        withIdempotency({
          400: [
            'Send multipart/form-data with a file part and the workspaceId field',
            'The file part is missing',
            invalid(['workspaceId'], 'Invalid UUID', 'invalid_format'),
          ],
          403: WRITE_DENIED,
          404: 'Workspace not found',
          409: `A file named "report.pdf" already exists in this workspace (id ${EX.fileId}): delete it first with DELETE /api/v1/files/${EX.fileId}`,
          413: [
            'File over the size limit of 104857600 bytes',
            'Storage limit reached: 4999990000 of 5000000000 bytes used and this file has 48213 (free plan)',
          ],
          429: API_RATE_LIMITED,
        }),
        { metering: 'api', retryAfter: [409] },
      ),
    },
  });

  registry.registerPath({
    method: 'get',
    path: '/api/v1/files',
    operationId: 'listFiles',
    tags: ['Files'],
    summary: 'List files',
    description: "The workspace's live (not archived) files, newest first.",
    request: { query: listFilesQuery },
    responses: {
      200: ok(
        {
          description: 'The files',
          schema: fileList,
          example: { success: true, data: { files: [fileExample], totalCount: 1 } },
        },
        'api',
      ),
      ...errors(
        { 400: READ_400, 403: READ_DENIED, 404: 'Workspace not found', 429: API_RATE_LIMITED },
        { metering: 'api' },
      ),
    },
  });

  registry.registerPath({
    method: 'get',
    path: '/api/v1/files/{fileId}/content',
    operationId: 'downloadFile',
    tags: ['Files'],
    summary: 'Download a file',
    description: "The file's bytes, streamed, as its media type.",
    request: { params: filePath, query: fileContentQuery },
    responses: {
      200: okMedia(
        '*/*',
        {
          description: "The bytes; Content-Type is the file's media type",
          schema: z.string().meta({ format: 'binary' }),
        },
        'api',
        {
          headers: {
            'Content-Disposition': {
              description: 'attachment, with the exact name as RFC 5987 `filename*`',
              schema: {
                type: 'string' as const,
                example: `attachment; filename="report.pdf"; filename*=UTF-8''report.pdf`,
              },
            },
            'Content-Length': { description: 'Bytes', schema: { type: 'integer' as const, example: 48213 } },
          },
        },
      ),
      ...errors(
        {
          400: [READ_400, invalid(['fileId'], 'Must be a UUID', 'invalid_format')],
          403: 'Personal API keys are disabled in this workspace; use a workspace key',
          404: 'File not found',
          429: API_RATE_LIMITED,
        },
        { metering: 'api' },
      ),
    },
  });

  registry.registerPath({
    method: 'delete',
    path: '/api/v1/files/{fileId}',
    operationId: 'deleteFile',
    tags: ['Files'],
    summary: 'Delete a file',
    description:
      'Deletes a file of the workspace, archived or not: it leaves the file list and the docs, its name is free ' +
      'for a new upload, its bytes are removed from storage and no longer count in the storage figures ' +
      '(`storage.usedBytes` of GET /api/users/me/usage-limits). Needs write permission; recorded in the audit log ' +
      'as `file.deleted`. There is no undo. (Archiving, through the admin plane, keeps the name and the bytes.)',
    request: { params: filePath, query: deleteFileQuery },
    responses: {
      200: ok(
        {
          description: 'The file is deleted',
          schema: envelope({ message: z.string() }).meta({ id: 'FileDeleted' }),
          example: { success: true, data: { message: 'File report.pdf deleted' } },
        },
        'api',
      ),
      ...errors(
        {
          400: [READ_400, invalid(['fileId'], 'Must be a UUID', 'invalid_format')],
          403: RESOURCE_WRITE_DENIED,
          404: 'File not found',
          429: API_RATE_LIMITED,
        },
        { metering: 'api' },
      ),
    },
  });

  registry.registerPath({
    method: 'get',
    path: '/api/v1/docs',
    operationId: 'listDocs',
    tags: ['Docs'],
    summary: 'List docs',
    description:
      "A workspace's files as docs, by folder and lifecycle scope. Folders, moving and archiving are admin operations.",
    request: { query: listDocsQuery },
    responses: {
      200: ok(
        {
          description: 'The docs',
          schema: fileList,
          example: {
            success: true,
            data: {
              files: [{ ...fileExample, folderId: EX.folderId, archivedAt: EX.later }],
              totalCount: 1,
            },
          },
        },
        'api',
      ),
      ...errors(
        {
          400: [
            READ_400,
            {
              error: 'Invalid query parameters',
              details: [
                {
                  code: 'invalid_value',
                  path: ['scope'],
                  message: 'Invalid option: expected one of "active"|"archived"|"all"',
                },
              ],
            },
          ],
          403: READ_DENIED,
          404: ['Folder not found', 'Workspace not found'],
          429: API_RATE_LIMITED,
        },
        { metering: 'api' },
      ),
    },
  });
}
