// /api/v1/tables/{tableId}/rows: insert (10), query, bulk-update (11), delete, upsert (12); and one
// row by id: get, update (PATCH) and delete, as the original service has them. Row values, filters and sorts are checked by the store against the table's columns, so
// their issues name the row and column.
import { createRoute } from '@hono/zod-openapi';
import {
  deleteRow,
  deleteRows,
  getRow,
  insertRow,
  insertRows,
  queryRows,
  type TableRow,
  updateRow,
  updateRows,
  upsertRow,
} from '../../../db/tables/tables.ts';
import type { ApiDeps } from '../../context.ts';
import {
  API_RATE_LIMITED,
  idempotencyHeaders,
  jsonBody,
  ok,
  WRITE_DENIED,
} from '../../openapi/components.ts';
import { errors } from '../../openapi/error-answers.ts';
import { type Guards, Router } from '../router.ts';
import { readErrors, writeErrors } from './examples.ts';
import { reachTable, tags } from './routes.ts';
import {
  deleteRowInvalid,
  deleteRowsInvalid,
  deleteRowsRequests,
  getRowInvalid,
  insertRowsInvalid,
  insertRowsRequests,
  queryRowsInvalid,
  rowDeletedExample,
  rowFoundExample,
  rowPageExample,
  rowsDeletedExample,
  rowsInsertedExamples,
  rowsUpdatedExample,
  rowUpdatedExample,
  rowUpsertedExample,
  updateRowInvalid,
  updateRowRequest,
  updateRowsInvalid,
  updateRowsRequest,
  upsertRowInvalid,
  upsertRowRequest,
} from './row-examples.ts';
import {
  deleteRowsBody,
  insertRowsBody,
  queryRowsQuery,
  rowDeleted,
  rowFound,
  rowPage,
  rowPath,
  rowsDeleted,
  rowsInserted,
  rowsUpdated,
  rowUpdated,
  rowUpserted,
  updateRowBody,
  updateRowsBody,
  upsertRowBody,
} from './row-schemas.ts';
import { tablePath, workspaceOnly } from './schemas.ts';

const UPSERTED = { insert: 'Row inserted', update: 'Row updated' } as const;

/** The upsert answer shows the row without its position. */
const withoutPosition = ({ position: _position, ...row }: TableRow) => row;

// A retry must not insert the rows twice: the Idempotency-Key header puts this route behind the
// idempotency guard. One body schema covers both forms (`data` or `rows`); the handler picks.
export const insertRowsRoute = createRoute({
  method: 'post',
  path: '/api/v1/tables/{tableId}/rows',
  operationId: 'insertRows',
  scope: 'tables:write' as const,
  tags,
  summary: 'Insert rows',
  description:
    'One row with `data` (answered with its `position`), or up to 1000 with `rows`, all or nothing. ' +
    'Values are checked against the columns: types, required, unique (also against each other in a ' +
    "batch), and the table's row cap. Issues name the row and column.",
  request: {
    params: tablePath,
    headers: idempotencyHeaders,
    body: jsonBody(insertRowsBody, undefined, { examples: insertRowsRequests }),
  },
  responses: {
    200: ok(
      {
        description: 'Inserted: `row` for `data`, `rows` and `insertedCount` for a batch',
        schema: rowsInserted,
        examples: rowsInsertedExamples,
      },
      'api',
      { idempotent: true },
    ),
    ...writeErrors({ 400: insertRowsInvalid }, true),
  },
});

export const queryRowsRoute = createRoute({
  method: 'get',
  path: '/api/v1/tables/{tableId}/rows',
  operationId: 'queryRows',
  scope: 'tables:read' as const,
  tags,
  summary: 'Query rows',
  description: 'Rows matching a filter, sorted and paged (`limit` 1 to 1000, default 100).',
  request: { params: tablePath, query: queryRowsQuery },
  responses: {
    200: ok({ description: 'A page of rows', schema: rowPage, example: rowPageExample }, 'api'),
    ...readErrors({ 400: queryRowsInvalid }),
  },
});

