// Faults: runner processes SIGKILLed under a stream of sync and async executions and in the middle
// of ingestion, and the database server restarted under load. Whatever was acknowledged (200/202)
// ends completed or failed, none stays queued/processing, none completes twice, sync callers get
// an answer, and the API answers 503 (never 500, never a hang) while the database is down.
// Runner processes need a server database (embedded PGlite serves one process): the TEST_DATABASE_URL pass.

import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAdminApp } from '../../admin/app.ts';
import { createAdminClient } from '../../admin/client.ts';
import { startApi } from '../../api/start.ts';
import { loadConfig } from '../../config.ts';
import { openPostgres } from '../../db/client.ts';
import { migrate } from '../../db/migrate.ts';
import { createLogger } from '../../logger.ts';
import { expectOk } from '../api/files-helpers.ts';
import { createKnowledgeBase, documentOf, settled, uploadDocument } from '../api/knowledge-helpers.ts';
import {
  ADMIN_TOKEN,
  createTenant,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';
import { deployWorkflow, pollJob } from '../helpers/workflows.ts';
import {
  canRunPrivatePostgres,
  exited,
  killAll,
  type PrivatePostgres,
  runnerOutput,
  startPrivatePostgres,
  startRunnerProcess,
} from './faults-processes.ts';

const serverDatabase = Boolean(process.env.TEST_DATABASE_URL);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Counts each execution's side effect (its http block reaching us), by id. */
async function hitCounter() {
  const hits = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const id = new URL(req.url ?? '/', 'http://x').searchParams.get('id') ?? '';
    hits.set(id, (hits.get(id) ?? 0) + 1);
    res.end('{"ok":true}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    hits,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => server.close(),
  };
}

/** A workflow that takes a moment, then performs its one side effect. */
const sideEffectWorkflow = (url: string) => ({
  inputs: { id: { type: 'string', required: true } },
  blocks: [
    { id: 'w', type: 'wait', ms: 150 },
    { id: 'call', type: 'http', url: `${url}?id=<start.id>` },
  ],
  edges: [{ from: 'w', to: 'call' }],
});

/** Runs fn over items with at most `width` in flight: concurrent clients. */
async function concurrently<T, R>(items: T[], width: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i] as T);
      }
    }),
  );
  return out;
}

