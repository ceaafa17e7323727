// The `table` workflow block end to end: a workflow that inserts, queries, updates and upserts rows of
// a user table through the real queue and runner, with the table rules (schema, unique columns,
// workspace scope) holding as they do for the REST endpoints.
import { beforeAll, expect, it } from 'vitest';
import { makeTable, useTablesService } from '../api/tables-helpers.ts';
import { adminError, createTenant } from '../helpers/service.ts';
import { deployWorkflow } from '../helpers/workflows.ts';

const { svc, tenant, api } = useTablesService({ runner: true });
let tableId: string;

beforeAll(async () => {
  const columns = [
    { name: 'email', type: 'string', required: true, unique: true },
    { name: 'visits', type: 'number' },
  ];
  tableId = (await makeTable(api, columns, 'contacts')).id;
});

const run = async (definition: unknown, inputs: Record<string, unknown> = {}) => {
  const workflowId = await deployWorkflow(svc.admin, tenant.workspace.id, definition);
  const res = await svc.call('POST', `/api/workflows/${workflowId}/execute`, {
    key: tenant.key,
    body: { inputs },
  });
  expect(res.status).toBe(200);
  return res.body;
};

const rowsOf = async () =>
  (await api.query(tableId, { sort: { email: 'asc' } })).body.data.rows.map((r: { data: unknown }) => r.data);

it('inserts, queries, updates and upserts rows of a table named in the workflow', async () => {
  const result = await run(
    {
      inputs: { email: { type: 'string', required: true } },
      blocks: [
        {
          id: 'add',
          type: 'table',
          operation: 'insert',
          table: 'contacts',
          rows: [
            { email: '<start.email>', visits: 1 },
            { email: 'b@example.com', visits: 5 },
          ],
        },
        {
          id: 'bump',
          type: 'table',
          operation: 'update',
          table: 'contacts',
          filter: { visits: { lt: 3 } },
          data: { visits: 2 },
        },
        {
          id: 'again',
          type: 'table',
          operation: 'upsert',
          table: tableId,
          data: { email: 'b@example.com', visits: 6 },
        },
        {
          id: 'fresh',
          type: 'table',
          operation: 'upsert',
          table: 'contacts',
          data: { email: 'c@example.com' },
        },
        {
          id: 'read',
          type: 'table',
          operation: 'query',
          table: 'contacts',
          filter: { visits: { gte: 2 } },
          sort: { visits: 'desc' },
          limit: 1,
        },
        {
          id: 'out',
          type: 'response',
          data: {
            inserted: '<add.insertedCount>',
            updated: '<bump.updatedCount>',
            upserts: ['<again.operation>', '<fresh.operation>'],
            top: '<read.rows.0.data>',
            matching: '<read.total>',
          },
        },
      ],
      edges: [
        { from: 'add', to: 'bump' },
        { from: 'bump', to: 'again' },
        { from: 'again', to: 'fresh' },
        { from: 'fresh', to: 'read' },
        { from: 'read', to: 'out' },
      ],
    },
    { email: 'a@example.com' },
  );
  expect(result).toMatchObject({
    success: true,
    output: {
      inserted: 2,
      updated: 1,
      upserts: ['update', 'insert'],
      top: { email: 'b@example.com', visits: 6 },
      matching: 2,
    },
  });
  expect(await rowsOf()).toEqual([
    { email: 'a@example.com', visits: 2 },
    { email: 'b@example.com', visits: 6 },
    { email: 'c@example.com' },
  ]);
});

it('fails the block, and writes nothing, when a row breaks the table rules', async () => {
  const before = await rowsOf();
  const insert = (rows: unknown[]) =>
    run({ blocks: [{ id: 'add', type: 'table', operation: 'insert', table: 'contacts', rows }] });
  const invalid = await insert([{ email: 'new@example.com' }, { visits: 'many' }]);
  expect(invalid.success).toBe(false);
  expect(invalid.error).toContain('rows.1.email: Column email is required');
  expect(invalid.error).toContain('rows.1.visits');
  const taken = await insert([{ email: 'new@example.com' }, { email: 'a@example.com' }]);
  expect(taken.success).toBe(false);
  expect(taken.error).toContain('rows.1.email');
  expect(await rowsOf()).toEqual(before);
});

it('hands a refused write to its error edge inside the transaction of its checkpoint', async () => {
  // The block's writes and its checkpoint share one transaction: the refused insert is rolled back
  // to its savepoint, so the handled failure is still recorded and the next table block writes.
  const before = await rowsOf();
  const result = await run({
    blocks: [
      {
        id: 'add',
        type: 'table',
        operation: 'insert',
        table: 'contacts',
        rows: [{ email: 'retried@example.com' }, { email: 'a@example.com' }],
      },
      {
        id: 'note',
        type: 'table',
        operation: 'insert',
        table: 'contacts',
        data: { email: 'noted@example.com' },
      },
      { id: 'out', type: 'response', data: { error: '<add.error>', noted: '<note.insertedCount>' } },
    ],
    edges: [
      { from: 'add', to: 'note', branch: 'error' },
      { from: 'note', to: 'out' },
    ],
  });
  expect(result).toMatchObject({
    success: true,
    output: { error: expect.stringContaining('rows.1.email'), noted: 1 },
  });
  const spans = (await svc.admin.executions.get.query({ id: result.executionId })).traceSpans;
  expect(spans.filter((s: { blockId: string }) => s.blockId === 'add')).toHaveLength(1);
  expect(await rowsOf()).toEqual(
    [...before, { email: 'noted@example.com' }].sort((a, b) => a.email.localeCompare(b.email)),
  );
});

it('reaches only the tables of its own workspace', async () => {
  const other = await createTenant(svc.admin, { plan: 'enterprise' });
  const unknown = await run({ blocks: [{ id: 'q', type: 'table', operation: 'query', table: 'nope' }] });
  expect(unknown).toMatchObject({ success: false, error: expect.stringContaining('No table named "nope"') });
  // The other tenant's workflow names this tenant's table by id: not found, as if it did not exist.
  const workflowId = await deployWorkflow(svc.admin, other.workspace.id, {
    blocks: [{ id: 'q', type: 'table', operation: 'query', table: tableId }],
  });
  const res = await svc.call('POST', `/api/workflows/${workflowId}/execute`, { key: other.key, body: {} });
  expect(res.body).toMatchObject({ success: false, error: expect.stringContaining('not found') });
});

it('refuses a malformed table block when the workflow is created', async () => {
  const bad = async (block: Record<string, unknown>) =>
    adminError(
      svc.admin.workflows.create.mutate({
        workspaceId: tenant.workspace.id,
        name: 'bad',
        definition: { blocks: [{ id: 't', type: 'table', table: 'contacts', ...block }] },
      }),
    );
  expect((await bad({ operation: 'drop' })).httpStatus).toBe(400);
  expect((await bad({ operation: 'insert' })).httpStatus).toBe(400);
  expect((await bad({ operation: 'insert', data: {}, rows: [] })).httpStatus).toBe(400);
  expect((await bad({ operation: 'update', data: { visits: 1 } })).httpStatus).toBe(400);
  expect((await bad({ operation: 'query', limit: 5000 })).httpStatus).toBe(400);
  expect((await bad({ operation: 'query', limit: 'ten' })).httpStatus).toBe(400);
});