export const updateRowsRoute = createRoute({
  method: 'put',
  path: '/api/v1/tables/{tableId}/rows',
  operationId: 'updateRows',
  scope: 'tables:write' as const,
  tags,
  summary: 'Bulk update rows',
  description:
    'Sets the given columns on every row matching the filter, checked against the schema and unique ' +
    'constraints (a unique column set on several rows is a 400 and nothing changes).',
  request: { params: tablePath, body: jsonBody(updateRowsBody, updateRowsRequest) },
  responses: {
    200: ok({ description: 'Updated', schema: rowsUpdated, example: rowsUpdatedExample }, 'api'),
    ...writeErrors({ 400: updateRowsInvalid }),
  },
});

export const deleteRowsRoute = createRoute({
  method: 'delete',
  path: '/api/v1/tables/{tableId}/rows',
  operationId: 'deleteRows',
  scope: 'tables:write' as const,
  tags,
  summary: 'Delete rows',
  description: 'Deletes the rows named by `rowIds`, or every row matching `filter`.',
  request: {
    params: tablePath,
    body: jsonBody(deleteRowsBody, undefined, { examples: deleteRowsRequests }),
  },
  responses: {
    200: ok({ description: 'Deleted', schema: rowsDeleted, example: rowsDeletedExample }, 'api'),
    ...writeErrors({ 400: deleteRowsInvalid }),
  },
});

export const upsertRowRoute = createRoute({
  method: 'post',
  path: '/api/v1/tables/{tableId}/rows/upsert',
  operationId: 'upsertRow',
  scope: 'tables:write' as const,
  tags,
  summary: 'Upsert a row',
  description:
    'Updates the row holding the same value in the unique column (`conflictTarget` when the table has ' +
    'several), or inserts a new one. The table must have a unique column.',
  request: { params: tablePath, body: jsonBody(upsertRowBody, upsertRowRequest) },
  responses: {
    200: ok(
      {
        description: '`operation` is `insert` or `update`',
        schema: rowUpserted,
        example: rowUpsertedExample,
      },
      'api',
    ),
    ...writeErrors({ 400: upsertRowInvalid }),
  },
});

export const getRowRoute = createRoute({
  method: 'get',
  path: '/api/v1/tables/{tableId}/rows/{rowId}',
  operationId: 'getRow',
  scope: 'tables:read' as const,
  tags,
  summary: 'Get a row',
  request: { params: rowPath, query: workspaceOnly },
  responses: {
    200: ok({ description: 'The row', schema: rowFound, example: rowFoundExample }, 'api'),
    ...readErrors({ 400: getRowInvalid, 404: ['Row not found', 'Table not found', 'Workspace not found'] }),
  },
});

const ROW_NOT_FOUND = ['Row not found', 'Table not found', 'Workspace not found'];

export const updateRowRoute = createRoute({
  method: 'patch',
  path: '/api/v1/tables/{tableId}/rows/{rowId}',
  operationId: 'updateRow',
  scope: 'tables:write' as const,
  tags,
  summary: 'Update a row',
  description:
    'Sets the given columns on the row (null clears an optional one) and keeps the others, checked ' +
    'against the schema and unique constraints. A row of another table is not found.',
  request: { params: rowPath, body: jsonBody(updateRowBody, updateRowRequest) },
  responses: {
    200: ok({ description: 'The row as it is now', schema: rowUpdated, example: rowUpdatedExample }, 'api'),
    ...writeErrors({ 400: updateRowInvalid, 404: ROW_NOT_FOUND }),
  },
});

// As the original service has it, the workspace is named in the query: the request has no body.
export const deleteRowRoute = createRoute({
  method: 'delete',
  path: '/api/v1/tables/{tableId}/rows/{rowId}',
  operationId: 'deleteRow',
  scope: 'tables:write' as const,
  tags,
  summary: 'Delete a row',
  description: 'Deletes the row. A row of another table is not found.',
  request: { params: rowPath, query: workspaceOnly },
  responses: {
    200: ok({ description: 'Deleted', schema: rowDeleted, example: rowDeletedExample }, 'api'),
    ...errors(
      { 400: deleteRowInvalid, 403: WRITE_DENIED, 404: ROW_NOT_FOUND, 429: API_RATE_LIMITED },
      { metering: 'api' },
    ),
  },
});

