// The requests and answers of CSV import and of export (CSV or JSONL) of a table's rows.
import { z } from 'zod';
import { MAX_FILE_BYTES } from '../../../db/files.ts';
import { envelope, withFieldDocs } from '../../openapi/components.ts';
import { MAX_RECORD_CHARS } from './csv-reader.ts';
import { IMPORT_MODES, MAX_REPORTED } from './row-import.ts';
import { jsonParam } from './row-schemas.ts';
import { WORKSPACE } from './schemas.ts';

const MODE_DOC =
  '`all` (the default): any bad row and nothing is imported (a 400 lists the first ones); `skip`: the good ' +
  'rows are imported and the bad ones reported';

/**
 * The text fields of an import (others are ignored); the file part is named `file`. Checked by the
 * import itself as the multipart stream reaches them.
 */
export const importFields = z.object({
  workspaceId: z.uuid().meta(WORKSPACE),
  mode: z
    .enum(IMPORT_MODES, { error: 'Must be all or skip' })
    .default('all')
    .meta({ description: MODE_DOC, example: 'skip' }),
});

/** The multipart form an import sends, as documented. */
export const importForm = importFields
  .extend({
    file: z.string().meta({
      format: 'binary',
      description:
        `The CSV (RFC 4180, UTF-8), at most 100 MB (${MAX_FILE_BYTES.toLocaleString('en')} bytes). Its first row names ` +
        'columns of the table (every required one; in any order; others get no value); each line after it is a row. ' +
        `Empty cells are no value; a record is at most ${MAX_RECORD_CHARS.toLocaleString('en')} characters`,
    }),
  })
  .meta({
    description:
      'The fields may come before or after the file. Send `workspaceId` first: the caller is then refused ' +
      '(no permission, no such table) before the file is read',
  });

const importProblem = z
  .object({
    line: z
      .number()
      .int()
      .meta({ description: 'The line of the file the row starts on (the header is line 1)' }),
    column: z.string().optional().meta({ description: 'The column, when the problem is one value' }),
    code: z
      .string()
      .meta({ description: 'invalid_type, invalid_format, invalid_value, required, not_unique, too_big' }),
    message: z.string(),
  })
  .meta({ id: 'ImportProblem', description: 'A problem with one line of the imported file' });

export const rowsImported = envelope({
  tableId: z.uuid(),
  mode: z.enum(IMPORT_MODES),
  insertedCount: z.number().int(),
  skippedCount: z.number().int().meta({ description: 'Rows not imported (bad rows, in mode skip)' }),
  problems: z
    .array(importProblem)
    .meta({ description: `The first ${MAX_REPORTED} problems, by line (a row may have several)` }),
  mappedColumns: z.array(z.string()).meta({ description: 'The columns the header names' }),
  unmappedColumns: z.array(z.string()).meta({ description: 'The columns it leaves out: they get no value' }),
  sourceFile: z.string().meta({ description: 'The file name the upload carried' }),
  message: z.string(),
}).meta({ id: 'RowsImported' });

export const EXPORT_FORMATS = ['csv', 'jsonl'] as const;

// Documented by copy: the filter is JSON carried as text.
export const exportQuery = withFieldDocs(
  z.object({
    workspaceId: z.uuid(),
    format: z.enum(EXPORT_FORMATS, { error: 'Must be csv or jsonl' }).default('csv'),
    filter: jsonParam.optional(),
  }),
  {
    workspaceId: WORKSPACE,
    format: {
      description:
        '`csv` (the default): a header row, then one record per row; `jsonl`: one JSON object per line',
      example: 'csv',
    },
    filter: {
      description:
        'JSON, as GET …/rows takes it: column name → value or operators (eq ne gt gte lt lte in nin contains ' +
        'startsWith endsWith isNull isNotNull), all of which must hold',
      example: '{"visits":{"gte":1}}',
    },
  },
);

/** The exported rows: text of the format asked for. */
export const exportedRows = z.string();
