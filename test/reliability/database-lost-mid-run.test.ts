// The database lost during a run, while a runner records a block's checkpoint or while a block that
// uses only our database runs (table, a knowledge search's statements): the runner abandons the
// attempt (the job goes back to the queue) instead of failing the execution, and the retry finishes
// it. The loss is made exact, not timed: a table the statement needs is locked before the execution
// starts, so the runner's statement waits there; then the backend running it is terminated, as a
// restart or failover terminates it, and the lock is let go.
// pg_terminate_backend needs a server database: the TEST_DATABASE_URL pass.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Db, openPostgres } from '../../db/client.ts';
import { ingest } from '../api/knowledge-helpers.ts';
import { expectOk, makeTable, tablesApi } from '../api/tables-helpers.ts';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';
import { startTargetServer, type TargetServer } from '../helpers/target-server.ts';
import { until } from '../helpers/until.ts';
import { deployWorkflow, pollJob } from '../helpers/workflows.ts';

const serverDatabase = Boolean(process.env.TEST_DATABASE_URL);

describe.runIf(serverDatabase)('database lost during a run', () => {
  let svc: TestService;
  let tenant: Tenant;
  let operator: Db;
  let target: TargetServer;

  beforeAll(async () => {
    svc = await startTestService(
      // Searches go to the index: the postings' load would be a statement on the locked table too.
      { HTTP_ALLOW_LIST: '127.0.0.1', KNOWLEDGE_INDEX_MEMORY_MB: '0' },
      { runner: true },
    );
    tenant = await createTenant(svc.admin, { plan: 'enterprise' });
    operator = openPostgres(svc.config.DATABASE_URL as string, { max: 2 });
    target = await startTargetServer();
  });
  afterAll(async () => {
    await target?.close();
    await operator?.close();
    await svc?.close();
  });

  /**
   * Runs the workflow with one statement's connection lost: `lock` keeps the statement waiting, and
   * the backend whose statement (`waiting`, an ILIKE pattern) waits on it is terminated. Answers the
   * execution's end and detail.
   */
  async function loseStatement(
    definition: unknown,
    lock = 'lock table execution_checkpoints in exclusive mode',
    waiting = 'insert into execution_checkpoints%',
  ) {
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, definition);
    let id = '';
    await operator.transaction(async (tx) => {
      await tx.query(lock);
      const started = await svc.call('POST', `/api/workflows/${wf}/execute`, {
        key: tenant.key,
        body: { async: true },
      });
      expect(started.status).toBe(202);
      id = started.body.taskId as string;
      await until(async () => {
        const rows = await operator.query<{ terminated: boolean }>(
          `select pg_terminate_backend(pid) as terminated from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock' and query ilike $1`,
          [waiting],
        );
        return rows.some((r) => r.terminated) ? true : undefined;
      }, `a statement like ${waiting} waiting on the lock`);
    });
    const done = await pollJob(svc.call, tenant.key, id, 800);
    const detail = await svc.admin.executions.get.query({ id });
    const spans = (detail.traceSpans as { blockId: string; status: string }[]).map(
      (s) => `${s.blockId}:${s.status}`,
    );
    return { done: done.body, attempt: detail.attempt, spans };
  }

  it('abandons the attempt, and the retry runs on from what was recorded', async () => {
    const { done, attempt, spans } = await loseStatement({
      blocks: [
        { id: 'call', type: 'http', url: `${target.base}/effect` },
        { id: 'after', type: 'http', url: `${target.base}/after` },
        { id: 'r', type: 'response', data: { first: '<call.data.hit>', second: '<after.data.hit>' } },
      ],
      edges: [
        { from: 'call', to: 'after' },
        { from: 'after', to: 'r' },
      ],
    });
    expect(done.status).toBe('completed');
    expect(done.output).toEqual({ first: '/effect', second: '/after' });
    // The first call's record was lost, so the retry ran it again; what followed it ran once.
    expect(target.hits.get('/effect')).toBe(2);
    expect(target.hits.get('/after')).toBe(1);
    expect(attempt).toBe(2);
    // The trace is the completing attempt's: each block once, no failed span.
    expect(spans).toEqual(['call:success', 'after:success', 'r:success']);
  });

  it("is not a failure a loop's error edge takes", async () => {
    const { done, attempt } = await loseStatement({
      blocks: [
        {
          id: 'each',
          type: 'loop',
          count: 2,
          blocks: [{ id: 'call', type: 'http', url: `${target.base}/loop?i=<loop.index>` }],
          edges: [],
        },
        { id: 'ok', type: 'response', data: 'ok' },
        { id: 'caught', type: 'response', data: 'caught' },
      ],
      edges: [
        { from: 'each', to: 'ok' },
        { from: 'each', to: 'caught', branch: 'error' },
      ],
    });
    expect(done.status).toBe('completed');
    expect(done.output).toBe('ok');
    expect(attempt).toBe(2);
    // The iteration whose record was lost ran again; the other ran once.
    expect(target.hits.get('/loop?i=0')).toBe(2);
    expect(target.hits.get('/loop?i=1')).toBe(1);
  });

  it("rolls a table block's writes back with its record, and writes them once on the retry", async () => {
    const api = tablesApi(svc, tenant.key, tenant.workspace.id);
    const table = await makeTable(api, [
      { name: 'email', type: 'string', required: true },
      { name: 'n', type: 'number' },
    ]);
    const { done, attempt } = await loseStatement({
      blocks: [
        { id: 'add', type: 'table', operation: 'insert', table: table.id, rows: [{ email: 'a@x.io', n: 1 }] },
        { id: 'r', type: 'response', data: 'written' },
      ],
      edges: [{ from: 'add', to: 'r' }],
    });
    expect(done.status).toBe('completed');
    expect(attempt).toBe(2);
    const rows = await api.query(table.id);
    expectOk(rows);
    expect(rows.body.data.rows.map((r: { data: unknown }) => r.data)).toEqual([{ email: 'a@x.io', n: 1 }]);
  });

  it("abandons the attempt when a table block's query loses the database", async () => {
    const api = tablesApi(svc, tenant.key, tenant.workspace.id);
    const table = await makeTable(api, [{ name: 'email', type: 'string', required: true }]);
    expectOk(await api.insert(table.id, { data: { email: 'q@x.io' } }));
    const { done, attempt } = await loseStatement(
      {
        blocks: [
          { id: 'read', type: 'table', operation: 'query', table: table.id, filter: {} },
          { id: 'r', type: 'response', data: { rows: '<read.rows>' } },
        ],
        edges: [{ from: 'read', to: 'r' }],
      },
      'lock table table_rows in access exclusive mode',
      'select%table_rows%',
    );
    expect(done.status).toBe('completed');
    expect(attempt).toBe(2);
    expect((done.output as { rows: { data: unknown }[] }).rows.map((r) => r.data)).toEqual([
      { email: 'q@x.io' },
    ]);
  });

  it("abandons the attempt when a knowledge search's statements lose the database", async () => {
    const kb = await svc.admin.knowledge.create.mutate({ workspaceId: tenant.workspace.id, name: 'kb' });
    const doc = await ingest(svc, tenant.key, kb.id, {
      workspaceId: tenant.workspace.id,
      name: 'stars.txt',
      content: 'Telescopes gather starlight so astronomers can observe distant galaxies.',
    });
    expect(doc.processingStatus).toBe('completed');
    const { done, attempt } = await loseStatement(
      {
        blocks: [
          { id: 'search', type: 'knowledge', knowledgeBaseId: kb.id, query: 'telescopes starlight' },
          { id: 'r', type: 'response', data: { found: '<search.totalResults>' } },
        ],
        edges: [{ from: 'search', to: 'r' }],
      },
      'lock table knowledge_chunks in access exclusive mode',
      '%knowledge_chunks%',
    );
    expect(done.status).toBe('completed');
    expect(attempt).toBe(2);
    expect(done.output).toEqual({ found: 1 });
  });

  it("keeps a block's own refused connection a failure of the run", async () => {
    // The same error code as a lost database (ECONNREFUSED), but from the block's target.
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, {
      blocks: [{ id: 'call', type: 'http', url: `http://127.0.0.1:${port}/gone` }],
      edges: [],
    });
    const started = await svc.call('POST', `/api/workflows/${wf}/execute`, {
      key: tenant.key,
      body: { async: true },
    });
    const done = await pollJob(svc.call, tenant.key, started.body.taskId, 800);
    expect(done.body.status).toBe('failed');
    expect(done.body.error).toMatch(/Block "call" failed/);
    const detail = await svc.admin.executions.get.query({ id: started.body.taskId });
    expect(detail.attempt).toBe(1);
  });
});
