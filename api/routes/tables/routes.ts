// /api/v1/tables: create (9), list, get and delete tables of a workspace; delete a column (13). The
// row operations are in row-routes.ts. Writes name the workspace in the body and need write
// permission there; reads name it in the query and need read permission. A table not in the named
// workspace is not found.
import { createRoute } from '@hono/zod-openapi';
import { authorizeWorkspace } from '../../../db/access.ts';
import type { Principal } from '../../../db/api-keys.ts';
import type { Queryable } from '../../../db/client.ts';
import {
  createTable,
  deleteColumn,
  deleteTable,
  getTable,
  listTables,
  type TableRef,
} from '../../../db/tables/tables.ts';
import type { WorkspacePermission } from '../../../db/workspaces.ts';
import type { ApiDeps } from '../../context.ts';
import { jsonBody, ok } from '../../openapi/components.ts';
import { type Guards, Router } from '../router.ts';
import {
  BAD_TABLE_ID,
  columnDeletedExample,
  createTableErrors,
  createTableRequest,
  deleteColumnErrors,
  deleteColumnRequest,
  deleteTableRequest,
  READ_400,
  readErrors,
  tableCreatedExample,
  tableDeletedExample,
  tableFoundExample,
  tableListExample,
  WRITE_400,
  writeErrors,
} from './examples.ts';
import {
  columnDeleted,
  createTableBody,
  deleteColumnBody,
  tableCreated,
  tableDeleted,
  tableFound,
  tableList,
  tablePath,
  workspaceOnly,
} from './schemas.ts';

export const tags = ['Tables'];

/** The path's table in the named workspace, once the caller is found to hold `need` there. */
export async function reachTable(
  db: Queryable,
  principal: Principal,
  tableId: string,
  workspaceId: string,
  need: WorkspacePermission,
) {
  const access = await authorizeWorkspace(db, principal, workspaceId, need);
  const ref: TableRef = { id: tableId, workspaceId: access.workspace.id };
  return { access, ref };
}

export const createTableRoute = createRoute({
  method: 'post',
  path: '/api/v1/tables',
  operationId: 'createTable',
  scope: 'tables:write' as const,
  tags,
  summary: 'Create a table',
  description:
    'Creates a table with typed columns. The plan caps tables per workspace (403) and rows per table (`maxRows`).',
  request: { body: jsonBody(createTableBody, createTableRequest) },
  responses: {
    200: ok(
      { description: 'The new table (rowCount 0)', schema: tableCreated, example: tableCreatedExample },
      'api',
    ),
    ...writeErrors(createTableErrors),
  },
});

export const listTablesRoute = createRoute({
  method: 'get',
  path: '/api/v1/tables',
  operationId: 'listTables',
  scope: 'tables:read' as const,
  tags,
  summary: 'List tables',
  description: "The workspace's tables, oldest first.",
  request: { query: workspaceOnly },
  responses: {
    200: ok({ description: 'The tables', schema: tableList, example: tableListExample }, 'api'),
    ...readErrors({ 400: READ_400, 404: 'Workspace not found' }),
  },
});

export const getTableRoute = createRoute({
  method: 'get',
  path: '/api/v1/tables/{tableId}',
  operationId: 'getTable',
  scope: 'tables:read' as const,
  tags,
  summary: 'Get a table',
  request: { params: tablePath, query: workspaceOnly },
  responses: {
    200: ok({ description: 'The table', schema: tableFound, example: tableFoundExample }, 'api'),
    ...readErrors({}),
  },
});

export const deleteTableRoute = createRoute({
  method: 'delete',
  path: '/api/v1/tables/{tableId}',
  operationId: 'deleteTable',
  scope: 'tables:write' as const,
  tags,
  summary: 'Delete a table',
  description: 'Deletes the table with its rows.',
  request: { params: tablePath, body: jsonBody(workspaceOnly, deleteTableRequest) },
  responses: {
    200: ok({ description: 'Deleted', schema: tableDeleted, example: tableDeletedExample }, 'api'),
    ...writeErrors({ 400: [WRITE_400, BAD_TABLE_ID] }),
  },
});

export const deleteColumnRoute = createRoute({
  method: 'delete',
  path: '/api/v1/tables/{tableId}/columns',
  operationId: 'deleteColumn',
  scope: 'tables:write' as const,
  tags,
  summary: 'Delete a column',
  description:
    'Removes the column definition and strips its key from every row. The last column cannot be deleted.',
  request: { params: tablePath, body: jsonBody(deleteColumnBody, deleteColumnRequest) },
  responses: {
    200: ok(
      { description: 'The remaining columns', schema: columnDeleted, example: columnDeletedExample },
      'api',
    ),
    ...writeErrors(deleteColumnErrors),
  },
});

export function tableRoutes({ db }: ApiDeps, guards: Guards) {
  return new Router(guards, { rateLimited: true })
    .openapi(createTableRoute, async (c) => {
      const body = c.req.valid('json');
      const access = await authorizeWorkspace(db, c.get('principal'), body.workspaceId, 'write');
      const table = await createTable(db, access.actor, {
        workspaceId: access.workspace.id,
        name: body.name,
        ...(body.description !== undefined ? { description: body.description } : {}),
        columns: body.schema.columns,
      });
      return c.json({ success: true as const, data: { table, message: `Table ${table.name} created` } }, 200);
    })
    .openapi(listTablesRoute, async (c) => {
      const q = c.req.valid('query');
      const access = await authorizeWorkspace(db, c.get('principal'), q.workspaceId, 'read');
      const tables = await listTables(db, access.workspace.id);
      return c.json({ success: true as const, data: { tables, totalCount: tables.length } }, 200);
    })
    .openapi(getTableRoute, async (c) => {
      const { tableId } = c.req.valid('param');
      const { workspaceId } = c.req.valid('query');
      const { ref } = await reachTable(db, c.get('principal'), tableId, workspaceId, 'read');
      return c.json({ success: true as const, data: { table: await getTable(db, ref) } }, 200);
    })
    .openapi(deleteTableRoute, async (c) => {
      const { tableId } = c.req.valid('param');
      const body = c.req.valid('json');
      const { access, ref } = await reachTable(db, c.get('principal'), tableId, body.workspaceId, 'write');
      await deleteTable(db, access.actor, ref);
      return c.json({ success: true as const, data: { message: 'Table deleted', tableId: ref.id } }, 200);
    })
    .openapi(deleteColumnRoute, async (c) => {
      const { tableId } = c.req.valid('param');
      const body = c.req.valid('json');
      const { access, ref } = await reachTable(db, c.get('principal'), tableId, body.workspaceId, 'write');
      const columns = await deleteColumn(db, access.actor, ref, body.columnName);
      return c.json(
        { success: true as const, data: { columns, message: `Column ${body.columnName} deleted` } },
        200,
      );
    }).app;
}