export function rowRoutes({ db }: ApiDeps, guards: Guards) {
  return new Router(guards, { rateLimited: true })
    .openapi(insertRowsRoute, async (c) => {
      const { tableId } = c.req.valid('param');
      const body = c.req.valid('json');
      const { ref } = await reachTable(db, c.get('principal'), tableId, body.workspaceId, 'write');
      if (body.rows === undefined) {
        const row = await insertRow(db, ref, body.data);
        return c.json({ success: true as const, data: { row, message: 'Row inserted' } }, 200);
      }
      const rows = await insertRows(db, ref, body.rows);
      return c.json(
        {
          success: true as const,
          data: { rows, insertedCount: rows.length, message: `${rows.length} rows inserted` },
        },
        200,
      );
    })
    .openapi(queryRowsRoute, async (c) => {
      const { tableId } = c.req.valid('param');
      const q = c.req.valid('query');
      const { ref } = await reachTable(db, c.get('principal'), tableId, q.workspaceId, 'read');
      const { rows, total } = await queryRows(db, ref, q);
      const pagination = { total, limit: q.limit, offset: q.offset, hasMore: q.offset + rows.length < total };
      return c.json({ success: true as const, data: { rows, pagination } }, 200);
    })
    .openapi(updateRowsRoute, async (c) => {
      const { tableId } = c.req.valid('param');
      const body = c.req.valid('json');
      const { ref } = await reachTable(db, c.get('principal'), tableId, body.workspaceId, 'write');
      const result = await updateRows(db, ref, body.filter, body.data);
      return c.json(
        { success: true as const, data: { message: `${result.updatedCount} rows updated`, ...result } },
        200,
      );
    })
    .openapi(deleteRowsRoute, async (c) => {
      const { tableId } = c.req.valid('param');
      const body = c.req.valid('json');
      const { ref } = await reachTable(db, c.get('principal'), tableId, body.workspaceId, 'write');
      const result = await deleteRows(db, ref, {
        ...(body.rowIds ? { ids: body.rowIds } : {}),
        ...(body.filter ? { filter: body.filter } : {}),
      });
      return c.json(
        { success: true as const, data: { message: `${result.deletedCount} rows deleted`, ...result } },
        200,
      );
    })
    .openapi(upsertRowRoute, async (c) => {
      const { tableId } = c.req.valid('param');
      const body = c.req.valid('json');
      const { ref } = await reachTable(db, c.get('principal'), tableId, body.workspaceId, 'write');
      const { row, operation } = await upsertRow(db, ref, body.data, body.conflictTarget);
      return c.json(
        {
          success: true as const,
          data: { row: withoutPosition(row), operation, message: UPSERTED[operation] },
        },
        200,
      );
    })
    .openapi(getRowRoute, async (c) => {
      const { tableId, rowId } = c.req.valid('param');
      const { workspaceId } = c.req.valid('query');
      const { ref } = await reachTable(db, c.get('principal'), tableId, workspaceId, 'read');
      return c.json({ success: true as const, data: { row: await getRow(db, ref, rowId) } }, 200);
    })
    .openapi(updateRowRoute, async (c) => {
      const { tableId, rowId } = c.req.valid('param');
      const body = c.req.valid('json');
      const { ref } = await reachTable(db, c.get('principal'), tableId, body.workspaceId, 'write');
      const row = await updateRow(db, ref, rowId, body.data);
      return c.json({ success: true as const, data: { row, message: 'Row updated successfully' } }, 200);
    })
    .openapi(deleteRowRoute, async (c) => {
      const { tableId, rowId } = c.req.valid('param');
      const { workspaceId } = c.req.valid('query');
      const { ref } = await reachTable(db, c.get('principal'), tableId, workspaceId, 'write');
      await deleteRow(db, ref, rowId);
      return c.json(
        { success: true as const, data: { message: 'Row deleted successfully', deletedCount: 1 } },
        200,
      );
    }).app;
}
