// OpenAPI: /api/v1/tables: create (9), list, get and delete tables; insert (10), query, bulk-update
// (11), delete, upsert (12) and get rows; delete a column (13).
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import type { TableRow } from '../../db/tables/rows.ts';
import type { Table } from '../../db/tables/tables.ts';
import { COLUMN_TYPES, type ColumnDef } from '../../db/tables/values.ts';
import {
  createTableBody,
  deleteColumnBody,
  deleteRowsBody,
  filterSchema,
  insertRowsBody,
  queryRowsQuery,
  updateRowsBody,
  upsertRowBody,
  workspaceOnly,
} from '../routes/tables.ts';
import {
  API_RATE_LIMITED,
  annotate,
  annotateFields,
  type ErrorCases,
  EX,
  envelope,
  errors,
  idempotencyHeaders,
  invalid,
  jsonBody,
  ok,
  READ_DENIED,
  WRITE_DENIED,
  withIdempotency,
} from './components.ts';

// --- Answers --------------------------------------------------------------------------------------

const columnSchema = z
  .object({
    name: z.string(),
    type: z.enum(COLUMN_TYPES),
    required: z.boolean(),
    unique: z.boolean(),
  })
  .meta({
    id: 'Column',
    description: 'A column definition, with required and unique filled in',
  }) satisfies z.ZodType<ColumnDef>;

const tableSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string(),
    schema: z.object({ columns: z.array(columnSchema) }),
    rowCount: z.number().int(),
    maxRows: z.number().int().meta({ description: "Row capacity: the plan's rows per table, read live" }),
    workspaceId: z.uuid(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'Table' }) satisfies z.ZodType<Table>;

const rowFields = {
  id: z.uuid(),
  data: z.record(z.string(), z.unknown()).meta({ description: 'Column name → value' }),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
};
const rowSchema = z
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

const columnsExample = [
  { name: 'email', type: 'string', required: true, unique: true },
  { name: 'visits', type: 'number', required: false, unique: false },
];
const tableExample = {
  id: EX.tableId,
  name: 'contacts',
  description: 'People we know',
  schema: { columns: columnsExample },
  rowCount: 0,
  maxRows: 50000,
  workspaceId: EX.workspaceId,
  createdAt: EX.time,
  updatedAt: EX.time,
};
const rowExample = {
  id: EX.rowId,
  data: { email: 'ada@example.com', visits: 1 },
  position: 1,
  createdAt: EX.time,
  updatedAt: EX.time,
};
const row2Example = {
  id: EX.rowId2,
  data: { email: 'grace@example.com', visits: 2 },
  position: 2,
  createdAt: EX.time,
  updatedAt: EX.time,
};

// --- Requests -------------------------------------------------------------------------------------

const WORKSPACE = { description: 'The workspace of the table', example: EX.workspaceId };

annotateFields(workspaceOnly, { workspaceId: WORKSPACE });
annotateFields(createTableBody, {
  workspaceId: { description: 'The workspace to create the table in' },
  name: { description: 'Unique in the workspace' },
  description: { description: 'Free text' },
  schema: {
    description:
      'The columns: 1 to 1000; names `^[a-z_][a-z0-9_]*$` up to 50 characters; types string, number, ' +
      'boolean, date (ISO 8601), json; `required` and `unique` (not on json) default to false',
  },
});
annotateFields(insertRowsBody, {
  workspaceId: WORKSPACE,
  data: { description: 'One row: column name → value. Give `data` or `rows`, not both.' },
  rows: { description: 'A batch of rows (1 to 1000), inserted all or nothing' },
});
annotate(filterSchema, {
  type: 'object',
  description:
    'Column name → a value (equality; null means no value) or an object of operators that must all ' +
    'hold: eq ne gt gte lt lte in nin contains startsWith endsWith isNull isNotNull, typed by the column',
  example: { visits: { lt: 3 } },
});
annotateFields(updateRowsBody, {
  workspaceId: WORKSPACE,
  data: { description: 'The column values to set on every matching row' },
});
annotateFields(deleteRowsBody, {
  workspaceId: WORKSPACE,
  rowIds: { description: 'The rows to delete (1 to 1000). Give `rowIds` or `filter`, not both.' },
});
annotateFields(upsertRowBody, {
  workspaceId: WORKSPACE,
  data: { description: 'The row: must carry the value of the unique column matched on' },
  conflictTarget: {
    description: 'The unique column to match on; needed only when the table has several unique columns',
  },
});
annotateFields(deleteColumnBody, {
  workspaceId: WORKSPACE,
  columnName: { description: 'Not the last column' },
});
annotateFields(queryRowsQuery, {
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
});

