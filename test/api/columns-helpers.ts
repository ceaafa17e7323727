// What the column tests share: the column endpoints as one caller calls them, and the whole stored
// state of a table (definition, rows, unique slots) to show that a refused change left it as it was.
import { expect } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { expectOk, type TablesApi } from './tables-helpers.ts';

type Body = Record<string, unknown>;

/** POST and PATCH /api/v1/tables/{id}/columns as `key` calls them, in `workspaceId`. */
export function columnsApi(svc: TestService, key: string, workspaceId: string) {
  const path = (id: string) => `/api/v1/tables/${id}/columns`;
  return {
    add: (id: string, column: Body, more: Body = {}) =>
      svc.call('POST', path(id), { key, body: { workspaceId, column, ...more } }),
    update: (id: string, columnName: string, updates: Body) =>
      svc.call('PATCH', path(id), { key, body: { workspaceId, columnName, updates } }),
  };
}
export type ColumnsApi = ReturnType<typeof columnsApi>;

/** Everything stored of a table: its row (counters, columns), its rows and its unique slots. */
export async function storedTable(svc: TestService, tableId: string) {
  const [table] = await svc.db.query('select * from user_tables where id = $1', [tableId]);
  const rows = await svc.db.query(
    'select id, position, data, created_at, updated_at from table_rows where table_id = $1 order by position',
    [tableId],
  );
  const slots = await svc.db.query(
    `select column_name, value_key, row_id from table_unique_values where table_id = $1
      order by column_name, value_key`,
    [tableId],
  );
  return { table, rows, slots };
}

/** Every unique slot matches its row's value, and every value of a unique column has its slot. */
export async function expectSlotsExact(svc: TestService, tableId: string) {
  const [t] = await svc.db.query<{ columns: { name: string; unique: boolean }[] }>(
    'select columns from user_tables where id = $1',
    [tableId],
  );
  const unique = (t?.columns ?? []).filter((c) => c.unique).map((c) => c.name);
  const [counts] = await svc.db.query<{ slots: number; values: number; stale: number }>(
    `select (select count(*)::int from table_unique_values where table_id = $1) as slots,
            (select count(*)::int from table_rows r, unnest($2::text[]) as c(name)
              where r.table_id = $1 and r.data ? c.name) as values,
            (select count(*)::int from table_unique_values u left join table_rows r on r.id = u.row_id
              where u.table_id = $1 and (r.id is null or not (u.column_name = any($2::text[]))
                or (r.data->>u.column_name) is distinct from u.value_key)) as stale`,
    [tableId, unique],
  );
  expect(counts).toEqual({ slots: counts?.values, values: counts?.values, stale: 0 });
}

/** Inserts rows in batches of 1000. */
export async function insertMany(api: TablesApi, tableId: string, rows: Body[]) {
  for (let i = 0; i < rows.length; i += 1000) {
    const res = await api.insert(tableId, { rows: rows.slice(i, i + 1000) });
    expectOk(res);
  }
}

/** The columns of a table, as GET shows them. */
export async function columnsOf(api: TablesApi, tableId: string) {
  const res = await api.get(tableId);
  expectOk(res);
  return res.body.data.table.schema.columns as Body[];
}
