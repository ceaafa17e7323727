// The requests and answers of the row operations: insert, query, bulk-update, delete, upsert and get.
// Row data stays `unknown` here: the store checks it against the table's columns, and its issues
// name the row and column ('rows', 3, 'email'). So do filters and sorts.
import { z } from 'zod';
import { MAX_BATCH_ROWS, MAX_QUERY_LIMIT, type TableRow } from '../../../db/tables/tables.ts';
import { parseJson } from '../../../json-errors.ts';
import { wholeNumberParam } from '../../middleware/validate.ts';
import { EX, envelope, withFieldDocs } from '../../openapi/components.ts';
import { uuidParam } from '../router.ts';
import { tablePath, WORKSPACE } from './schemas.ts';

export const rowPath = tablePath.extend({ rowId: uuidParam('The row id', EX.rowId) });

export const insertRowsBody = z
  .object({
    workspaceId: z.uuid().meta(WORKSPACE),
    data: z
      .unknown()
      .optional()
      .meta({ description: 'One row: column name → value. Give `data` or `rows`, not both.' }),
    rows: z
      .array(z.unknown())
      .min(1)
      .max(MAX_BATCH_ROWS)
      .optional()
      .meta({ description: 'A batch of rows (1 to 1000), inserted all or nothing' }),
  })
  .refine((b) => (b.data === undefined) !== (b.rows === undefined), {
    path: ['data'],
    message: 'Give either data (one row) or rows (a batch), not both',
  });

// Checked as is, not copied (a copy would drop a `__proto__` key); the store reads its conditions.
export const filterSchema = z
  .custom<Record<string, unknown>>(
    (f) => typeof f === 'object' && f !== null && !Array.isArray(f),
    'A filter is an object of column name to condition',
  )
  .refine((f) => Object.keys(f).length > 0, 'Give at least one condition')
  .meta({
    type: 'object',
    description:
      'Column name → a value (equality; null means no value) or an object of operators that must all ' +
      'hold: eq ne gt gte lt lte in nin contains startsWith endsWith isNull isNotNull, typed by the column',
    example: { visits: { lt: 3 } },
  });

export const updateRowsBody = z.object({
  workspaceId: z.uuid().meta(WORKSPACE),
  filter: filterSchema,
  data: z.unknown().meta({ description: 'The column values to set on every matching row' }),
});

export const updateRowBody = z.object({
  workspaceId: z.uuid().meta(WORKSPACE),
  data: z.unknown().meta({
    description: 'The columns to set (column name → value; null clears an optional column); the others stay',
  }),
});

export const upsertRowBody = z.object({
  workspaceId: z.uuid().meta(WORKSPACE),
  data: z.unknown().meta({ description: 'The row: must carry the value of the unique column matched on' }),
  conflictTarget: z.string().min(1).max(50).optional().meta({
    description: 'The unique column to match on; needed only when the table has several unique columns',
  }),
});

export const deleteRowsBody = z
  .object({
    workspaceId: z.uuid().meta(WORKSPACE),
    rowIds: z
      .array(z.uuid())
      .min(1)
      .max(MAX_BATCH_ROWS)
      .optional()
      .meta({ description: 'The rows to delete (1 to 1000). Give `rowIds` or `filter`, not both.' }),
    filter: filterSchema.optional(),
  })
  .refine((b) => (b.rowIds === undefined) !== (b.filter === undefined), {
    path: ['rowIds'],
    message: 'Give either rowIds or a filter',
  });

/** A JSON value carried in a query parameter (filter, sort). */
export const jsonParam = z.string().transform((text, ctx): unknown => {
  try {
    return parseJson(text);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `Must be JSON: ${(err as Error).message}` });
    return z.NEVER;
  }
});

// Documented by copy: `limit` and `offset` are whole numbers carried as text, shown as integers.
export const queryRowsQuery = withFieldDocs(
  z.object({
    workspaceId: z.uuid(),
    filter: jsonParam.optional(),
    sort: jsonParam.optional(),
    limit: wholeNumberParam(1, MAX_QUERY_LIMIT).default(100),
    offset: wholeNumberParam(0, Number.MAX_SAFE_INTEGER).default(0),
  }),
  {
    workspaceId: WORKSPACE,
    filter: {
      description:
        'JSON: column name → value or operators (eq ne gt gte lt lte in nin contains startsWith endsWith ' +
        'isNull isNotNull), all of which must hold',
      example: '{"visits":{"gte":1}}',
    },
    sort: {
      description:
        'JSON: `{"column": "asc"|"desc"}` or `[{"column", "direction"}]`; also by createdAt, updatedAt ' +
        'and position (the default)',
      example: '{"visits":"desc"}',
    },
    limit: { description: 'Rows per page', example: 20 },
    offset: { description: 'Rows to skip', example: 0 },
  },
);

// --- Answers --------------------------------------------------------------------------------------

const rowFields = {
  id: z.uuid(),
  data: z.record(z.string(), z.unknown()).meta({ description: 'Column name → value' }),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
};

export const rowSchema = z
  .object({
    ...rowFields,
    position: z
      .number()
      .int()
      .meta({ description: '1-based insertion order; gaps stay where rows were deleted' }),
  })
  .meta({ id: 'Row' }) satisfies z.ZodType<TableRow>;

const upsertedRowSchema = z
  .object(rowFields)
  .meta({ id: 'UpsertedRow', description: 'A row, without its position' });

/** One row inserted (`data`), or a batch (`rows`). */
export const rowsInserted = z.union([
  envelope({ row: rowSchema, message: z.string() }).meta({ id: 'RowInserted' }),
  envelope({ rows: z.array(rowSchema), insertedCount: z.number().int(), message: z.string() }).meta({
    id: 'RowsInserted',
  }),
]);

export const rowPage = envelope({
  rows: z.array(rowSchema),
  pagination: z.object({
    total: z.number().int().meta({ description: 'Rows matching the filter' }),
    limit: z.number().int(),
    offset: z.number().int(),
    hasMore: z.boolean(),
  }),
}).meta({ id: 'RowPage' });

export const rowsUpdated = envelope({
  message: z.string(),
  updatedCount: z.number().int(),
  updatedRowIds: z.array(z.uuid()),
}).meta({ id: 'RowsUpdated' });

export const rowsDeleted = envelope({
  message: z.string(),
  deletedCount: z.number().int(),
  deletedRowIds: z.array(z.uuid()),
}).meta({ id: 'RowsDeleted' });

export const rowUpserted = envelope({
  row: upsertedRowSchema,
  operation: z.enum(['insert', 'update']),
  message: z.string(),
}).meta({ id: 'RowUpserted' });

export const rowFound = envelope({ row: rowSchema }).meta({ id: 'RowFound' });

export const rowUpdated = envelope({ row: rowSchema, message: z.string() }).meta({ id: 'RowUpdated' });

export const rowDeleted = envelope({
  message: z.string(),
  deletedCount: z.number().int().meta({ description: 'Always 1: a row not found is a 404' }),
}).meta({ id: 'RowDeleted' });
