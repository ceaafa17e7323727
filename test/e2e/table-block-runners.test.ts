// A table block's writes commit in one transaction with its checkpoint: a runner process SIGKILLed
// at the worst instants (held there by RUNNER_HOLD_AT, runner/hold-points.ts) leaves the rows
// written once. Killed with the insert sent but nothing committed, the next runner inserts the row
// itself; killed just after the commit, it continues after the block with the recorded output. Needs
// a server database (the embedded one serves one process), so it runs in the TEST_DATABASE_URL pass.
import type { ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { exited, killAll, startServiceRunner } from '../helpers/runner-processes.ts';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';
import { deployWorkflow, pollJob } from '../helpers/workflows.ts';

const serverDatabase = Boolean(process.env.TEST_DATABASE_URL);

describe.runIf(serverDatabase)('table block writes across runner processes', () => {
  let svc: TestService;
  let tenant: Tenant;
  let tableId: string;
  let workflowId: string;
  const runners: ChildProcess[] = [];
  const startRunner = (extra: Record<string, string> = {}) => startServiceRunner(svc, runners, extra);

  beforeAll(async () => {
    // Jobs carry the heartbeat they are sent with: short, so the killed runner is noticed soon.
    svc = await startTestService({ QUEUE_HEARTBEAT_SECONDS: '10' });
    tenant = await createTenant(svc.admin);
    const created = await svc.call('POST', '/api/v1/tables', {
      key: tenant.key,
      body: {
        workspaceId: tenant.workspace.id,
        name: 'ledger',
        schema: { columns: [{ name: 'ref', type: 'string', required: true }] },
      },
    });
    expect(created.status).toBe(200);
    tableId = created.body.data.table.id;
    workflowId = await deployWorkflow(svc.admin, tenant.workspace.id, {
      inputs: { ref: { type: 'string', required: true } },
      blocks: [
        { id: 'add', type: 'table', operation: 'insert', table: 'ledger', data: { ref: '<start.ref>' } },
        { id: 'done', type: 'response', data: { id: '<add.rows.0.id>' } },
      ],
      edges: [{ from: 'add', to: 'done' }],
    });
  });
  afterEach(() => killAll(runners));
  afterAll(async () => {
    await killAll(runners);
    await svc?.close();
  });

  const rowsWith = async (ref: string) =>
    (
      await svc.call('GET', `/api/v1/tables/${tableId}/rows`, {
        key: tenant.key,
        query: { workspaceId: tenant.workspace.id, filter: JSON.stringify({ ref }) },
      })
    ).body.data.rows as { id: string }[];

  /** Runs the workflow on a runner held at `point`, kills it there, and lets a fresh runner finish. */
  async function killedAt(point: string, ref: string) {
    const doomed = await startRunner({ RUNNER_HOLD_AT: point });
    const held = new Promise<void>((resolve) => {
      let out = '';
      doomed.stdout?.on('data', (d) => {
        out += d;
        if (out.includes(`held at ${point}`)) resolve();
      });
    });
    const started = await svc.call('POST', `/api/workflows/${workflowId}/execute`, {
      key: tenant.key,
      body: { async: true, inputs: { ref } },
    });
    expect(started.status).toBe(202);
    const id = started.body.taskId as string;
    await held;
    doomed.kill('SIGKILL');
    await exited(doomed);
    return id;
  }

  const finish = async (id: string) => {
    await startRunner();
    const res = await pollJob(svc.call, tenant.key, id, 2400);
    expect(res.body.status).toBe('completed');
    const [row] = await svc.db.query<{ attempt: number }>('select attempt from executions where id = $1', [
      id,
    ]);
    expect(row?.attempt).toBe(2);
    return res.body.output as { id: string };
  };

  it('killed with the insert sent but not committed: the row was never written, the next runner writes it once', async () => {
    const id = await killedAt('table-written', 'before-commit');
    // The killed runner's transaction died with its connection: nothing of it holds.
    expect(await rowsWith('before-commit')).toEqual([]);
    const output = await finish(id);
    const rows = await rowsWith('before-commit');
    expect(rows.map((r) => r.id)).toEqual([output.id]);
  }, 90_000);

  it('killed just after the commit: the next runner continues after the block, the row written once', async () => {
    const id = await killedAt('table-committed', 'after-commit');
    const written = await rowsWith('after-commit');
    expect(written).toHaveLength(1);
    const output = await finish(id);
    // The recorded output names the row the killed runner wrote; no second row.
    expect(output.id).toBe(written[0]?.id);
    expect((await rowsWith('after-commit')).map((r) => r.id)).toEqual([output.id]);
    const detail = await svc.admin.executions.get.query({ id });
    expect(detail.traceSpans.map((s: { blockId: string }) => s.blockId).sort()).toEqual(['add', 'done']);
  }, 90_000);
});