const tablePath = z.object({ tableId: z.uuid().meta({ description: 'The table id', example: EX.tableId }) });
const rowPath = tablePath.extend({ rowId: z.uuid().meta({ description: 'The row id', example: EX.rowId }) });

const WRITE_400 = invalid(['workspaceId'], 'Invalid UUID', 'invalid_format', 'Invalid request body');
const READ_400 = invalid(['workspaceId'], 'Invalid UUID', 'invalid_format', 'Invalid query parameters');
const BAD_TABLE_ID = invalid(['tableId'], 'Must be a UUID', 'invalid_format');
const writeErrors = (more: ErrorCases = {}, idempotent = false) => {
  const cases: ErrorCases = {
    403: WRITE_DENIED,
    404: ['Table not found', 'Workspace not found'],
    413: 'Request body over 10485760 bytes',
    429: API_RATE_LIMITED,
    ...more,
  };
  return idempotent
    ? errors(withIdempotency(cases), { metering: 'api', retryAfter: [409] })
    : errors(cases, { metering: 'api' });
};
const readErrors = (more: ErrorCases = {}) =>
  errors(
    {
      400: [READ_400, BAD_TABLE_ID],
      403: READ_DENIED,
      404: ['Table not found', 'Workspace not found'],
      429: API_RATE_LIMITED,
      ...more,
    },
    { metering: 'api' },
  );

const rowValueErrors = [
  {
    error: 'Invalid row data',
    details: [
      { code: 'invalid_type', path: ['rows', 0, 'visits'], message: 'Column visits expects a finite number' },
      { code: 'required', path: ['rows', 1, 'email'], message: 'Column email is required' },
      { code: 'unrecognized_keys', path: ['rows', 2, 'nope'], message: 'No column named nope' },
    ],
  },
  {
    error: 'Unique constraint violated',
    details: [
      {
        code: 'not_unique',
        path: ['data', 'email'],
        message: `Unique column email already holds this value (row ${EX.rowId})`,
      },
    ],
  },
];

