// Schema changes of a user table: add a column (a default fills the rows there are) and change one
// (rename, retype, required, unique, a select column's options). Each is one transaction holding
// the table's lock (lockTable, the lock every row write takes first), so no row write interleaves,
// and a refused change leaves the table as it was: every check runs, and every value is converted,
// inside that transaction. The row passes are ./column-scans.ts; deleting a column is ./tables.ts.
import { z } from 'zod';
import { conflict, type FieldIssue, invalidField, notFound, ServiceError } from '../../errors.ts';
import { type Actor, recordAudit } from '../audit-logs.ts';
import type { Queryable } from '../client.ts';
import {
  claimColumnSlots,
  convertColumn,
  refuseDuplicates,
  refuseOutsideOptions,
  refuseRowsWithout,
} from './column-scans.ts';
import { type LockedTable, lockTable, type TableRef } from './locked-table.ts';
import { normalizeOptions, type SelectOption, selectOptionsInput } from './select-options.ts';
import { claimSlots } from './unique-values.ts';
import {
  COLUMN_TYPES,
  type ColumnDef,
  type ColumnType,
  checkValue,
  columnDefSchema,
  columnRuleIssues,
  MAX_COLUMNS,
  uniqueKey,
} from './values.ts';

export type NewColumn = z.infer<typeof columnDefSchema>;

/** The changes a column may take, at least one (the original service's `updates`). */
export const columnUpdatesSchema = z
  .object({
    name: columnDefSchema.shape.name.optional(),
    type: z.enum(COLUMN_TYPES).optional(),
    required: z.boolean().optional(),
    unique: z.boolean().optional(),
    options: selectOptionsInput.optional(),
  })
  .strict()
  .refine((u) => Object.values(u).some((v) => v !== undefined), {
    message: 'Give at least one change: name, type, required, unique or options',
    // Only of a body otherwise valid: an unknown key alone is one issue, not two.
    when: (payload) => payload.issues.length === 0,
  });

export type ColumnUpdates = z.infer<typeof columnUpdatesSchema>;

/** A 400 listing a definition's issues, or nothing. */
function refuseIssues(issues: FieldIssue[], message: string) {
  if (issues.length) throw new ServiceError(400, message, { details: issues });
}

/** The rules no field schema sees (./values.ts columnRuleIssues). */
function definitionIssues(c: ColumnDef, path: (string | number)[]): FieldIssue[] {
  const issues: FieldIssue[] = [];
  columnRuleIssues(c, path, (i) => issues.push({ code: 'custom', ...i }));
  return issues;
}

const optionKeys = (c: ColumnDef) => (c.options ?? []).map((o) => `${o.id}\u0000${o.name}`).join('\u0001');

/** Whether two definitions are the same (a stored one's keys come back in jsonb's order). */
const sameColumn = (a: ColumnDef, b: ColumnDef) =>
  a.name === b.name &&
  a.type === b.type &&
  a.required === b.required &&
  a.unique === b.unique &&
  optionKeys(a) === optionKeys(b);

async function saveColumns(tx: Queryable, table: LockedTable, columns: ColumnDef[]) {
  await tx.query('update user_tables set columns = $2::jsonb, updated_at = now() where id = $1', [
    table.id,
    JSON.stringify(columns),
  ]);
}

/**
 * Adds a column at the end. A `default` (a value of the column's type) is written into every row
 * there is; it is needed for a required column of a table that has rows, and refused for a unique
 * one on more than one row (they would all hold it). 409 for a name the table has. Records
 * table.column_added. Answers the columns.
 */
export async function addColumn(
  db: Queryable,
  actor: Actor,
  ref: TableRef,
  input: { column: NewColumn; default?: unknown },
): Promise<ColumnDef[]> {
  const normalized = input.column.options ? normalizeOptions(input.column.options) : undefined;
  const column: ColumnDef = {
    name: input.column.name,
    type: input.column.type,
    required: input.column.required === true,
    unique: input.column.unique === true,
    ...(normalized ? { options: normalized.options } : {}),
  };
  const issues = definitionIssues(column, ['column']);
  for (const i of normalized?.issues ?? []) {
    issues.push({ code: 'custom', path: ['column', 'options', ...i.path], message: i.message });
  }
  refuseIssues(issues, 'Invalid column');
  let fill: unknown;
  if (input.default !== undefined) {
    const checked = input.default === null ? null : checkValue(column, input.default);
    if (!checked?.ok) {
      throw checked
        ? invalidField('default', checked.message, checked.code)
        : invalidField('default', 'A default is a value of the column, not null', 'invalid_type');
    }
    fill = checked.value;
  }
  return db.transaction(async (tx) => {
    const table = await lockTable(tx, ref);
    if (table.columns.some((c) => c.name === column.name)) {
      throw conflict(`The table already has a column named ${column.name}`);
    }
    if (table.columns.length >= MAX_COLUMNS) {
      throw invalidField('column', `A table has at most ${MAX_COLUMNS} columns`, 'too_big');
    }
    const rows = table.rowCount === 1 ? '1 row' : `${table.rowCount} rows`;
    if (column.required && fill === undefined && table.rowCount > 0) {
      throw invalidField('default', `The table has ${rows}: a required column needs a default to fill them`);
    }
    if (column.unique && fill !== undefined && table.rowCount > 1) {
      throw invalidField('default', `A unique column cannot take one default on the table's ${rows}`);
    }
    const columns = [...table.columns, column];
    await saveColumns(tx, table, columns);
    if (fill !== undefined && table.rowCount > 0) {
      const filled = await tx.query<{ id: string }>(
        `update table_rows set data = data || jsonb_build_object($2::text, $3::jsonb), updated_at = now()
          where table_id = $1 returning id`,
        [table.id, column.name, JSON.stringify(fill)],
      );
      if (column.unique) {
        const slots = filled.map((r) => ({
          column: column.name,
          key: uniqueKey(fill),
          rowId: r.id,
          path: [],
        }));
        await claimSlots(tx, table.id, slots);
      }
    }
    await recordAudit(tx, actor, {
      organizationId: table.organizationId,
      workspaceId: table.workspaceId,
      action: 'table.column_added',
      resourceType: 'table',
      resourceId: table.id,
      metadata: { column: column.name, type: column.type, filled: fill !== undefined ? table.rowCount : 0 },
    });
    return columns;
  });
}

