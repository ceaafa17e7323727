// Schedules with two runner processes on one Postgres: each runs pg-boss's cron pass, and an
// occurrence still fires exactly once, on time, as an execution with trigger `schedule`. Needs a
// server database (the embedded one serves one process), so it runs in the TEST_DATABASE_URL pass.
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll, startServiceRunner } from '../helpers/runner-processes.ts';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';
import { deployWorkflow } from '../helpers/workflows.ts';

const serverDatabase = Boolean(process.env.TEST_DATABASE_URL);

let svc: TestService;
let tenant: Tenant;
const runners: ChildProcess[] = [];

// Both runners try the cron pass every second: as many chances to fire twice as there can be.
const startRunner = () => startServiceRunner(svc, runners, { SCHEDULE_CHECK_SECONDS: '1' });

async function waitFor<T>(what: string, check: () => Promise<T>, polls = 1200): Promise<NonNullable<T>> {
  for (let i = 0; i < polls; i++) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe.runIf(serverDatabase)('schedules with two runner processes', () => {
  beforeAll(async () => {
    svc = await startTestService();
    tenant = await createTenant(svc.admin);
  });
  afterAll(async () => {
    await killAll(runners);
    await svc?.close();
  });

  it('fires each occurrence exactly once, on time, however many runners run the cron pass', async () => {
    await Promise.all([startRunner(), startRunner()]);
    const workflows = await Promise.all(
      [1, 2, 3].map(() =>
        deployWorkflow(svc.admin, tenant.workspace.id, {
          inputs: { n: { type: 'number', required: true } },
          blocks: [{ id: 'r', type: 'response', data: { n: '<start.n>' } }],
        }),
      ),
    );
    // One occurrence, a few seconds ahead on the database's clock (the one the pass reads): a
    // six-field expression naming its second, minute, hour, day and month.
    const [{ now }] = (await svc.db.query<{ now: Date }>('select now()')) as [{ now: Date }];
    const at = new Date(Math.ceil(now.getTime() / 1000) * 1000 + 4000);
    const cron = `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} ${at.getUTCDate()} ${at.getUTCMonth() + 1} *`;
    for (const [n, workflowId] of workflows.entries()) {
      const s = await svc.admin.schedules.create.mutate({ workflowId, cron, inputs: { n } });
      expect(s.nextRunAt).toBe(at.toISOString());
    }

    const runs = await waitFor('every schedule to fire and finish', async () => {
      const rows = await svc.db.query<{
        workflow_id: string;
        status: string;
        trigger: string;
        created_at: Date;
        output: unknown;
      }>(
        'select workflow_id, status, trigger, created_at, output from executions where workflow_id = any($1::uuid[])',
        [workflows],
      );
      return rows.length >= workflows.length && rows.every((r) => r.status === 'completed') ? rows : null;
    });
    const lastFiring = Math.max(...runs.map((r) => r.created_at.getTime()));
    // The occurrence stays due for a minute: let both runners run several more passes over it, and
    // the queues drain, before counting.
    await waitFor('three more cron passes', async () => {
      const [row] = await svc.db.query<{ cron_on: Date | null }>('select cron_on from pgboss.version');
      return row?.cron_on && row.cron_on.getTime() > lastFiring + 3000;
    });
    await waitFor('the firing queues to drain', async () => {
      const [row] = await svc.db.query<{ n: number }>(
        `select count(*)::int as n from pgboss.job where name in ('__pgboss__send-it', 'workflow-schedule', 'workflow-execute')
          and state in ('created', 'retry', 'active')`,
      );
      return row?.n === 0;
    });

    const final = await svc.db.query<{
      workflow_id: string;
      trigger: string;
      created_at: Date;
      output: unknown;
    }>(
      'select workflow_id, trigger, created_at, output from executions where workflow_id = any($1::uuid[])',
      [workflows],
    );
    expect(final.map((r) => r.workflow_id).sort()).toEqual([...workflows].sort());
    for (const run of final) {
      expect(run.trigger).toBe('schedule');
      expect(run.output).toEqual({ n: workflows.indexOf(run.workflow_id) });
      // Not early: pg-boss fires an occurrence once it has come, on the database's clock.
      expect(run.created_at.getTime()).toBeGreaterThanOrEqual(at.getTime());
    }
    for (const s of await svc.admin.schedules.list.query({ workspaceId: tenant.workspace.id }))
      expect(s).toMatchObject({ lastStatus: 'started', lastError: null });
    for (const child of runners) expect(child.exitCode).toBeNull();
  }, 60_000);
});