export function registerTables(registry: OpenAPIRegistry) {
  const tags = ['Tables'];
  registry.registerPath({
    method: 'post',
    path: '/api/v1/tables',
    operationId: 'createTable',
    tags,
    summary: 'Create a table',
    description:
      'Creates a table with typed columns. The plan caps tables per workspace (403) and rows per table (`maxRows`).',
    request: {
      body: jsonBody(createTableBody, {
        workspaceId: EX.workspaceId,
        name: 'contacts',
        description: 'People we know',
        schema: {
          columns: [
            { name: 'email', type: 'string', required: true, unique: true },
            { name: 'visits', type: 'number' },
          ],
        },
      }),
    },
    responses: {
      200: ok(
        {
          description: 'The new table (rowCount 0)',
          schema: envelope({ table: tableSchema, message: z.string() }).meta({ id: 'TableCreated' }),
          example: { success: true, data: { table: tableExample, message: 'Table contacts created' } },
        },
        'api',
      ),
      ...writeErrors({
        400: [
          invalid(
            ['schema', 'columns'],
            'Too small: expected array to have >=1 items',
            'too_small',
            'Invalid request body',
          ),
          invalid(
            ['schema', 'columns', 1, 'unique'],
            'A json column cannot be unique',
            'custom',
            'Invalid request body',
          ),
          'Malformed JSON body: Unexpected token } at line 3, column 1: expected a value',
        ],
        403: ['The free plan allows at most 5 tables per workspace', ...WRITE_DENIED],
        404: 'Workspace not found',
        409: 'A table named contacts already exists in this workspace',
      }),
    },
  });

  registry.registerPath({
    method: 'get',
    path: '/api/v1/tables',
    operationId: 'listTables',
    tags,
    summary: 'List tables',
    description: "The workspace's tables, oldest first.",
    request: { query: workspaceOnly },
    responses: {
      200: ok(
        {
          description: 'The tables',
          schema: envelope({ tables: z.array(tableSchema), totalCount: z.number().int() }).meta({
            id: 'TableList',
          }),
          example: { success: true, data: { tables: [tableExample], totalCount: 1 } },
        },
        'api',
      ),
      ...readErrors({ 400: READ_400, 404: 'Workspace not found' }),
    },
  });

  registry.registerPath({
    method: 'get',
    path: '/api/v1/tables/{tableId}',
    operationId: 'getTable',
    tags,
    summary: 'Get a table',
    request: { params: tablePath, query: workspaceOnly },
    responses: {
      200: ok(
        {
          description: 'The table',
          schema: envelope({ table: tableSchema }).meta({ id: 'TableFound' }),
          example: { success: true, data: { table: { ...tableExample, rowCount: 2 } } },
        },
        'api',
      ),
      ...readErrors(),
    },
  });

  registry.registerPath({
    method: 'delete',
    path: '/api/v1/tables/{tableId}',
    operationId: 'deleteTable',
    tags,
    summary: 'Delete a table',
    description: 'Deletes the table with its rows.',
    request: { params: tablePath, body: jsonBody(workspaceOnly, { workspaceId: EX.workspaceId }) },
    responses: {
      200: ok(
        {
          description: 'Deleted',
          schema: envelope({ message: z.string(), tableId: z.uuid() }).meta({ id: 'TableDeleted' }),
          example: { success: true, data: { message: 'Table deleted', tableId: EX.tableId } },
        },
        'api',
      ),
      ...writeErrors({ 400: [WRITE_400, BAD_TABLE_ID] }),
    },
  });

  registry.registerPath({
    method: 'post',
    path: '/api/v1/tables/{tableId}/rows',
    operationId: 'insertRows',
    tags,
    summary: 'Insert rows',
    description:
      'One row with `data` (answered with its `position`), or up to 1000 with `rows`, all or nothing. ' +
      'Values are checked against the columns: types, required, unique (also against each other in a ' +
      "batch), and the table's row cap. Issues name the row and column.",
    request: {
      params: tablePath,
      headers: idempotencyHeaders,
      body: jsonBody(insertRowsBody, undefined, {
        examples: {
          one: {
            summary: 'One row',
            value: { workspaceId: EX.workspaceId, data: { email: 'ada@example.com', visits: 1 } },
          },
          batch: {
            summary: 'A batch',
            value: {
              workspaceId: EX.workspaceId,
              rows: [
                { email: 'ada@example.com', visits: 1 },
                { email: 'grace@example.com', visits: 2 },
              ],
            },
          },
        },
      }),
    },
    responses: {
      200: ok(
        {
          description: 'Inserted: `row` for `data`, `rows` and `insertedCount` for a batch',
          schema: z.union([
            envelope({ row: rowSchema, message: z.string() }).meta({ id: 'RowInserted' }),
            envelope({ rows: z.array(rowSchema), insertedCount: z.number().int(), message: z.string() }).meta(
              {
                id: 'RowsInserted',
              },
            ),
          ]),
          examples: {
            one: {
              summary: 'One row',
              value: { success: true, data: { row: rowExample, message: 'Row inserted' } },
            },
            batch: {
              summary: 'A batch',
              value: {
                success: true,
                data: { rows: [rowExample, row2Example], insertedCount: 2, message: '2 rows inserted' },
              },
            },
          },
        },
        'api',
        { idempotent: true },
      ),
      ...writeErrors(
        {
          400: [
            ...rowValueErrors,
            {
              error: 'Row limit reached: the table holds at most 50000 rows',
              details: [
                {
                  code: 'too_big',
                  path: ['rows'],
                  message: 'The plan allows 50000 rows per table; the table has 49999 and this adds 2',
                },
              ],
            },
            invalid(
              ['data'],
              'Give either data (one row) or rows (a batch), not both',
              'custom',
              'Invalid request body',
            ),
          ],
        },
        true,
      ),
    },
  });

  registry.registerPath({
    method: 'get',
    path: '/api/v1/tables/{tableId}/rows',
    operationId: 'queryRows',
    tags,
    summary: 'Query rows',
    description: 'Rows matching a filter, sorted and paged (`limit` 1 to 1000, default 100).',
    request: { params: tablePath, query: queryRowsQuery },
    responses: {
      200: ok(
        {
          description: 'A page of rows',
          schema: envelope({
            rows: z.array(rowSchema),
            pagination: z.object({
              total: z.number().int().meta({ description: 'Rows matching the filter' }),
              limit: z.number().int(),
              offset: z.number().int(),
              hasMore: z.boolean(),
            }),
          }).meta({ id: 'RowPage' }),
          example: {
            success: true,
            data: {
              rows: [row2Example, rowExample],
              pagination: { total: 2, limit: 20, offset: 0, hasMore: false },
            },
          },
        },
        'api',
      ),
      ...readErrors({
        400: [
          {
            error: 'Invalid query parameters',
            details: [
              {
                code: 'custom',
                path: ['filter'],
                message:
                  "Must be JSON: Unexpected token ' at line 1, column 2: expected a property name in double quotes",
              },
              { code: 'too_small', path: ['limit'], message: 'Too small: expected number to be >=1' },
            ],
          },
          READ_400,
          BAD_TABLE_ID,
        ],
      }),
    },
  });

  registry.registerPath({
    method: 'put',
    path: '/api/v1/tables/{tableId}/rows',
    operationId: 'updateRows',
    tags,
    summary: 'Bulk update rows',
    description:
      'Sets the given columns on every row matching the filter, checked against the schema and unique ' +
      'constraints (a unique column set on several rows is a 400 and nothing changes).',
    request: {
      params: tablePath,
      body: jsonBody(updateRowsBody, {
        workspaceId: EX.workspaceId,
        filter: { visits: { lt: 3 } },
        data: { visits: 3 },
      }),
    },
    responses: {
      200: ok(
        {
          description: 'Updated',
          schema: envelope({
            message: z.string(),
            updatedCount: z.number().int(),
            updatedRowIds: z.array(z.uuid()),
          }).meta({ id: 'RowsUpdated' }),
          example: {
            success: true,
            data: { message: '2 rows updated', updatedCount: 2, updatedRowIds: [EX.rowId, EX.rowId2] },
          },
        },
        'api',
      ),
      ...writeErrors({
        400: [
          invalid(['filter'], 'Give at least one condition', 'custom', 'Invalid request body'),
          ...rowValueErrors,
        ],
      }),
    },
  });

  registry.registerPath({
    method: 'delete',
    path: '/api/v1/tables/{tableId}/rows',
    operationId: 'deleteRows',
    tags,
    summary: 'Delete rows',
    description: 'Deletes the rows named by `rowIds`, or every row matching `filter`.',
    request: {
      params: tablePath,
      body: jsonBody(deleteRowsBody, undefined, {
        examples: {
          ids: { summary: 'By id', value: { workspaceId: EX.workspaceId, rowIds: [EX.rowId] } },
          filter: {
            summary: 'By filter',
            value: { workspaceId: EX.workspaceId, filter: { email: { endsWith: '@example.com' } } },
          },
        },
      }),
    },
    responses: {
      200: ok(
        {
          description: 'Deleted',
          schema: envelope({
            message: z.string(),
            deletedCount: z.number().int(),
            deletedRowIds: z.array(z.uuid()),
          }).meta({ id: 'RowsDeleted' }),
          example: {
            success: true,
            data: { message: '1 rows deleted', deletedCount: 1, deletedRowIds: [EX.rowId] },
          },
        },
        'api',
      ),
      ...writeErrors({
        400: [
          invalid(['rowIds'], 'Give either rowIds or a filter', 'custom', 'Invalid request body'),
          WRITE_400,
        ],
      }),
    },
  });

  registry.registerPath({
    method: 'post',
    path: '/api/v1/tables/{tableId}/rows/upsert',
    operationId: 'upsertRow',
    tags,
    summary: 'Upsert a row',
    description:
      'Updates the row holding the same value in the unique column (`conflictTarget` when the table has ' +
      'several), or inserts a new one. The table must have a unique column.',
    request: {
      params: tablePath,
      body: jsonBody(upsertRowBody, {
        workspaceId: EX.workspaceId,
        data: { email: 'ada@example.com', visits: 9 },
        conflictTarget: 'email',
      }),
    },
    responses: {
      200: ok(
        {
          description: '`operation` is `insert` or `update`',
          schema: envelope({
            row: upsertedRowSchema,
            operation: z.enum(['insert', 'update']),
            message: z.string(),
          }).meta({ id: 'RowUpserted' }),
          example: {
            success: true,
            data: {
              row: {
                id: EX.rowId,
                data: { email: 'ada@example.com', visits: 9 },
                createdAt: EX.time,
                updatedAt: EX.later,
              },
              operation: 'update',
              message: 'Row updated',
            },
          },
        },
        'api',
      ),
      ...writeErrors({
        400: [
          {
            error: 'Upsert needs a table with a unique column',
            details: [{ code: 'custom', path: [], message: 'Upsert needs a table with a unique column' }],
          },
          ...rowValueErrors,
        ],
      }),
    },
  });

  registry.registerPath({
    method: 'get',
    path: '/api/v1/tables/{tableId}/rows/{rowId}',
    operationId: 'getRow',
    tags,
    summary: 'Get a row',
    request: { params: rowPath, query: workspaceOnly },
    responses: {
      200: ok(
        {
          description: 'The row',
          schema: envelope({ row: rowSchema }).meta({ id: 'RowFound' }),
          example: { success: true, data: { row: rowExample } },
        },
        'api',
      ),
      ...readErrors({
        400: [READ_400, BAD_TABLE_ID, invalid(['rowId'], 'Must be a UUID', 'invalid_format')],
        404: ['Row not found', 'Table not found', 'Workspace not found'],
      }),
    },
  });

  registry.registerPath({
    method: 'delete',
    path: '/api/v1/tables/{tableId}/columns',
    operationId: 'deleteColumn',
    tags,
    summary: 'Delete a column',
    description:
      'Removes the column definition and strips its key from every row. The last column cannot be deleted.',
    request: {
      params: tablePath,
      body: jsonBody(deleteColumnBody, { workspaceId: EX.workspaceId, columnName: 'visits' }),
    },
    responses: {
      200: ok(
        {
          description: 'The remaining columns',
          schema: envelope({ columns: z.array(columnSchema), message: z.string() }).meta({
            id: 'ColumnDeleted',
          }),
          example: {
            success: true,
            data: { columns: [columnsExample[0]], message: 'Column visits deleted' },
          },
        },
        'api',
      ),
      ...writeErrors({
        400: [
          {
            error: 'The last column of a table cannot be deleted',
            details: [
              { code: 'custom', path: ['columnName'], message: 'The table must keep at least one column' },
            ],
          },
          WRITE_400,
        ],
        404: ['Column not found', 'Table not found', 'Workspace not found'],
      }),
    },
  });
}
