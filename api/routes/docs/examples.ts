// Examples of GET /api/v1/docs: the answer, and the 400s it gives.
import { EX } from '../../openapi/components.ts';
import { fileExample, READ_400 } from '../files/examples.ts';

export const docListExample = {
  success: true,
  data: { files: [{ ...fileExample, folderId: EX.folderId, archivedAt: EX.later }], totalCount: 1 },
};

export const listDocsInvalid = [
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
];
