// Schedules through the admin plane, fired by a real runner on pg-boss's own scheduler. pg-boss's
// TestClock drives its cron pass and job times, so occurrences come due when the test says: a
// schedule fires on time and in its time zone, once per occurrence however many passes see it,
// and its execution (trigger `schedule`) completes; pause, resume and delete reach pg-boss's copy;
// refusals (spend limit, an undeployed workflow) are recorded on the schedule and run nothing.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestClock } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminApp } from '../../admin/app.ts';
import { type AdminClient, createAdminClient } from '../../admin/client.ts';
import { loadConfig } from '../../config.ts';
import { type Db, openPostgres } from '../../db/client.ts';
import { QUEUES } from '../../jobs/queues.ts';
import { reconcileSchedules } from '../../jobs/schedules.ts';
import { createLogger } from '../../logger.ts';
import { type Runner, startRunner } from '../../runner/runner.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { ADMIN_TOKEN, adminError, createTenant, createWorkspace, type Tenant } from '../helpers/service.ts';
import { deployWorkflow } from '../helpers/workflows.ts';

// A Tuesday, before New York's daylight saving time starts (March 9): New York is UTC-5.
const clock = new TestClock(Date.parse('2031-03-04T05:06:20.000Z'));
let tdb: TestDatabase;
let db: Db;
let runner: Runner;
let admin: AdminClient;
let adminApp: ReturnType<typeof createAdminApp>;
let tenant: Tenant;
let dataDir: string;