describe.runIf(serverDatabase)('runner processes killed mid-flight', () => {
  let svc: TestService;
  let tenant: Tenant;
  let counter: Awaited<ReturnType<typeof hitCounter>>;
  const runners: ChildProcess[] = [];
  const runnerEnv = () => ({
    DATABASE_URL: svc.config.DATABASE_URL as string,
    ENCRYPTION_KEY: (svc.config.ENCRYPTION_KEY as Buffer).toString('hex'),
    DATA_DIR: svc.config.DATA_DIR,
    RUNNER_CONCURRENCY: '8',
    INGEST_CONCURRENCY: '2',
  });

  beforeAll(async () => {
    // A short sync wait, so callers whose execution sits behind a dead runner get the 202 "poll its job".
    svc = await startTestService({ QUEUE_HEARTBEAT_SECONDS: '10', SYNC_WAIT_TIMEOUT_MS: '4000' });
    tenant = await createTenant(svc.admin, { plan: 'enterprise' });
    counter = await hitCounter();
  });
  afterEach(() => killAll(runners));
  afterAll(async () => {
    await killAll(runners);
    counter?.close();
    await svc?.close();
  });

  /** Fires `each` sync and `each` async executions from concurrent clients; runs `fault` once some are processing. */
  async function stream(workflowId: string, prefix: string, each: number, fault: () => Promise<void>) {
    const ids = Array.from({ length: each * 2 }, (_, i) => ({ id: `${prefix}${i}`, sync: i % 2 === 0 }));
    const answers = concurrently(ids, 24, async ({ id, sync }) => {
      const res = await svc.call('POST', `/api/workflows/${workflowId}/execute`, {
        key: tenant.key,
        body: { inputs: { id }, ...(sync ? {} : { async: true }) },
      });
      return { id, sync, res };
    });
    // The fault strikes while executions are running and others wait in the queue.
    for (let i = 0; ; i++) {
      const [row] = await svc.db.query<{ n: number }>(
        "select count(*)::int as n from executions where workflow_id = $1 and status = 'processing'",
        [workflowId],
      );
      if ((row?.n ?? 0) >= 4) break;
      if (i > 2000) throw new Error('executions never started processing');
      await sleep(10);
    }
    await fault();
    return answers;
  }

  /** Every acknowledged execution ended completed or failed, once, with its side effect at most once per attempt. */
  async function expectNothingLost(
    workflowId: string,
    answers: { id: string; sync: boolean; res: { status: number; body: Record<string, unknown> } }[],
  ) {
    const byInput = new Map<string, string>();
    for (const { id, sync, res } of answers) {
      // A clear answer each: the result (200), the acknowledgement or "still running: poll its job" (202).
      expect([200, 202], `${id}: ${res.status} ${JSON.stringify(res.body)}`).toContain(res.status);
      const executionId = (res.body.executionId ?? res.body.taskId) as string;
      expect(executionId, id).toEqual(expect.any(String));
      if (sync && res.status === 202) expect(res.body.error).toMatch(/still running: poll its job/);
      byInput.set(id, executionId);
    }
    for (const [id, executionId] of byInput) {
      const job = await pollJob(svc.call, tenant.key, executionId, 2400);
      expect(['completed', 'failed'], id).toContain(job.body.status);
    }
    const rows = await svc.db.query<{ id: string; status: string; attempt: number; input_id: string }>(
      "select id, status, attempt, inputs->>'id' as input_id from executions where workflow_id = $1",
      [workflowId],
    );
    // Nothing started that no caller was told of, nothing acknowledged that has no row.
    expect(rows.length).toBe(answers.length);
    const stuck = rows.filter((r) => r.status !== 'completed' && r.status !== 'failed');
    expect(stuck).toEqual([]);
    for (const r of rows) {
      expect(byInput.get(r.input_id)).toBe(r.id);
      const hits = counter.hits.get(r.input_id) ?? 0;
      // A completed execution performed its side effect; a retried one may have performed it once per attempt.
      if (r.status === 'completed') expect(hits, r.input_id).toBeGreaterThanOrEqual(1);
      expect(hits, r.input_id).toBeLessThanOrEqual(r.attempt);
      if (r.attempt === 1) expect(hits, r.input_id).toBeLessThanOrEqual(1);
    }
    // pg-boss completed each execution's job once at most: one job per execution, never two done.
    const jobs = await svc.db.query<{ execution_id: string; completed: number }>(
      `select data->>'executionId' as execution_id, count(*) filter (where state = 'completed')::int as completed
         from pgboss.job where data->>'executionId' = any($1::text[]) group by 1`,
      [rows.map((r) => r.id)],
    );
    for (const j of jobs) expect(j.completed, j.execution_id).toBeLessThanOrEqual(1);
    return rows;
  }

  it('loses nothing when one of two runners is SIGKILLed under sync and async load', async () => {
    await Promise.all([startRunnerProcess(runnerEnv(), runners), startRunnerProcess(runnerEnv(), runners)]);
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, sideEffectWorkflow(counter.url));
    const doomed = runners[0] as ChildProcess;
    const answers = await stream(wf, 'two-', 100, async () => {
      doomed.kill('SIGKILL');
      expect(await exited(doomed)).toEqual({ code: null, signal: 'SIGKILL' });
    });
    const rows = await expectNothingLost(wf, await answers);
    expect(rows.filter((r) => r.status === 'completed').length).toBe(200);
  }, 90_000);

  it('loses nothing when the only runner is SIGKILLed and a new one started', async () => {
    const only = await startRunnerProcess(runnerEnv(), runners);
    const wf = await deployWorkflow(svc.admin, tenant.workspace.id, sideEffectWorkflow(counter.url));
    const answers = await stream(wf, 'one-', 40, async () => {
      only.kill('SIGKILL');
      await exited(only);
      await startRunnerProcess(runnerEnv(), runners);
    });
    const rows = await expectNothingLost(wf, await answers);
    expect(rows.filter((r) => r.status === 'completed').length).toBe(80);
    // The killed runner's executions were retried: their jobs' heartbeat lapsed, a new attempt ran.
    expect(rows.some((r) => r.attempt > 1)).toBe(true);
  }, 90_000);

  it('leaves no document processing when the runner dies mid-ingestion', async () => {
    const workspaceId = tenant.workspace.id;
    const kb = await createKnowledgeBase(svc, workspaceId);
    const doomed = await startRunnerProcess(runnerEnv(), runners);
    const text = (n: number) =>
      Array.from({ length: 700 }, (_, i) =>
        `Document ${n} paragraph ${i}: station ${i % 97} measured rainfall near marker ${i * 31}. `.repeat(3),
      ).join('\n\n');
    const ids: string[] = [];
    for (let n = 0; n < 2; n++) {
      const res = await uploadDocument(svc, tenant.key, kb.id, {
        workspaceId,
        name: `doc${n}.txt`,
        content: text(n),
      });
      expectOk(res);
      ids.push(res.body.data.document.id);
    }
    for (let i = 0; ; i++) {
      const docs = await Promise.all(ids.map((id) => documentOf(svc, id)));
      if (docs.some((d) => d.processingStatus === 'processing')) break;
      if (i > 2000) throw new Error('no document started processing');
      await sleep(10);
    }
    doomed.kill('SIGKILL');
    await exited(doomed);
    await startRunnerProcess(runnerEnv(), runners);
    for (const id of ids) {
      const doc = await settled(svc, id, 60_000);
      // Completed, or failed with a reason: never left processing.
      // Completed (a retry on the new runner): failed would need a reason, and nothing here should fail.
      expect(doc.processingStatus, doc.processingError ?? '').toBe('completed');
      expect(doc.chunkCount).toBeGreaterThan(0);
    }
  }, 90_000);
});

