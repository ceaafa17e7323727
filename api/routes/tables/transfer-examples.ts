// Examples of CSV import and of export: the answers, and the errors each gives.
import { EX } from '../../openapi/components.ts';
import { invalid } from '../../openapi/error-answers.ts';
import { BAD_TABLE_ID, READ_400 } from './examples.ts';

export const rowsImportedExample = {
  success: true,
  data: {
    tableId: EX.tableId,
    mode: 'skip',
    insertedCount: 2,
    skippedCount: 1,
    problems: [
      {
        line: 3,
        column: 'visits',
        code: 'invalid_type',
        message: 'Column visits expects a number, not "often"',
      },
    ],
    mappedColumns: ['email', 'visits'],
    unmappedColumns: [],
    sourceFile: 'contacts.csv',
    message: '2 rows imported, 1 skipped',
  },
};

export const importInvalid = [
  {
    error:
      'Nothing imported: the file has a bad row (line 3: Column visits expects a number, not "often"). Fix them, ' +
      'or send mode=skip to import the good rows',
    details: [
      {
        code: 'invalid_type',
        path: ['file', 3, 'visits'],
        message: 'Column visits expects a number, not "often"',
      },
    ],
  },
  {
    error: 'The header names columns the table does not have: phone',
    details: [
      { code: 'unrecognized_keys', path: ['file', 'header', 'phone'], message: 'No column named phone' },
    ],
  },
  {
    error: 'The header lacks required columns: email',
    details: [
      {
        code: 'required',
        path: ['file', 'header', 'email'],
        message: 'Column email is required: the header must name it',
      },
    ],
  },
  'The file is empty: it needs a header row naming the columns',
  'The file is not UTF-8 text: save it as CSV UTF-8 and send it again',
  'Send multipart/form-data with a file part and the workspaceId field',
  'The file part is missing',
  invalid(['mode'], 'Must be all or skip', 'invalid_value'),
  invalid(['workspaceId'], 'Invalid UUID', 'invalid_format'),
  BAD_TABLE_ID,
];

export const importTooLarge = 'File over the size limit of 104857600 bytes';

export const exportInvalid = [
  READ_400,
  BAD_TABLE_ID,
  invalid(['format'], 'Must be csv or jsonl', 'invalid_value', 'Invalid query parameters'),
  {
    error: 'Invalid filter',
    details: [{ code: 'unrecognized_keys', path: ['filter', 'phone'], message: 'No column named phone' }],
  },
];

export const csvExample = 'email,visits\r\nann@example.com,3\r\nbob@example.com,\r\n';
export const jsonlExample = '{"email":"ann@example.com","visits":3}\n{"email":"bob@example.com"}\n';

/** The headers of an export besides Content-Type. */
export const exportHeaders = {
  'Content-Disposition': {
    description: 'attachment, named after the table (`contacts.csv`), the exact name as RFC 5987 `filename*`',
    schema: {
      type: 'string' as const,
      example: `attachment; filename="contacts.csv"; filename*=UTF-8''contacts.csv`,
    },
  },
};