beforeAll(async () => {
  tdb = await createTestDatabase();
  if (tdb.url) {
    // Every session pg-boss uses must read the test clock: opted in before the pool connects.
    const owner = openPostgres(tdb.url, { max: 1 });
    const [row] = await owner.query<{ name: string }>('select current_database() as name');
    await owner.exec(`alter database ${row?.name} set pgboss.test_clock = 'on'`);
    await owner.close();
  }
  db = tdb.db;
  dataDir = mkdtempSync(join(tmpdir(), 'wfs-schedules-'));
  const config = loadConfig({
    ADMIN_TOKEN,
    ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'silent',
    DATA_DIR: dataDir,
    ...(tdb.url ? { DATABASE_URL: tdb.url } : {}),
    // pg-boss's supervisor runs on the test clock: ticks of a minute must not expire running jobs.
    QUEUE_HEARTBEAT_SECONDS: '3600',
    SCHEDULE_CHECK_SECONDS: '10',
  });
  const encryptionKey = config.ENCRYPTION_KEY as Buffer;
  const log = createLogger('silent');
  runner = await startRunner({ db, config, log, encryptionKey, bossClock: clock });
  adminApp = createAdminApp({ db, config, log, encryptionKey, queue: runner.boss });
  admin = clientFor(ADMIN_TOKEN);
  tenant = await createTenant(admin);
});
afterAll(async () => {
  await runner?.stop();
  await tdb?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

function clientFor(token: string) {
  return createAdminClient({
    url: 'http://admin.test/trpc',
    token,
    fetch: (input, init) => Promise.resolve(adminApp.request(new Request(input, init))),
  });
}

const GREET = {
  inputs: { who: { type: 'string', required: true } },
  blocks: [{ id: 'r', type: 'response', data: { hello: '<start.who>' } }],
};

const newWorkflow = (t: Tenant = tenant) => deployWorkflow(admin, t.workspace.id, GREET);

/** Moves pg-boss's clock to `seconds` past the next whole minute, running every pass and poll due on the way. */
async function tickIntoNextMinute(seconds = 10) {
  const target = Math.floor(clock.now() / 60_000) * 60_000 + 60_000 + seconds * 1000;
  await clock.tick(target - clock.now());
}

/** Polls (the runner works meanwhile) until `check` answers something truthy. */
async function waitFor<T>(what: string, check: () => Promise<T>, polls = 800): Promise<NonNullable<T>> {
  for (let i = 0; i < polls; i++) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const executionsOf = (workflowId: string) =>
  db.query<{ id: string; status: string; trigger: string; output: unknown; created_at: Date }>(
    'select id, status, trigger, output, created_at from executions where workflow_id = $1 order by created_at',
    [workflowId],
  );

/** Waits until the workflow has `count` executions, all finished; answers them. */
const finished = (workflowId: string, count: number) =>
  waitFor(`${count} finished executions of ${workflowId}`, async () => {
    const rows = await executionsOf(workflowId);
    return rows.length === count && rows.every((r) => r.status === 'completed' || r.status === 'failed')
      ? rows
      : null;
  });

const scheduleOf = async (id: string, workspaceId = tenant.workspace.id) =>
  (await admin.schedules.list.query({ workspaceId })).find((s) => s.id === id);

const bossCopy = (id: string) => runner.boss.getSchedule(QUEUES.workflowSchedule, id);

describe('firing', () => {
  it('fires on time and in its time zone; the execution runs with trigger schedule', async () => {
    const [utc, newYork, tokyo] = [await newWorkflow(), await newWorkflow(), await newWorkflow()];
    const a = await admin.schedules.create.mutate({
      workflowId: utc,
      cron: '7 5 * * *',
      inputs: { who: 'utc' },
    });
    const b = await admin.schedules.create.mutate({
      workflowId: newYork,
      cron: '7 0 * * *',
      timezone: 'America/New_York',
      inputs: { who: 'ny' },
    });
    const c = await admin.schedules.create.mutate({
      workflowId: tokyo,
      cron: '7 5 * * *',
      timezone: 'Asia/Tokyo',
      inputs: { who: 'tokyo' },
    });
    expect(a).toMatchObject({
      workspaceId: tenant.workspace.id,
      workflowId: utc,
      cron: '7 5 * * *',
      timezone: 'UTC',
      inputs: { who: 'utc' },
      paused: false,
      lastFiredAt: null,
      lastStatus: null,
      nextRunAt: '2031-03-04T05:07:00.000Z',
    });
    expect(b.nextRunAt).toBe('2031-03-04T05:07:00.000Z');
    expect(c.nextRunAt).toBe('2031-03-04T20:07:00.000Z');

    // Passes at :30, :40 and :50 find nothing due.
    await clock.tick(30_000);
    expect(await executionsOf(utc)).toEqual([]);
    expect((await scheduleOf(a.id))?.lastFiredAt).toBeNull();

    // The pass after 05:07:00 fires both schedules due then, in one batch.
    await clock.tick(20_000);
    const [ran] = await finished(utc, 1);
    const [ranNy] = await finished(newYork, 1);
    expect(ran).toMatchObject({ status: 'completed', trigger: 'schedule', output: { hello: 'utc' } });
    expect(ranNy).toMatchObject({ status: 'completed', trigger: 'schedule', output: { hello: 'ny' } });
    const listed = await waitFor('the firing recorded', async () => {
      const s = await scheduleOf(a.id);
      return s?.lastStatus ? s : null;
    });
    expect(listed).toMatchObject({ lastStatus: 'started', lastExecutionId: ran?.id, lastError: null });
    expect(listed.nextRunAt).toBe('2031-03-05T05:07:00.000Z');

    const detail = await admin.executions.get.query({ id: ran?.id as string });
    expect(detail).toMatchObject({
      status: 'completed',
      trigger: 'schedule',
      mode: 'async',
      inputs: { who: 'utc' },
    });
    const audit = await db.query<{ actor_name: string; actor_id: string | null }>(
      `select actor_name, actor_id from audit_logs where action = 'workflow.execute' and resource_id = $1`,
      [utc],
    );
    expect(audit).toEqual([{ actor_name: `schedule ${a.id}`, actor_id: null }]);

    // The occurrence stays due for a minute: every later pass sees it, none fires it again.
    await tickIntoNextMinute(30);
    await tickIntoNextMinute(30);
    expect(await executionsOf(utc)).toHaveLength(1);
    expect(await executionsOf(newYork)).toHaveLength(1);
    // Tokyo's 05:07 is still to come.
    expect(await executionsOf(tokyo)).toEqual([]);
    expect((await scheduleOf(c.id))?.lastFiredAt).toBeNull();
  });

  it('pause stops firings, resume restarts them, delete removes them, with pg-boss following', async () => {
    const [wf, control] = [await newWorkflow(), await newWorkflow()];
    // Passes run at :00, :10, :20… of each minute: start between two.
    await tickIntoNextMinute(5);
    const s = await admin.schedules.create.mutate({
      workflowId: wf,
      cron: '* * * * *',
      inputs: { who: 'p' },
    });
    // Fires every minute alongside: when it has fired, the pass that would have fired `s` has run.
    await admin.schedules.create.mutate({ workflowId: control, cron: '* * * * *', inputs: { who: 'c' } });
    expect(await bossCopy(s.id)).toMatchObject({
      cron: '* * * * *',
      timezone: 'UTC',
      data: { scheduleId: s.id },
    });

    // This minute's occurrence is under a minute old: the next pass fires it.
    await clock.tick(10_000);
    await finished(wf, 1);
    await finished(control, 1);

    const paused = await admin.schedules.pause.mutate({ id: s.id });
    expect(paused).toMatchObject({ paused: true, nextRunAt: null });
    expect(await bossCopy(s.id)).toBeNull();
    await tickIntoNextMinute(5);
    await finished(control, 2);
    expect(await executionsOf(wf)).toHaveLength(1);

    const resumed = await admin.schedules.resume.mutate({ id: s.id });
    expect(resumed.paused).toBe(false);
    expect(resumed.nextRunAt).toEqual(expect.any(String));
    expect(await bossCopy(s.id)).not.toBeNull();
    // Resumed within the minute of an occurrence it missed while paused: the next pass fires it.
    await clock.tick(10_000);
    await finished(wf, 2);
    await tickIntoNextMinute(5);
    await finished(control, 3);
    await finished(wf, 3);

    expect(await admin.schedules.delete.mutate({ id: s.id })).toEqual({ deleted: true });
    expect(await bossCopy(s.id)).toBeNull();
    expect(await scheduleOf(s.id)).toBeUndefined();
    await tickIntoNextMinute(5);
    await finished(control, 4);
    expect(await executionsOf(wf)).toHaveLength(3);

    const audit = await db.query<{ action: string; actor_name: string }>(
      `select action, actor_name from audit_logs where resource_id = $1 order by created_at, action`,
      [s.id],
    );
    expect(audit.map((e) => e.action)).toEqual([
      'schedule.created',
      'schedule.paused',
      'schedule.resumed',
      'schedule.deleted',
    ]);
    expect(new Set(audit.map((e) => e.actor_name))).toEqual(new Set(['admin plane']));
  });

  it('refuses a firing at the spend limit: recorded on the schedule, nothing run, not retried', async () => {
    const broke = await createTenant(admin);
    await admin.quotas.set.mutate({ orgId: broke.org.id, usageLimit: 0 });
    const wf = await newWorkflow(broke);
    const s = await admin.schedules.create.mutate({
      workflowId: wf,
      cron: '* * * * *',
      inputs: { who: 'x' },
    });
    await clock.tick(10_000);
    const listed = await waitFor('the refusal recorded', async () => {
      const found = await scheduleOf(s.id, broke.workspace.id);
      return found?.lastStatus ? found : null;
    });
    expect(listed).toMatchObject({ lastStatus: 'refused', lastExecutionId: null });
    expect(listed.lastError).toMatch(/^402: Usage limit exceeded/);
    expect(await executionsOf(wf)).toEqual([]);
    // The firing's job completed on its first attempt: a refusal is not retried.
    const jobs = await waitFor('the firing completed', async () => {
      const rows = await db.query<{ state: string; retry_count: number }>(
        `select state, retry_count from pgboss.job where name = $1 and data ->> 'scheduleId' = $2`,
        [QUEUES.workflowSchedule, s.id],
      );
      return rows.every((r) => r.state === 'completed') ? rows : null;
    });
    expect(jobs).toEqual([{ state: 'completed', retry_count: 0 }]);
    await admin.schedules.delete.mutate({ id: s.id });
  });

  it('records a firing of a workflow undeployed since as failed, and runs nothing', async () => {
    const wf = await newWorkflow();
    const s = await admin.schedules.create.mutate({
      workflowId: wf,
      cron: '* * * * *',
      inputs: { who: 'x' },
    });
    await admin.workflows.undeploy.mutate({ id: wf });
    await clock.tick(10_000);
    const listed = await waitFor('the failure recorded', async () => {
      const found = await scheduleOf(s.id);
      return found?.lastStatus ? found : null;
    });
    expect(listed).toMatchObject({ lastStatus: 'failed', lastExecutionId: null });
    expect(listed.lastError).toMatch(/not deployed/);
    expect(await executionsOf(wf)).toEqual([]);
    await admin.schedules.delete.mutate({ id: s.id });
  });

  it('records a firing in a workspace archived since as failed, and refuses new schedules there', async () => {
    const workspaceId = await createWorkspace(admin, tenant);
    const wf = await deployWorkflow(admin, workspaceId, GREET);
    const s = await admin.schedules.create.mutate({
      workflowId: wf,
      cron: '* * * * *',
      inputs: { who: 'x' },
    });
    await admin.workspaces.archive.mutate({ workspaceId });
    expect(
      await adminError(
        admin.schedules.create.mutate({ workflowId: wf, cron: '* * * * *', inputs: { who: 'x' } }),
      ),
    ).toMatchObject({ code: 'FORBIDDEN', message: 'The workspace is archived' });
    await clock.tick(10_000);
    const listed = await waitFor('the failure recorded', async () => {
      const found = await scheduleOf(s.id, workspaceId);
      return found?.lastStatus ? found : null;
    });
    expect(listed).toMatchObject({ lastStatus: 'failed', lastError: '403: The workspace is archived' });
    expect(await executionsOf(wf)).toEqual([]);
    expect(await admin.schedules.list.query({ workspaceId })).toHaveLength(1);
    await admin.schedules.delete.mutate({ id: s.id });
  });

  it('drops a firing whose schedule is gone (deleted with its workflow), and removes the orphan copy', async () => {
    const wf = await newWorkflow();
    const s = await admin.schedules.create.mutate({
      workflowId: wf,
      cron: '* * * * *',
      inputs: { who: 'x' },
    });
    // What deleting the workflow or its workspace does: the row goes by cascade, pg-boss's copy stays.
    await db.query('delete from schedules where id = $1', [s.id]);
    expect(await bossCopy(s.id)).not.toBeNull();
    await clock.tick(10_000);
    await waitFor('the orphan copy removed', async () => (await bossCopy(s.id)) === null);
    expect(await executionsOf(wf)).toEqual([]);
  });

  it("reconciles pg-boss's copies with the rows at a runner's start", async () => {
    const wf = await newWorkflow();
    const s = await admin.schedules.create.mutate({
      workflowId: wf,
      cron: '15 3 * * *',
      inputs: { who: 'x' },
    });
    const orphan = crypto.randomUUID();
    // A process that died between the two writes: one row without its copy, one copy without its row.
    await runner.boss.unschedule(QUEUES.workflowSchedule, s.id);
    await runner.boss.schedule(QUEUES.workflowSchedule, '* * * * *', { scheduleId: orphan }, { key: orphan });
    await reconcileSchedules(db, runner.boss, createLogger('silent'));
    expect(await bossCopy(s.id)).toMatchObject({ cron: '15 3 * * *', timezone: 'UTC' });
    expect(await bossCopy(orphan)).toBeNull();
    await admin.schedules.delete.mutate({ id: s.id });
  });
});

describe('refusals at creation', () => {
  const create = (input: Record<string, unknown>) =>
    adminError(admin.schedules.create.mutate(input as Parameters<typeof admin.schedules.create.mutate>[0]));

  it('refuses a malformed cron expression or time zone with the field named, creating nothing', async () => {
    const wf = await newWorkflow();
    const copies = (await runner.boss.getSchedules(QUEUES.workflowSchedule)).length;
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ cron: '61 * * * *' }, 'cron', /Invalid cron expression "61 \* \* \* \*": .*0-59/],
      [{ cron: '* * * *' }, 'cron', /Expected 5 fields .* got 4/],
      [{ cron: '* * * * * * *' }, 'cron', /Expected 5 fields .* got 7/],
      [{ cron: '@daily' }, 'cron', /Expected 5 fields/],
      [{ cron: '*/5 * * * * *' }, 'cron', /seconds field must be a single second/],
      [{ cron: '0 0 31 2 *' }, 'cron', /Invalid cron expression/],
      [{ cron: 'a b c d e' }, 'cron', /Invalid cron expression/],
      [
        { cron: '* * * * *', timezone: 'Mars/Olympus_Mons' },
        'timezone',
        /Unknown time zone "Mars\/Olympus_Mons"/,
      ],
      [{ cron: '* * * * *', timezone: 'Local' }, 'timezone', /Unknown time zone/],
    ];
    for (const [input, field, message] of cases) {
      const err = await create({ workflowId: wf, inputs: { who: 'x' }, ...input });
      expect(err, JSON.stringify(input)).toMatchObject({ code: 'BAD_REQUEST', httpStatus: 400 });
      expect(err.details?.[0]?.path, JSON.stringify(input)).toEqual([field]);
      expect(err.details?.[0]?.message, JSON.stringify(input)).toMatch(message);
    }
    expect(await admin.schedules.list.query({ workflowId: wf })).toEqual([]);
    expect(await runner.boss.getSchedules(QUEUES.workflowSchedule)).toHaveLength(copies);
  });

  it('accepts a seconds field of one second, and stores the time zone under its canonical name', async () => {
    const wf = await newWorkflow();
    const s = await admin.schedules.create.mutate({
      workflowId: wf,
      cron: '  30   0 12 * * 1-5 ',
      timezone: 'europe/paris',
      inputs: { who: 'x' },
    });
    expect(s).toMatchObject({ cron: '30 0 12 * * 1-5', timezone: 'Europe/Paris' });
    // 12:00:30 in Paris (UTC+1 in March) on the next weekday.
    expect(s.nextRunAt).toBe('2031-03-04T11:00:30.000Z');
    expect(await bossCopy(s.id)).toMatchObject({ cron: '30 0 12 * * 1-5', timezone: 'Europe/Paris' });
    await admin.schedules.delete.mutate({ id: s.id });
  });

  it('refuses an unknown, undeployed or foreign workflow, and inputs the workflow does not take', async () => {
    const other = await createTenant(admin);
    const foreign = await newWorkflow(other);
    const draft = (
      await admin.workflows.create.mutate({ workspaceId: tenant.workspace.id, name: 'd', definition: GREET })
    ).id;
    const wf = await newWorkflow();
    const base = { cron: '* * * * *', inputs: { who: 'x' } };
    expect(await create({ ...base, workflowId: crypto.randomUUID() })).toMatchObject({
      code: 'NOT_FOUND',
      message: 'Workflow not found',
    });
    expect(await create({ ...base, workflowId: 'not-a-uuid' })).toMatchObject({ code: 'BAD_REQUEST' });
    expect(await create({ ...base, workflowId: draft })).toMatchObject({
      code: 'BAD_REQUEST',
      message: 'Workflow is not deployed: deploy it before scheduling it',
    });
    expect(await create({ ...base, workflowId: foreign, workspaceId: tenant.workspace.id })).toMatchObject({
      code: 'NOT_FOUND',
      message: 'Workflow not found',
    });
    const badInputs = await create({ cron: '* * * * *', workflowId: wf, inputs: { who: 7 } });
    expect(badInputs).toMatchObject({ code: 'BAD_REQUEST', message: 'Invalid workflow inputs' });
    expect(badInputs.details).toEqual([
      { code: 'invalid_type', path: ['inputs', 'who'], message: 'Expected string, received number' },
    ]);
    const missing = await create({ cron: '* * * * *', workflowId: wf });
    expect(missing.details?.[0]?.message).toBe('Required input "who" is missing');
    for (const id of [foreign, draft, wf])
      expect(await admin.schedules.list.query({ workflowId: id })).toEqual([]);
  });

  it('refuses pausing a paused schedule, resuming an active one, and unknown ids', async () => {
    const wf = await newWorkflow();
    const s = await admin.schedules.create.mutate({
      workflowId: wf,
      cron: '0 4 * * *',
      inputs: { who: 'x' },
    });
    expect(await adminError(admin.schedules.resume.mutate({ id: s.id }))).toMatchObject({
      code: 'CONFLICT',
      message: 'The schedule is not paused',
    });
    await admin.schedules.pause.mutate({ id: s.id });
    expect(await adminError(admin.schedules.pause.mutate({ id: s.id }))).toMatchObject({
      code: 'CONFLICT',
      message: 'The schedule is already paused',
    });
    const unknown = crypto.randomUUID();
    const calls = [
      () => admin.schedules.pause.mutate({ id: unknown }),
      () => admin.schedules.resume.mutate({ id: unknown }),
      () => admin.schedules.delete.mutate({ id: unknown }),
    ];
    for (const call of calls)
      expect(await adminError(call())).toMatchObject({ code: 'NOT_FOUND', message: 'Schedule not found' });
    expect(await adminError(admin.schedules.list.query({}))).toMatchObject({ code: 'BAD_REQUEST' });
    // The refused calls left it as it was.
    expect(await scheduleOf(s.id)).toMatchObject({ paused: true });
    expect(await bossCopy(s.id)).toBeNull();
    await admin.schedules.delete.mutate({ id: s.id });
  });

  it('requires the admin token', async () => {
    const wf = await newWorkflow();
    const stranger = clientFor('not-the-admin-token');
    expect(
      await adminError(
        stranger.schedules.create.mutate({ workflowId: wf, cron: '* * * * *', inputs: { who: 'x' } }),
      ),
    ).toMatchObject({ code: 'UNAUTHORIZED', httpStatus: 401 });
    expect(await adminError(stranger.schedules.list.query({ workflowId: wf }))).toMatchObject({
      code: 'UNAUTHORIZED',
    });
    expect(await admin.schedules.list.query({ workflowId: wf })).toEqual([]);
  });
});
