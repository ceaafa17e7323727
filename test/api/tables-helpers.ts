// What the table tests share: the table endpoints called as one caller in one workspace, tenants
// whose /api/v1 bucket stays out of the way, and the shape checks of answers and 400 details.
import { afterAll, beforeAll, expect } from 'vitest';
import type { QuotaOverrides } from '../../db/plans.ts';
import {
  type ApiResponse,
  createTenant,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';
import { madeLater } from '../helpers/use-service.ts';

type Body = Record<string, unknown>;

/** The table endpoints as `key` calls them, naming `workspaceId` (body for writes, query for reads). */
export function tablesApi(svc: TestService, key: string, workspaceId: string) {
  const rows = (id: string) => `/api/v1/tables/${id}/rows`;
  const write = (method: string, path: string, body: Body = {}) =>
    svc.call(method, path, { key, body: { workspaceId, ...body } });
  const read = (path: string, query: Record<string, string | number | undefined> = {}) =>
    svc.call('GET', path, { key, query: { workspaceId, ...query } });
  return {
    create: (body: Body) => write('POST', '/api/v1/tables', body),
    list: () => read('/api/v1/tables'),
    get: (id: string) => read(`/api/v1/tables/${id}`),
    remove: (id: string) => write('DELETE', `/api/v1/tables/${id}`),
    insert: (id: string, body: Body) => write('POST', rows(id), body),
    update: (id: string, filter: unknown, data: unknown) => write('PUT', rows(id), { filter, data }),
    upsert: (id: string, body: Body) => write('POST', `${rows(id)}/upsert`, body),
    deleteRows: (id: string, body: Body) => write('DELETE', rows(id), body),
    deleteColumn: (id: string, columnName: string) =>
      write('DELETE', `/api/v1/tables/${id}/columns`, { columnName }),
    getRow: (id: string, rowId: string) => read(`${rows(id)}/${rowId}`),
    patchRow: (id: string, rowId: string, data: unknown) => write('PATCH', `${rows(id)}/${rowId}`, { data }),
    /** As the original service has it, the workspace goes in the query. */
    deleteRow: (id: string, rowId: string) =>
      svc.call('DELETE', `${rows(id)}/${rowId}`, { key, query: { workspaceId } }),
    /** filter and sort go as JSON in the query string. */
    query: (id: string, q: { filter?: unknown; sort?: unknown; limit?: number; offset?: number } = {}) =>
      read(rows(id), {
        ...(q.filter !== undefined ? { filter: JSON.stringify(q.filter) } : {}),
        ...(q.sort !== undefined ? { sort: JSON.stringify(q.sort) } : {}),
        limit: q.limit,
        offset: q.offset,
      }),
  };
}
export type TablesApi = ReturnType<typeof tablesApi>;

/** People: a required unique email, and one optional column of each type. */
export const PEOPLE = [
  { name: 'email', type: 'string', required: true, unique: true },
  { name: 'name', type: 'string' },
  { name: 'age', type: 'number' },
  { name: 'active', type: 'boolean' },
  { name: 'born', type: 'date' },
  { name: 'meta', type: 'json' },
];

/** An enterprise tenant (audit logs readable) whose API bucket never empties, with overrides laid on. */
export async function roomyTenant(svc: TestService, overrides: QuotaOverrides = {}): Promise<Tenant> {
  const tenant = await createTenant(svc.admin, { plan: 'enterprise' });
  await svc.admin.quotas.set.mutate({
    orgId: tenant.org.id,
    api: { requestsPerMinute: 100_000, maxBurst: 200_000 },
    ...overrides,
  });
  return tenant;
}

/**
 * The preamble of a table test file: before its tests, a service (with a runner in process when
 * `runner`) and a roomy tenant; after them, the service closed. Answers the service, the tenant, the tables API as that tenant in its workspace, and
 * `apiOf` for another API of the same shape (`apiOf(columnsApi)`), each usable from the tests on.
 */
export function useTablesService(options: { runner?: boolean } = {}) {
  let svc: TestService | undefined;
  let tenant: Tenant | undefined;
  beforeAll(async () => {
    svc = await startTestService({}, { runner: options.runner ?? false });
    tenant = await roomyTenant(svc);
  });
  afterAll(() => svc?.close());
  const apiOf = <A extends object>(make: (svc: TestService, key: string, workspaceId: string) => A): A => {
    let made: A | undefined;
    return madeLater(() => {
      if (!made && svc && tenant) made = make(svc, tenant.key, tenant.workspace.id);
      return made;
    }, 'The API');
  };
  return {
    svc: madeLater(() => svc, 'The service'),
    tenant: madeLater(() => tenant, 'The tenant'),
    api: apiOf(tablesApi),
    apiOf,
  };
}

let n = 0;
/** A table that must be created; answers it. */
export async function makeTable(api: TablesApi, columns: Body[], name = `t${Date.now()}_${n++}`) {
  const res = await api.create({ name, schema: { columns } });
  expectOk(res);
  return res.body.data.table as { id: string; name: string; rowCount: number; maxRows: number };
}

/** A 2xx {success: true, data} answer. */
export function expectOk(res: ApiResponse) {
  expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(200);
  expect(res.body.success).toBe(true);
}

export function expectError(res: ApiResponse, status: number, message?: RegExp) {
  expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(status);
  expect(typeof res.body.error).toBe('string');
  if (status !== 400) expect(Object.keys(res.body)).toEqual(['error']);
  if (message) expect(res.body.error).toMatch(message);
}

/** A 400 whose details are exactly issues at these paths (in any order). */
export function expectIssues(res: ApiResponse, paths: (string | number)[][]) {
  expectError(res, 400);
  const details = res.body.details as { code: string; path: (string | number)[]; message: string }[];
  for (const d of details) {
    expect(typeof d.code).toBe('string');
    expect(typeof d.message).toBe('string');
  }
  expect(details.map((d) => d.path)).toEqual(expect.arrayContaining(paths));
  expect(details).toHaveLength(paths.length);
  return details;
}

/** Every row of a table, in position order (up to 1000). */
export async function allRows(api: TablesApi, id: string) {
  const res = await api.query(id, { limit: 1000 });
  expectOk(res);
  return res.body.data.rows as { id: string; data: Body; position: number }[];
}

/** The table's rowCount and the number of rows a query finds: they must agree. */
export async function expectRowCount(api: TablesApi, id: string, expected: number) {
  const table = await api.get(id);
  expectOk(table);
  const q = await api.query(id, { limit: 1 });
  expect(table.body.data.table.rowCount).toBe(expected);
  expect(q.body.data.pagination.total).toBe(expected);
}

/** The audit entries of an action on a table, newest first (the tenant must be on Enterprise). */
export async function tableAudits(svc: TestService, tenant: Tenant, action: string, tableId: string) {
  const res = await svc.call('GET', '/api/v1/audit-logs', {
    key: tenant.key,
    query: { workspaceId: tenant.workspace.id, action, resourceId: tableId },
  });
  expect(res.status).toBe(200);
  return res.body.data as {
    actorId: string | null;
    resourceType: string;
    metadata: Record<string, unknown>;
  }[];
}