describe.runIf(serverDatabase && canRunPrivatePostgres())('database server restarted under load', () => {
  // Its own cluster: the shared test server serves other files in parallel and must not restart.
  let pg: PrivatePostgres | undefined;
  const runners: ChildProcess[] = [];
  let close: (() => Promise<void>) | undefined;
  afterAll(async () => {
    await killAll(runners);
    // The cluster goes first: closing a pool that lost its server may take a while.
    pg?.destroy();
    await close?.().catch(() => {});
  });

  it('answers 503 while Postgres is down, recovers by itself, and runs everything it acknowledged', async () => {
    pg = await startPrivatePostgres();
    const dataDir = mkdtempSync(join(tmpdir(), 'faults-data-'));
    const config = loadConfig({
      ADMIN_TOKEN,
      ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      LOG_LEVEL: 'silent',
      DATA_DIR: dataDir,
      DATABASE_URL: pg.url,
      // Jobs carry the heartbeat they are sent with: short, so what the runner held when the
      // database went away is retried within seconds.
      QUEUE_HEARTBEAT_SECONDS: '10',
    });
    const log = createLogger('silent');
    const db = openPostgres(pg.url, { max: 5 });
    await migrate(db);
    const encryptionKey = config.ENCRYPTION_KEY as Buffer;
    // The runner first: it creates the queues, with its short heartbeat, so what it held when the
    // database went away is retried soon (the API alone would create them with the default 30 s).
    const runner = await startRunnerProcess(
      { DATABASE_URL: pg.url, ENCRYPTION_KEY: encryptionKey.toString('hex'), DATA_DIR: dataDir },
      runners,
    );
    const api = await startApi({ db, config, log });
    const adminApp = createAdminApp({ db, config, log, encryptionKey, queue: api.queue });
    const admin = createAdminClient({
      url: 'http://admin.test/trpc',
      token: ADMIN_TOKEN,
      fetch: (input, init) => Promise.resolve(adminApp.request(new Request(input, init))),
    });
    close = async () => {
      await api.close();
      await db.close();
      rmSync(dataDir, { recursive: true, force: true });
    };
    const tenant = await createTenant(admin, { plan: 'enterprise' });
    const wf = await deployWorkflow(admin, tenant.workspace.id, {
      blocks: [
        { id: 'w', type: 'wait', ms: 50 },
        { id: 'r', type: 'response', data: 'done' },
      ],
      edges: [{ from: 'w', to: 'r' }],
    });

    /** One request with a deadline: a hang is a failure, not a slow test. */
    async function call(method: string, path: string, body?: unknown) {
      const request = Promise.resolve(
        api.app.request(`http://api.test${path}`, {
          method,
          headers: { 'X-API-Key': tenant.key, ...(body ? { 'Content-Type': 'application/json' } : {}) },
          ...(body ? { body: JSON.stringify(body) } : {}),
        }),
      ).then(async (res) => ({ status: res.status, headers: res.headers, body: await res.json() }));
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${method} ${path}: no answer within 15 s`)), 15_000);
      });
      try {
        return await Promise.race([request, deadline]);
      } finally {
        clearTimeout(timer);
      }
    }

    type Phase = 'before' | 'down' | 'after';
    let phase: Phase = 'before';
    const acknowledged: { id: string; phase: Phase }[] = [];
    const seen: {
      phase: Phase;
      path: string;
      status: number;
      body: Record<string, unknown>;
      retryAfter: string | null;
    }[] = [];
    let stopLoad = false;
    // Clients that keep going through the outage: async executes, polls of their jobs, a read endpoint.
    const client = async (n: number) => {
      for (let i = 0; !stopLoad; i++) {
        const at = phase;
        const kind = (n + i) % 3;
        const path =
          kind === 0
            ? `/api/workflows/${wf}/execute`
            : kind === 1 && acknowledged.length
              ? `/api/jobs/${acknowledged[(i * 7) % acknowledged.length]?.id}`
              : `/api/v1/logs?workspaceId=${tenant.workspace.id}&limit=5`;
        // A hang (no answer within the deadline) is recorded as status 0, and fails the test below.
        const res = await call(
          kind === 0 ? 'POST' : 'GET',
          path,
          kind === 0 ? { async: true } : undefined,
        ).catch((err: Error) => ({ status: 0, headers: new Headers(), body: { error: err.message } }));
        seen.push({
          phase: at,
          path,
          status: res.status,
          body: res.body,
          retryAfter: res.headers.get('retry-after'),
        });
        if (kind === 0 && res.status === 202) acknowledged.push({ id: res.body.taskId as string, phase: at });
        await sleep(20);
      }
    };
    const load = Promise.all([0, 1, 2, 3].map(client));

    const ready = async () => (await api.app.request('http://api.test/ready')).status;
    while (acknowledged.length < 20) await sleep(20);
    expect(await ready()).toBe(200);

    pg.stop('fast');
    phase = 'down';
    const downSince = seen.length;
    // While down: /ready says 503, and the clients keep getting 503s (a few rounds of them).
    expect(await ready()).toBe(503);
    while (seen.slice(downSince).filter((s) => s.phase === 'down').length < 16) await sleep(20);
    expect(await ready()).toBe(503);

    pg.start();
    phase = 'after';
    // Recovers by itself: within a bounded time /ready is 200 and requests succeed again.
    for (let i = 0; (await ready()) !== 200; i++) {
      if (i > 100) throw new Error('API not ready 20 s after Postgres came back');
      await sleep(200);
    }
    const afterSince = acknowledged.length;
    for (let i = 0; acknowledged.length < afterSince + 20; i++) {
      if (i > 1500) throw new Error('no executions acknowledged after Postgres came back');
      await sleep(20);
    }
    stopLoad = true;
    await load;

    const down = seen.filter((s) => s.phase === 'down');
    const failures = seen.filter((s) => s.status >= 500 || s.status === 0);
    // No 500 anywhere; what failed while the database was away is a 503 with an error and Retry-After.
    expect(
      failures
        .filter((s) => s.status !== 503)
        .map((s) => `${s.phase} ${s.path} ${s.status} ${JSON.stringify(s.body)}`),
    ).toEqual([]);
    for (const s of failures) {
      expect(s.body.error).toEqual(expect.any(String));
      expect(s.retryAfter).toEqual(expect.stringMatching(/^\d+$/));
    }
    expect(down.filter((s) => s.status === 503).length).toBeGreaterThan(0);
    // The runner lived through the restart: postgres.js 3.4.9 threw an uncaught TypeError on a
    // connection the server had closed and ended the process (patches/postgres+3.4.9.patch).
    expect({ exitCode: runner.exitCode, signal: runner.signalCode }).toEqual({
      exitCode: null,
      signal: null,
    });
    // Every execution acknowledged, before, during or after the outage, ends completed: what was in
    // flight at the stop is retried once its heartbeat lapses (10 s here), the rest simply runs.
    const phases = new Set(acknowledged.map((a) => a.phase));
    expect(phases).toContain('before');
    expect(phases).toContain('after');
    const ends: string[] = [];
    for (const { id, phase: at } of acknowledged) {
      const res = await pollJob(async (method, path) => call(method, path), tenant.key, id, 2400).catch(
        async (err: Error) => {
          // Where it is stuck, for the failure message: the queue's view of its job.
          const jobs = await db.query(
            `select state, retry_count, started_on, heartbeat_on, now() as now
               from pgboss.job where data->>'executionId' = $1`,
            [id],
          );
          throw new Error(`${err.message} (acknowledged ${at}; jobs ${JSON.stringify(jobs)})`);
        },
      );
      ends.push(`${at} ${id} ${res.body.status === 'completed' ? 'completed' : JSON.stringify(res.body)}`);
    }
    // The runner's log says why, when one did not complete.
    expect(
      ends.filter((e) => !e.endsWith(' completed')),
      runnerOutput(runner).slice(-20_000),
    ).toEqual([]);
  }, 150_000);
});

describe.skipIf(serverDatabase)('faults (embedded PGlite)', () => {
  it.skip('needs runner processes and a restartable server: runs in the TEST_DATABASE_URL pass', () => {});
});
