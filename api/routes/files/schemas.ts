// The requests and answers of /api/v1/files (upload, list, download, delete); the file and the
// file list are also the answers of /api/v1/docs.
import { z } from 'zod';
import type { FileRecord } from '../../../db/files.ts';
import { EX, envelope } from '../../openapi/components.ts';
import { uuidParam } from '../router.ts';

export const fileSchema = z
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

export const fileList = envelope({ files: z.array(fileSchema), totalCount: z.number().int() }).meta({
  id: 'FileList',
});

export const fileUploaded = envelope({ file: fileSchema, message: z.string() }).meta({ id: 'FileUploaded' });

export const fileDeleted = envelope({ message: z.string() }).meta({ id: 'FileDeleted' });

/** The workspace of the files, which list, download and delete name in their query. */
export const workspaceIdParam = z
  .uuid()
  .meta({ description: 'The workspace of the files', example: EX.workspaceId });

export const filesQuery = z.object({ workspaceId: workspaceIdParam });

export const fileParams = z.object({ fileId: uuidParam('The file id', EX.fileId) });

/**
 * The text fields of an upload (others are ignored); the file part is named `file`. Checked by the
 * upload itself as the multipart stream reaches them.
 */
export const uploadFileFields = z.object({
  workspaceId: z.uuid().meta({ description: 'The workspace to store the file in', example: EX.workspaceId }),
});

/** The multipart form an upload sends, as documented. */
export const uploadForm = uploadFileFields
  .extend({
    file: z.string().meta({ format: 'binary', description: 'The file, at most 100 MB (104,857,600 bytes)' }),
  })
  .meta({
    description:
      'Send `workspaceId` before `file`: the caller is then authorised and the name checked before a byte is stored',
  });

/** A download's bytes. */
export const fileBytes = z.string().meta({ format: 'binary' });