/** The column `updates` make of `old`: options given ids (an existing option's, by name). */
function targetOf(old: ColumnDef, updates: ColumnUpdates): ColumnDef {
  const type: ColumnType = updates.type ?? old.type;
  let options: SelectOption[] | undefined;
  if (updates.options) {
    const normalized = normalizeOptions(updates.options, old.options ?? []);
    refuseIssues(
      normalized.issues.map((i) => ({
        code: 'custom',
        path: ['updates', 'options', ...i.path],
        message: i.message,
      })),
      'Invalid options',
    );
    options = normalized.options;
  } else if (type === 'select' && old.type === 'select') options = old.options;
  const target: ColumnDef = {
    name: updates.name ?? old.name,
    type,
    required: updates.required ?? old.required,
    unique: updates.unique ?? old.unique,
    ...(options ? { options } : {}),
  };
  refuseIssues(definitionIssues(target, ['updates']), 'Invalid column change');
  return target;
}

/**
 * Changes a column, all or nothing: a new name (rows, unique slots and the schema follow it), a
 * new type (every value converted, ./conversions.ts; a value that does not convert refuses it all),
 * required (refused while rows lack a value), unique (refused while rows share one) and a select
 * column's options (refused while rows hold an option left out). 404 for an unknown column, 409
 * for a name another column has. Records table.column_updated. Answers the columns.
 */
export async function updateColumn(
  db: Queryable,
  actor: Actor,
  ref: TableRef,
  columnName: string,
  updates: ColumnUpdates,
): Promise<ColumnDef[]> {
  return db.transaction(async (tx) => {
    const table = await lockTable(tx, ref);
    const index = table.columns.findIndex((c) => c.name === columnName);
    const old = table.columns[index];
    if (!old) throw notFound('Column');
    const target = targetOf(old, updates);
    if (target.name !== old.name && table.columns.some((c) => c.name === target.name)) {
      throw conflict(`The table already has a column named ${target.name}`);
    }
    if (sameColumn(target, old)) return table.columns;

    const retyped = target.type !== old.type;
    const name = old.name;
    if (target.required && !old.required) {
      await refuseRowsWithout(
        tx,
        table.id,
        name,
        `Column ${name} cannot become required: rows have no value`,
      );
    }
    const kept = (target.options ?? []).map((o) => o.id);
    if (!retyped && target.type === 'select' && (old.options ?? []).some((o) => !kept.includes(o.id))) {
      await refuseOutsideOptions(
        tx,
        table.id,
        name,
        kept,
        `The new options of column ${name} leave out values that rows hold`,
      );
    }
    const converted = retyped ? await convertColumn(tx, table.id, old, target) : 0;
    if (target.name !== name) {
      await tx.query(
        `update table_rows set data = (data - $2::text) || jsonb_build_object($3::text, data->$2::text)
          where table_id = $1 and data ? $2::text`,
        [table.id, name, target.name],
      );
    }
    await moveSlots(tx, table.id, old, target, retyped);
    const columns = table.columns.map((c, i) => (i === index ? target : c));
    await saveColumns(tx, table, columns);
    await recordAudit(tx, actor, {
      organizationId: table.organizationId,
      workspaceId: table.workspaceId,
      action: 'table.column_updated',
      resourceType: 'table',
      resourceId: table.id,
      metadata: { column: name, changes: changesOf(old, target), converted },
    });
    return columns;
  });
}

/**
 * The unique slots after a change: dropped when the column stops being unique; checked and built
 * anew when it becomes unique or its values changed type; renamed with the column otherwise.
 */
async function moveSlots(
  tx: Queryable,
  tableId: string,
  old: ColumnDef,
  target: ColumnDef,
  retyped: boolean,
) {
  if (old.unique && (!target.unique || retyped)) {
    await tx.query('delete from table_unique_values where table_id = $1 and column_name = $2', [
      tableId,
      old.name,
    ]);
  }
  if (target.unique && (!old.unique || retyped)) {
    await refuseDuplicates(
      tx,
      tableId,
      target.name,
      retyped
        ? `Column ${old.name} cannot become a unique ${target.type} column: converted values repeat`
        : `Column ${old.name} cannot become unique: values repeat`,
    );
    await claimColumnSlots(tx, tableId, target.name);
  } else if (target.unique && target.name !== old.name) {
    await tx.query(
      'update table_unique_values set column_name = $3 where table_id = $1 and column_name = $2',
      [tableId, old.name, target.name],
    );
  }
}

/** What changed, for the audit entry. */
function changesOf(old: ColumnDef, target: ColumnDef) {
  const changes: Record<string, unknown> = {};
  for (const key of ['name', 'type', 'required', 'unique'] as const) {
    if (old[key] !== target[key]) changes[key] = target[key];
  }
  if (optionKeys(old) !== optionKeys(target)) changes.options = target.options?.length ?? 0;
  return changes;
}
