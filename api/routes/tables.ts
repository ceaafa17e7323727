// /api/v1/tables: create, list, get and delete tables of a workspace (9); insert (10), bulk-update
// (11), upsert (12), query, get and delete rows; delete a column (13). Writes name the workspace in
// the body and need write permission there; reads name it in the query and need read permission.
// A table not in the named workspace is not found. Row values, filters and sorts are checked by
// the store against the table's schema, so their issues name the row and column.
import { type Context, Hono } from 'hono';
import { z } from 'zod';
import { authorizeWorkspace, type WorkspaceAccess } from '../../db/access.ts';
import {
  createTable,
  deleteColumn,
  deleteRows,
  deleteTable,
  getRow,
  getTable,
  insertRow,
  insertRows,
  listTables,
  MAX_BATCH_ROWS,
  MAX_QUERY_LIMIT,
  queryRows,
  type TableRef,
  type TableRow,
  tableColumnsSchema,
  tableDescriptionSchema,
  tableNameSchema,
  updateRows,
  upsertRow,
} from '../../db/tables/tables.ts';
import type { WorkspacePermission } from '../../db/workspaces.ts';
import { invalidField } from '../../errors.ts';
import { parseJson } from '../../json-errors.ts';
import type { ApiDeps, ApiEnv } from '../context.ts';
import { jsonBody, queryParams, wholeNumberParam } from '../middleware/validate.ts';

export const workspaceOnly = z.object({ workspaceId: z.uuid() });

export const createTableBody = z.object({
  workspaceId: z.uuid(),
  name: tableNameSchema,
  description: tableDescriptionSchema.optional(),
  schema: z.object({ columns: tableColumnsSchema }),
});

// Row data stays `unknown` here: the store checks it against the table's columns, and its issues
// name the row and column ('rows', 3, 'email').
export const insertRowsBody = z
  .object({
    workspaceId: z.uuid(),
    data: z.unknown().optional(),
    rows: z.array(z.unknown()).min(1).max(MAX_BATCH_ROWS).optional(),
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
  .refine((f) => Object.keys(f).length > 0, 'Give at least one condition');

export const updateRowsBody = z.object({
  workspaceId: z.uuid(),
  filter: filterSchema,
  data: z.unknown(),
});

export const upsertRowBody = z.object({
  workspaceId: z.uuid(),
  data: z.unknown(),
  conflictTarget: z.string().min(1).max(50).optional(),
});

export const deleteRowsBody = z
  .object({
    workspaceId: z.uuid(),
    rowIds: z.array(z.uuid()).min(1).max(MAX_BATCH_ROWS).optional(),
    filter: filterSchema.optional(),
  })
  .refine((b) => (b.rowIds === undefined) !== (b.filter === undefined), {
    path: ['rowIds'],
    message: 'Give either rowIds or a filter',
  });

export const deleteColumnBody = z.object({ workspaceId: z.uuid(), columnName: z.string().min(1).max(50) });

/** A JSON value carried in a query parameter (filter, sort). */
const jsonParam = z.string().transform((text, ctx): unknown => {
  try {
    return parseJson(text);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `Must be JSON: ${(err as Error).message}` });
    return z.NEVER;
  }
});
export const queryRowsQuery = z.object({
  workspaceId: z.uuid(),
  filter: jsonParam.optional(),
  sort: jsonParam.optional(),
  limit: wholeNumberParam(1, MAX_QUERY_LIMIT).default(100),
  offset: wholeNumberParam(0, Number.MAX_SAFE_INTEGER).default(0),
});

const uuid = z.uuid();
function idParam(c: Context<ApiEnv>, name: 'tableId' | 'rowId'): string {
  const id = c.req.param(name);
  if (!uuid.safeParse(id).success) throw invalidField(name, 'Must be a UUID', 'invalid_format');
  return id as string;
}

const UPSERTED = { insert: 'Row inserted', update: 'Row updated' } as const;

/** The upsert answer shows the row without its position. */
const withoutPosition = ({ position: _position, ...row }: TableRow) => row;

