// Tables: user-defined tables of typed columns in a workspace (create, read, delete, drop a column)
// and the plan's cap on how many a workspace holds. The row operations live in ./rows.ts
// (writes) and ./row-queries.ts (reads) and are re-exported here, so this module is the
// whole store of the resource; what a column may hold is ./values.ts. The row cap (maxRows)
// is never stored: it is read live from the plan and overrides of the workspace's organization
// whenever a table is shown or written.
import { z } from 'zod';
import {
  conflict,
  forbidden,
  invalidField,
  isUniqueViolation,
  notFound,
  ServiceError,
} from '../../errors.ts';
import { type Actor, recordAudit } from '../audit-logs.ts';
import type { Queryable } from '../client.ts';
import { isUuid } from '../ids.ts';
import { effectiveLimits, limitsOf, type PlanName, type QuotaOverrides } from '../plans.ts';
import { checkRef, lockTable, type TableRef } from './locked-table.ts';
import {
  type ColumnDef,
  isStorableText,
  MAX_TABLE_NAME,
  parseColumns,
  tableColumnsSchema,
} from './values.ts';

/** A table as the API shows it. */
export interface Table {
  id: string;
  name: string;
  description: string;
  schema: { columns: ColumnDef[] };
  rowCount: number;
  /** The row cap of the organization's current plan (and overrides). */
  maxRows: number;
  workspaceId: string;
  createdAt: string;
  updatedAt: string;
}

export const tableNameSchema = z
  .string()
  .trim()
  .min(1)
  .max(MAX_TABLE_NAME)
  .refine(isStorableText, 'Not storable text');
export const tableDescriptionSchema = z.string().max(2000).refine(isStorableText, 'Not storable text');
export type { TableRef, TableRow } from './locked-table.ts';
// The store's whole surface, for callers outside db/tables: each function from the module that holds it.
export { insertRow, insertRows, MAX_BATCH_ROWS } from './row-inserts.ts';
export { updateRow, updateRows } from './row-patches.ts';
export { getRow, MAX_QUERY_LIMIT, queryRows, type RowQuery } from './row-queries.ts';
export { deleteRow, deleteRows, upsertRow } from './rows.ts';
export { tableColumnsSchema };

type TableRecord = {
  id: string;
  workspace_id: string;
  name: string;
  description: string;
  columns: ColumnDef[];
  row_count: number;
  created_at: Date;
  updated_at: Date;
  plan: PlanName;
  overrides: QuotaOverrides | null;
};

// A table with what its live row cap depends on.
const SELECT_TABLE = `select t.id, t.workspace_id, t.name, t.description, t.columns, t.row_count, t.created_at,
    t.updated_at, o.plan, q.overrides
  from user_tables t join workspaces w on w.id = t.workspace_id join organizations o on o.id = w.organization_id
  left join quota_overrides q on q.organization_id = o.id`;

