// The request of GET /api/v1/docs; its answer is the file list of /api/v1/files (files/schemas.ts).
import { z } from 'zod';
import { DOC_SCOPES } from '../../../db/files.ts';
import { EX } from '../../openapi/components.ts';
import { workspaceIdParam } from '../files/schemas.ts';

export const listDocsQuery = z.object({
  workspaceId: workspaceIdParam,
  folderId: z.uuid().optional().meta({
    description: 'Only the docs in this folder (not its subfolders); omit for the whole workspace',
    example: EX.folderId,
  }),
  scope: z
    .enum(DOC_SCOPES)
    .default('active')
    .meta({ description: '`active`: live docs; `archived`; or `all`', example: 'all' }),
});