export function tableRoutes({ db }: ApiDeps) {
  const principalAccess = (c: Context<ApiEnv>, workspaceId: string, need: WorkspacePermission) =>
    authorizeWorkspace(db, c.get('principal'), workspaceId, need);
  /** The path's table in the workspace the caller reached. */
  const refOf = (c: Context<ApiEnv>, access: WorkspaceAccess): TableRef => ({
    id: idParam(c, 'tableId'),
    workspaceId: access.workspace.id,
  });
  /** A write to the path's table: its body, the caller's write access, the table. */
  async function writing<S extends z.ZodType<{ workspaceId: string }>>(c: Context<ApiEnv>, schema: S) {
    idParam(c, 'tableId');
    const body = await jsonBody(c, schema);
    const access = await principalAccess(c, body.workspaceId, 'write');
    return { body, access, ref: refOf(c, access) };
  }
  /** A read of the path's table: the caller's read access in the query's workspace, the table. */
  async function reading(c: Context<ApiEnv>, workspaceId: string) {
    idParam(c, 'tableId');
    return refOf(c, await principalAccess(c, workspaceId, 'read'));
  }

  return new Hono<ApiEnv>()
    .post('/', async (c) => {
      const body = await jsonBody(c, createTableBody);
      const access = await principalAccess(c, body.workspaceId, 'write');
      const table = await createTable(db, access.actor, {
        workspaceId: access.workspace.id,
        name: body.name,
        ...(body.description !== undefined ? { description: body.description } : {}),
        columns: body.schema.columns,
      });
      return c.json({ success: true, data: { table, message: `Table ${table.name} created` } });
    })
    .get('/', async (c) => {
      const q = queryParams(c, workspaceOnly);
      const access = await principalAccess(c, q.workspaceId, 'read');
      const tables = await listTables(db, access.workspace.id);
      return c.json({ success: true, data: { tables, totalCount: tables.length } });
    })
    .get('/:tableId', async (c) => {
      const table = await getTable(db, await reading(c, queryParams(c, workspaceOnly).workspaceId));
      return c.json({ success: true, data: { table } });
    })
    .delete('/:tableId', async (c) => {
      const { access, ref } = await writing(c, workspaceOnly);
      await deleteTable(db, access.actor, ref);
      return c.json({ success: true, data: { message: 'Table deleted', tableId: ref.id } });
    })
    .post('/:tableId/rows', async (c) => {
      const { body, ref } = await writing(c, insertRowsBody);
      if (body.rows === undefined) {
        const row = await insertRow(db, ref, body.data);
        return c.json({ success: true, data: { row, message: 'Row inserted' } });
      }
      const rows = await insertRows(db, ref, body.rows);
      return c.json({
        success: true,
        data: { rows, insertedCount: rows.length, message: `${rows.length} rows inserted` },
      });
    })
    .get('/:tableId/rows', async (c) => {
      const q = queryParams(c, queryRowsQuery);
      const { rows, total } = await queryRows(db, await reading(c, q.workspaceId), q);
      return c.json({
        success: true,
        data: {
          rows,
          pagination: { total, limit: q.limit, offset: q.offset, hasMore: q.offset + rows.length < total },
        },
      });
    })
    .put('/:tableId/rows', async (c) => {
      const { body, ref } = await writing(c, updateRowsBody);
      const result = await updateRows(db, ref, body.filter, body.data);
      return c.json({ success: true, data: { message: `${result.updatedCount} rows updated`, ...result } });
    })
    .delete('/:tableId/rows', async (c) => {
      const { body, ref } = await writing(c, deleteRowsBody);
      const result = await deleteRows(db, ref, {
        ...(body.rowIds ? { ids: body.rowIds } : {}),
        ...(body.filter ? { filter: body.filter } : {}),
      });
      return c.json({ success: true, data: { message: `${result.deletedCount} rows deleted`, ...result } });
    })
    .post('/:tableId/rows/upsert', async (c) => {
      const { body, ref } = await writing(c, upsertRowBody);
      const { row, operation } = await upsertRow(db, ref, body.data, body.conflictTarget);
      return c.json({
        success: true,
        data: { row: withoutPosition(row), operation, message: UPSERTED[operation] },
      });
    })
    .get('/:tableId/rows/:rowId', async (c) => {
      const rowId = idParam(c, 'rowId');
      const q = queryParams(c, workspaceOnly);
      const row = await getRow(db, await reading(c, q.workspaceId), rowId);
      return c.json({ success: true, data: { row } });
    })
    .delete('/:tableId/columns', async (c) => {
      const { body, access, ref } = await writing(c, deleteColumnBody);
      const columns = await deleteColumn(db, access.actor, ref, body.columnName);
      return c.json({ success: true, data: { columns, message: `Column ${body.columnName} deleted` } });
    });
}
