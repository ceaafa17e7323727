// The `table` block: reads and writes a user table of the execution's workspace, named by its name
// or id, through the same stores (and so the same rules: schema, unique columns, row cap, filters)
// as the /api/v1/tables endpoints.
//   query:  filter?, sort?, limit?, offset?   → {rows, total}
//   insert: data (one row) or rows (1 to 1000) → {rows, insertedCount}
//   update: filter, data                       → {updatedCount, updatedRowIds}
//   upsert: data, conflictTarget?              → {row, operation: insert | update}
import { z } from 'zod';
import { isUuid } from '../../db/ids.ts';
import {
  findTableByName,
  insertRows,
  queryRows,
  type TableRef,
  updateRows,
  upsertRow,
} from '../../db/tables/tables.ts';
import { ServiceError } from '../../errors.ts';
import { lostDatabase } from '../executor/abandon.ts';
import { type BlockContext, type BlockType, describeServiceError } from './block.ts';

// A field may hold a reference, resolved to its value only when the block runs.
const REFERENCE = /^<[^<>\s]+>$/;
const reference = z.string().regex(REFERENCE, 'Must be a number or a reference such as <start.limit>');
const count = (min: number, max: number) => z.union([z.number().int().min(min).max(max), reference]);

const schema = z
  .object({
    operation: z.enum(['query', 'insert', 'update', 'upsert']),
    /** The table's name in the workspace, or its id. */
    table: z.string().min(1).max(128),
    filter: z.unknown().optional(),
    sort: z.unknown().optional(),
    limit: count(1, 1000).optional(),
    offset: count(0, 1_000_000_000).optional(),
    data: z.unknown().optional(),
    rows: z.unknown().optional(),
    conflictTarget: z.string().min(1).max(50).optional(),
  })
  .strict()
  .superRefine((c, issue) => {
    const need = (field: keyof typeof c, why: string) => {
      if (c[field] === undefined) issue.addIssue({ code: 'custom', path: [field], message: why });
    };
    const forbid = (fields: (keyof typeof c)[]) => {
      for (const field of fields) {
        if (c[field] !== undefined)
          issue.addIssue({ code: 'custom', path: [field], message: `Not used by operation ${c.operation}` });
      }
    };
    if (c.operation === 'query') forbid(['data', 'rows', 'conflictTarget']);
    if (c.operation === 'insert') {
      forbid(['filter', 'sort', 'limit', 'offset', 'conflictTarget']);
      if ((c.data === undefined) === (c.rows === undefined))
        issue.addIssue({
          code: 'custom',
          path: ['data'],
          message: 'insert takes either data (one row) or rows',
        });
    }
    if (c.operation === 'update') {
      need('filter', 'update needs a filter ({} updates every row)');
      need('data', 'update needs the data to set');
      forbid(['sort', 'limit', 'offset', 'rows', 'conflictTarget']);
    }
    if (c.operation === 'upsert') {
      need('data', 'upsert needs the row data');
      forbid(['filter', 'sort', 'limit', 'offset', 'rows']);
    }
  });

export type TableConfig = z.infer<typeof schema>;

export const tableBlock: BlockType<TableConfig> = {
  type: 'table',
  schema,
  async run(config, ctx) {
    try {
      const ref = await resolveTable(ctx, config.table);
      switch (config.operation) {
        case 'query':
          return {
            output: await queryRows(ctx.db, ref, {
              filter: config.filter,
              sort: config.sort,
              ...(config.limit !== undefined ? { limit: asCount(config.limit, 'limit') } : {}),
              ...(config.offset !== undefined ? { offset: asCount(config.offset, 'offset') } : {}),
            }),
          };
        case 'insert': {
          const rows = config.rows !== undefined ? config.rows : [config.data];
          if (!Array.isArray(rows)) throw new Error('rows must resolve to an array of row objects');
          const inserted = await insertRows(ctx.db, ref, rows);
          return { output: { rows: inserted, insertedCount: inserted.length } };
        }
        case 'update':
          return { output: await updateRows(ctx.db, ref, config.filter, config.data) };
        case 'upsert':
          return { output: await upsertRow(ctx.db, ref, config.data, config.conflictTarget) };
      }
    } catch (err) {
      // Every statement of this block goes to our database: losing it is the runner's loss.
      throw err instanceof ServiceError ? new Error(describe(config.table, err)) : lostDatabase(err);
    }
  },
};

async function resolveTable(ctx: BlockContext, table: string): Promise<TableRef> {
  const byName = await findTableByName(ctx.db, ctx.workspaceId, table);
  if (byName) return { id: byName.id, workspaceId: ctx.workspaceId };
  // An id is taken as is: the stores answer 404 for one outside this workspace.
  if (isUuid(table)) return { id: table, workspaceId: ctx.workspaceId };
  throw new Error(`No table named "${table}" in this workspace`);
}

function asCount(value: number | string, field: string): number {
  if (typeof value !== 'number') throw new Error(`${field} must resolve to a whole number`);
  return value;
}

/** A store's refusal for the span, naming the table when it was not found. */
function describe(table: string, err: ServiceError): string {
  return describeServiceError(err, err.status === 404 ? `${err.message} (table "${table}")` : err.message);
}
