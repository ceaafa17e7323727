// Examples of /api/v1/files: a file, the answers, and the errors each operation gives.
import { EX } from '../../openapi/components.ts';
import { invalid } from '../../openapi/error-answers.ts';

export const fileExample = {
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

export const fileUploadedExample = {
  success: true,
  data: { file: fileExample, message: 'File report.pdf uploaded' },
};

export const fileListExample = { success: true, data: { files: [fileExample], totalCount: 1 } };

export const fileDeletedExample = { success: true, data: { message: 'File report.pdf deleted' } };

/** The 400 of a list or a read whose workspaceId is not a UUID (docs too). */
export const READ_400 = invalid(
  ['workspaceId'],
  'Invalid UUID',
  'invalid_format',
  'Invalid query parameters',
);

/** The 400s of an operation on one file: its workspace or its id is not a UUID. */
export const FILE_400 = [READ_400, invalid(['fileId'], 'Must be a UUID', 'invalid_format')];

export const uploadInvalid = [
  'Send multipart/form-data with a file part and the workspaceId field',
  'The file part is missing',
  invalid(['workspaceId'], 'Invalid UUID', 'invalid_format'),
];

export const nameTaken = `A file named "report.pdf" already exists in this workspace (id ${EX.fileId}): delete it first with DELETE /api/v1/files/${EX.fileId}`;

export const uploadTooLarge = [
  'File over the size limit of 104857600 bytes',
  'Storage limit reached: 4999990000 of 5000000000 bytes used and this file has 48213 (free plan)',
];

/** The headers of a download besides Content-Type (the file's media type). */
export const downloadHeaders = {
  'Content-Disposition': {
    description: 'attachment, with the exact name as RFC 5987 `filename*`',
    schema: {
      type: 'string' as const,
      example: `attachment; filename="report.pdf"; filename*=UTF-8''report.pdf`,
    },
  },
  'Content-Length': { description: 'Bytes', schema: { type: 'integer' as const, example: 48213 } },
};