const toTable = (r: TableRecord): Table => ({
  id: r.id,
  name: r.name,
  description: r.description,
  schema: { columns: r.columns },
  rowCount: r.row_count,
  maxRows: limitsOf(r.plan, r.overrides).maxRowsPerTable,
  workspaceId: r.workspace_id,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

function parse<T>(schema: z.ZodType<T>, value: unknown, field: string): T {
  const r = schema.safeParse(value);
  if (!r.success) throw invalidField(field, r.error.issues[0]?.message ?? 'Invalid value');
  return r.data;
}

/**
 * Creates a table. Under a lock on the workspace row, so racing creations cannot pass the plan's
 * tables-per-workspace cap (403) nor both take one name (409). Records table.created.
 */
export async function createTable(
  db: Queryable,
  actor: Actor,
  input: { workspaceId: string; name: string; description?: string; columns: unknown },
): Promise<Table> {
  const name = parse(tableNameSchema, input.name, 'name');
  const description = parse(tableDescriptionSchema, input.description ?? '', 'description');
  const columns = parseColumns(input.columns);
  try {
    return await db.transaction(async (tx) => {
      // `no key update`: serialises creations in the workspace without blocking rows that merely
      // reference it (their foreign keys take key-share locks).
      const [ws] = await tx.query<{ organization_id: string }>(
        'select organization_id from workspaces where id = $1 for no key update',
        [input.workspaceId],
      );
      if (!ws) throw notFound('Workspace');
      const { plan, limits } = await effectiveLimits(tx, ws.organization_id);
      const [held] = await tx.query<{ n: number; taken: boolean }>(
        'select count(*)::int as n, bool_or(name = $2) as taken from user_tables where workspace_id = $1',
        [input.workspaceId, name],
      );
      if (held?.taken) throw conflict(`A table named ${name} already exists in this workspace`);
      if ((held?.n ?? 0) >= limits.maxTables) {
        throw forbidden(`The ${plan} plan allows at most ${limits.maxTables} tables per workspace`);
      }
      const [row] = await tx.query<{ id: string }>(
        `insert into user_tables (workspace_id, name, description, columns, created_by)
         values ($1, $2, $3, $4::jsonb, $5) returning id`,
        [input.workspaceId, name, description, JSON.stringify(columns), actor.userId],
      );
      const id = (row as { id: string }).id;
      await recordAudit(tx, actor, {
        organizationId: ws.organization_id,
        workspaceId: input.workspaceId,
        action: 'table.created',
        resourceType: 'table',
        resourceId: id,
        metadata: { name, columns: columns.length },
      });
      return getTable(tx, { id, workspaceId: input.workspaceId });
    });
  } catch (err) {
    // The lock makes this unreachable; the unique index is the guarantee all the same.
    if (isUniqueViolation(err, 'user_tables_workspace_id_name_key')) {
      throw conflict(`A table named ${name} already exists in this workspace`);
    }
    throw err;
  }
}

/** The table, or 404 when it does not exist in that workspace. */
export async function getTable(db: Queryable, ref: TableRef): Promise<Table> {
  checkRef(ref);
  const [row] = await db.query<TableRecord>(`${SELECT_TABLE} where t.id = $1 and t.workspace_id = $2`, [
    ref.id,
    ref.workspaceId,
  ]);
  if (!row) throw notFound('Table');
  return toTable(row);
}

/** A workspace's table by name (what a workflow block names), or null. */
export async function findTableByName(
  db: Queryable,
  workspaceId: string,
  name: string,
): Promise<Table | null> {
  if (!isUuid(workspaceId)) return null;
  const [row] = await db.query<TableRecord>(`${SELECT_TABLE} where t.workspace_id = $1 and t.name = $2`, [
    workspaceId,
    name,
  ]);
  return row ? toTable(row) : null;
}

/** A workspace's tables, oldest first. */
export async function listTables(db: Queryable, workspaceId: string): Promise<Table[]> {
  const rows = await db.query<TableRecord>(
    `${SELECT_TABLE} where t.workspace_id = $1 order by t.created_at, t.id`,
    [workspaceId],
  );
  return rows.map(toTable);
}

/** Deletes a table with its rows; records table.deleted. */
export async function deleteTable(db: Queryable, actor: Actor, ref: TableRef): Promise<void> {
  checkRef(ref);
  await db.transaction(async (tx) => {
    const [gone] = await tx.query<{ name: string; organization_id: string }>(
      `delete from user_tables t using workspaces w where t.id = $1 and t.workspace_id = $2 and w.id = t.workspace_id
       returning t.name, w.organization_id`,
      [ref.id, ref.workspaceId],
    );
    if (!gone) throw notFound('Table');
    await recordAudit(tx, actor, {
      organizationId: gone.organization_id,
      workspaceId: ref.workspaceId,
      action: 'table.deleted',
      resourceType: 'table',
      resourceId: ref.id,
      metadata: { name: gone.name },
    });
  });
}

/**
 * Deletes a column: its definition, its key in every row (one statement), and its unique slots.
 * 404 for an unknown column, 400 for the last one. Records table.column_deleted. Answers the
 * remaining columns.
 */
export async function deleteColumn(
  db: Queryable,
  actor: Actor,
  ref: TableRef,
  columnName: string,
): Promise<ColumnDef[]> {
  return db.transaction(async (tx) => {
    const table = await lockTable(tx, ref);
    if (!table.columns.some((c) => c.name === columnName)) throw notFound('Column');
    if (table.columns.length === 1) {
      throw new ServiceError(400, 'The last column of a table cannot be deleted', {
        details: [
          { code: 'custom', path: ['columnName'], message: 'The table must keep at least one column' },
        ],
      });
    }
    const remaining = table.columns.filter((c) => c.name !== columnName);
    await tx.query('update user_tables set columns = $2::jsonb, updated_at = now() where id = $1', [
      table.id,
      JSON.stringify(remaining),
    ]);
    await tx.query('update table_rows set data = data - $2::text where table_id = $1 and data ? $2::text', [
      table.id,
      columnName,
    ]);
    await tx.query('delete from table_unique_values where table_id = $1 and column_name = $2', [
      table.id,
      columnName,
    ]);
    await recordAudit(tx, actor, {
      organizationId: table.organizationId,
      workspaceId: table.workspaceId,
      action: 'table.column_deleted',
      resourceType: 'table',
      resourceId: table.id,
      metadata: { column: columnName },
    });
    return remaining;
  });
}
