// The requests and answers of the table operations (create, list, get, delete a table; delete a
// column). Writes name the workspace in the body, reads in the query. The rows' are in row-schemas.ts.
import { z } from 'zod';
import {
  type Table,
  tableColumnsSchema,
  tableDescriptionSchema,
  tableNameSchema,
} from '../../../db/tables/tables.ts';
import { COLUMN_TYPES, type ColumnDef } from '../../../db/tables/values.ts';
import { EX, envelope } from '../../openapi/components.ts';
import { uuidParam } from '../router.ts';

/** The documentation of a `workspaceId` naming the table's workspace. */
export const WORKSPACE = { description: 'The workspace of the table', example: EX.workspaceId };

/** The workspace of a read (query) or of a table's deletion (body). */
export const workspaceOnly = z.object({ workspaceId: z.uuid().meta(WORKSPACE) });

export const tablePath = z.object({ tableId: uuidParam('The table id', EX.tableId) });

export const createTableBody = z.object({
  workspaceId: z.uuid().meta({ description: 'The workspace to create the table in' }),
  name: tableNameSchema.meta({ description: 'Unique in the workspace' }),
  description: tableDescriptionSchema.optional().meta({ description: 'Free text' }),
  schema: z.object({ columns: tableColumnsSchema }).meta({
    description:
      'The columns: 1 to 1000; names `^[a-z_][a-z0-9_]*$` up to 50 characters; types string, number, ' +
      'boolean, date (ISO 8601), json, select (with `options`); `required` and `unique` (not on json ' +
      'or select) default to false',
  }),
});

export const deleteColumnBody = z.object({
  workspaceId: z.uuid().meta(WORKSPACE),
  columnName: z.string().min(1).max(50).meta({ description: 'Not the last column' }),
});

// --- Answers --------------------------------------------------------------------------------------

export const columnSchema = z
  .object({
    name: z.string(),
    type: z.enum(COLUMN_TYPES),
    required: z.boolean(),
    unique: z.boolean(),
    options: z
      .array(z.object({ id: z.string(), name: z.string() }))
      .optional()
      .meta({ description: 'A select column only: its options; rows hold the `id`' }),
  })
  .meta({
    id: 'Column',
    description: 'A column definition, with required and unique filled in',
  }) satisfies z.ZodType<ColumnDef>;

export const tableSchema = z
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

export const tableCreated = envelope({ table: tableSchema, message: z.string() }).meta({
  id: 'TableCreated',
});

export const tableList = envelope({ tables: z.array(tableSchema), totalCount: z.number().int() }).meta({
  id: 'TableList',
});

export const tableFound = envelope({ table: tableSchema }).meta({ id: 'TableFound' });

export const tableDeleted = envelope({ message: z.string(), tableId: z.uuid() }).meta({ id: 'TableDeleted' });

export const columnDeleted = envelope({ columns: z.array(columnSchema), message: z.string() }).meta({
  id: 'ColumnDeleted',
});
