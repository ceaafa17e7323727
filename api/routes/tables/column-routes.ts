// /api/v1/tables/{tableId}/columns: add a column (POST) and change one (PATCH), the original
// service's paths and shapes; deleting one (DELETE) is in routes.ts. Both need write permission on
// the workspace named in the body, and change the table all or nothing, under the lock its row
// writes take.
import { createRoute } from '@hono/zod-openapi';
import { addColumn, updateColumn } from '../../../db/tables/columns.ts';
import type { ApiDeps } from '../../context.ts';
import { jsonBody, ok } from '../../openapi/components.ts';
import { type Guards, Router } from '../router.ts';
import {
  addColumnErrors,
  addColumnRequests,
  columnAddedExample,
  columnUpdatedExample,
  updateColumnErrors,
  updateColumnRequests,
} from './column-examples.ts';
import { addColumnBody, columnsChanged, updateColumnBody } from './column-schemas.ts';
import { writeErrors } from './examples.ts';
import { reachTable, tags } from './routes.ts';
import { tablePath } from './schemas.ts';

export const addColumnRoute = createRoute({
  method: 'post',
  path: '/api/v1/tables/{tableId}/columns',
  operationId: 'addColumn',
  scope: 'tables:write' as const,
  tags,
  summary: 'Add a column',
  description:
    'Adds a column after the others. A `default` fills every existing row: a required column needs ' +
    'one when the table has rows, and a unique one cannot take one on more than one row.',
  request: {
    params: tablePath,
    body: jsonBody(addColumnBody, undefined, { examples: addColumnRequests }),
  },
  responses: {
    200: ok(
      { description: 'The columns, the new one last', schema: columnsChanged, example: columnAddedExample },
      'api',
    ),
    ...writeErrors(addColumnErrors),
  },
});

export const updateColumnRoute = createRoute({
  method: 'patch',
  path: '/api/v1/tables/{tableId}/columns',
  operationId: 'updateColumn',
  scope: 'tables:write' as const,
  tags,
  summary: 'Change a column',
  description:
    'Renames a column, changes its type (converting every value; see the conversion rules in the ' +
    'API guide), makes it required or unique or not, or changes a select column’s options. Every ' +
    'change is checked against all the rows first: a refusal is a 400 naming the first offending rows ' +
    '(`["rows", rowId, column]`, with the position in the message), and nothing changes.',
  request: {
    params: tablePath,
    body: jsonBody(updateColumnBody, undefined, { examples: updateColumnRequests }),
  },
  responses: {
    200: ok(
      {
        description: 'The columns, the changed one in its place',
        schema: columnsChanged,
        example: columnUpdatedExample,
      },
      'api',
    ),
    ...writeErrors(updateColumnErrors),
  },
});

export function columnRoutes({ db }: ApiDeps, guards: Guards) {
  return new Router(guards, { rateLimited: true })
    .openapi(addColumnRoute, async (c) => {
      const { tableId } = c.req.valid('param');
      const body = c.req.valid('json');
      const { access, ref } = await reachTable(db, c.get('principal'), tableId, body.workspaceId, 'write');
      const columns = await addColumn(db, access.actor, ref, {
        column: body.column,
        ...(body.default !== undefined ? { default: body.default } : {}),
      });
      return c.json(
        { success: true as const, data: { columns, message: `Column ${body.column.name} added` } },
        200,
      );
    })
    .openapi(updateColumnRoute, async (c) => {
      const { tableId } = c.req.valid('param');
      const body = c.req.valid('json');
      const { access, ref } = await reachTable(db, c.get('principal'), tableId, body.workspaceId, 'write');
      const columns = await updateColumn(db, access.actor, ref, body.columnName, body.updates);
      const name = body.updates.name ?? body.columnName;
      return c.json({ success: true as const, data: { columns, message: `Column ${name} updated` } }, 200);
    }).app;
}
