// Smoke test of the service on Deno 2: starts `deno task start` (the npm package's deno, from
// node_modules) on a fresh database, then through its real ports deploys a workflow with the admin
// plane, executes it sync and async (polling the job), uploads a markdown document (and a Word and a
// PDF file) to a new knowledge base and polls them to `completed`, searches them, and stops the
// service with SIGTERM, which must end it cleanly. Runs under Node: `node scripts/deno-smoke.ts`. Prints each step; exits 1 on any failure
// or when the whole run takes longer than DENO_SMOKE_TIMEOUT_MS.
//
//   DENO_SMOKE_DATABASE_URL  a Postgres server (postgres://…/<any database>): a scratch database is
//                            created there and dropped afterwards. Unset: the embedded database, in a
//                            temporary DATA_DIR.
//   DENO_SMOKE_TIMEOUT_MS    the hard limit of the whole run (default 90000).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAdminClient } from '../admin/client.ts';
import { openPostgres } from '../db/client.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVER_URL = process.env.DENO_SMOKE_DATABASE_URL;
const TIMEOUT_MS = Number(process.env.DENO_SMOKE_TIMEOUT_MS ?? 90_000);
// Known in advance, as automation sets them: the bootstrap key and the admin token.
const API_KEY = `sk-service-${randomBytes(18).toString('base64url')}`;
const ADMIN_TOKEN = `deno-smoke-${randomBytes(12).toString('hex')}`;
const POLL_MS = 100;

const started = performance.now();
const say = (message: string) =>
  console.log(`[deno-smoke +${((performance.now() - started) / 1000).toFixed(1)}s] ${message}`);

class SmokeFailure extends Error {}
function check(condition: unknown, message: string, detail?: unknown): asserts condition {
  if (!condition)
    throw new SmokeFailure(detail === undefined ? message : `${message}: ${JSON.stringify(detail)}`);
}

const GREETING = {
  inputs: { name: { type: 'string', required: true } },
  blocks: [
    {
      id: 'greet',
      type: 'function',
      language: 'typescript',
      code: 'const who: string = inputs.name; return { message: "Hello, " + who + "!", length: who.length }',
    },
    { id: 'done', type: 'response', data: { message: '<greet.message>', length: '<greet.length>' } },
  ],
  edges: [{ from: 'greet', to: 'done' }],
};

const DOCUMENT = [
  '# Deno smoke notes',
  '',
  'The workflow service runs on Deno as well as on Node.',
  '',
  '## Lighthouses',
  '',
  'A lighthouse keeper trims the wick and winds the clockwork that turns the lens every night.',
].join('\n');

const fixture = (name: string): BlobPart => readFileSync(join(ROOT, 'test/fixtures/knowledge', name));

/** The deno executable of the npm package: its bin entry, or the binary its launcher script would run. */
function denoExecutable(): string {
  const bin = realpathSync(join(ROOT, 'node_modules/.bin/deno'));
  // Without its install script the bin entry is a Node launcher that runs deno as a child, which a
  // SIGTERM would not reach: resolve the binary the way the launcher does.
  return bin.endsWith('.cjs') ? createRequire(bin)('./install_api.cjs').runInstall() : bin;
}

/** The service's process and what it has printed so far. */
interface Service {
  child: ChildProcess;
  output: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startService(env: Record<string, string>): Service {
  const child = spawn(denoExecutable(), ['task', 'start'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so a failed run can take the task runner and the service down together.
    detached: true,
  });
  const output: string[] = [];
  const collect = (chunk: Buffer) => output.push(...chunk.toString().split('\n').filter(Boolean));
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, output, exited };
}

/** Waits for a line of the start-up banner and returns the first group of `pattern`. */
async function bannerValue(svc: Service, pattern: RegExp): Promise<string> {
  for (;;) {
    for (const line of svc.output) {
      const m = pattern.exec(line);
      if (m?.[1]) return m[1];
    }
    const gone = await Promise.race([svc.exited.then(() => true), sleep(POLL_MS).then(() => false)]);
    check(!gone, 'the service exited during start-up');
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function poll<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    await sleep(POLL_MS);
    check(performance.now() - started < TIMEOUT_MS, `${what} did not finish`, value);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: the smoke test reads arbitrary JSON answers
type Json = any;

async function api(base: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'X-API-Key': API_KEY, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as Json };
}

async function run(svc: Service, dataDir: string) {
  const apiUrl = await bannerValue(svc, /^API:\s+(http:\/\/\S+)/);
  const adminUrl = await bannerValue(svc, /^Admin plane:\s+(http:\/\/\S+)/);
  const workspaceId = await bannerValue(svc, /^Default workspace id:\s+(\S+)/);
  await poll(
    'GET /health',
    () =>
      fetch(`${apiUrl}/health`).then(
        (r) => r.status,
        () => 0,
      ),
    (status) => status === 200,
  );
  say(`service up on Deno: API ${apiUrl}, admin ${adminUrl}`);

  const admin = createAdminClient({ url: adminUrl, token: ADMIN_TOKEN });
  const workflow = await admin.workflows.create.mutate({
    workspaceId,
    name: 'deno smoke',
    definition: GREETING,
  });
  const deployed = await admin.workflows.deploy.mutate({ id: workflow.id });
  say(`admin plane: workflow ${workflow.id} created and deployed (version ${deployed.version})`);

  const execute = `/api/workflows/${workflow.id}/execute`;
  const sync = await api(apiUrl, 'POST', execute, { inputs: { name: 'Deno' } });
  check(sync.status === 200 && sync.body.success === true, 'sync execution failed', sync);
  check(sync.body.output?.message === 'Hello, Deno!' && sync.body.output?.length === 4, 'wrong output', sync);
  say(`sync execute: 200, output ${JSON.stringify(sync.body.output)}`);

  const ack = await api(apiUrl, 'POST', execute, { inputs: { name: 'Async' }, async: true });
  check(ack.status === 202 && typeof ack.body.taskId === 'string', 'async execution not accepted', ack);
  const job = await poll(
    `job ${ack.body.taskId}`,
    () => api(apiUrl, 'GET', `/api/jobs/${ack.body.taskId}`),
    (r) => r.body?.status === 'completed' || r.body?.status === 'failed',
  );
  check(job.body.status === 'completed', 'the async job failed', job.body);
  check(job.body.output?.message === 'Hello, Async!', 'wrong async output', job.body);
  say(
    `async execute: 202, job ${ack.body.taskId} polled to completed, output ${JSON.stringify(job.body.output)}`,
  );

  // Markdown is parsed on the runner's main path; Word and PDF in the ingestion worker threads, through
  // mammoth (which needs `__proto__`, hence `unstable: ["unsafe-proto"]` in deno.json) and pdf.js.
  const kb = await admin.knowledge.create.mutate({ workspaceId, name: 'deno smoke' });
  const files: [string, string, BlobPart][] = [
    ['notes.md', 'text/markdown', DOCUMENT],
    [
      'sample.docx',
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      fixture('sample.docx'),
    ],
    ['sample.pdf', 'application/pdf', fixture('sample.pdf')],
  ];
  for (const [name, type, content] of files) {
    const form = new FormData();
    form.set('workspaceId', workspaceId);
    form.set('file', new Blob([content], { type }), name);
    const res = await fetch(`${apiUrl}/api/v1/knowledge/${kb.id}/documents`, {
      method: 'POST',
      headers: { 'X-API-Key': API_KEY },
      body: form,
    });
    const body = (await res.json()) as Json;
    check(res.ok && body?.data?.document?.processingStatus === 'pending', `upload of ${name} failed`, body);
  }
  const listing = await poll(
    'document processing',
    () => api(apiUrl, 'GET', `/api/v1/knowledge/${kb.id}/documents?workspaceId=${workspaceId}`),
    (r) =>
      r.body?.data?.documents?.length === files.length &&
      r.body.data.documents.every((d: Json) => ['completed', 'failed'].includes(d.processingStatus)),
  );
  const docs: Json[] = listing.body.data.documents;
  for (const d of docs) check(d.processingStatus === 'completed', `processing of ${d.filename} failed`, d);
  say(
    `knowledge: ${docs.map((d) => `${d.filename} (${d.chunkCount} chunk(s))`).join(', ')} uploaded and polled to completed`,
  );

  const search = await api(apiUrl, 'POST', '/api/v1/knowledge/search', {
    workspaceId,
    knowledgeBaseIds: [kb.id],
    query: 'lighthouse keeper',
    topK: 3,
  });
  check(search.status === 200 && search.body.data?.results?.length > 0, 'search found nothing', search.body);
  say(`knowledge search: ${search.body.data.results.length} result(s)`);

  svc.child.kill('SIGTERM');
  const exit = await Promise.race([svc.exited, sleep(20_000).then(() => null)]);
  check(exit !== null, 'the service did not stop within 20 s of SIGTERM');
  check(exit.code === 0, 'the service did not exit cleanly on SIGTERM', exit);
  const stillServing = await fetch(`${apiUrl}/health`).then(
    () => true,
    () => false,
  );
  check(!stillServing, 'the API still answers after the task runner exited (service orphaned)');
  say('SIGTERM: the service drained and exited with code 0');

  // The runner's start-up says what holds on Deno, not the Node build that cannot help there.
  const said = svc.output.join('\n');
  check(said.includes('memory limits do not hold on Deno'), 'no word that memory limits do not hold on Deno');
  check(!said.includes('build:native'), 'the runner advised a Node build under Deno');
  // The embedded database's lock (db/data-dir-lock.ts) is let go on a clean stop, on Deno too.
  if (!SERVER_URL) check(!existsSync(join(dataDir, 'pgdata.lock')), 'the DATA_DIR lock was left behind');
  say('start-up said memory limits do not hold on Deno; the DATA_DIR lock was released');
}

async function main(): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), 'wfs-deno-smoke-'));
  const dbName = `deno_smoke_${randomBytes(4).toString('hex')}`;
  const server = SERVER_URL ? openPostgres(SERVER_URL, { max: 1 }) : null;
  let svc: Service | null = null;
  const cleanup = async () => {
    if (svc && svc.child.exitCode === null && svc.child.signalCode === null) {
      try {
        process.kill(-(svc.child.pid as number), 'SIGKILL');
      } catch {}
      await svc.exited;
    }
    if (server) {
      await server.query(`drop database if exists ${dbName} with (force)`).catch(() => {});
      await server.close().catch(() => {});
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  const abandon = async (reason: string) => {
    console.error(`[deno-smoke] FAILED: ${reason}`);
    if (svc) console.error(svc.output.slice(-40).join('\n'));
    await cleanup();
    process.exit(1);
  };
  // The hard limit: whatever hangs, the run ends, the service is killed and the database dropped;
  // the same when CI stops this script.
  const deadline = setTimeout(() => void abandon(`no result after ${TIMEOUT_MS} ms`), TIMEOUT_MS);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void abandon(signal));

  try {
    const env: Record<string, string> = {
      PORT: '0',
      HOST: '127.0.0.1',
      ADMIN_PORT: '0',
      BOOTSTRAP_API_KEY: API_KEY,
      ADMIN_TOKEN,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      WORKER_THREADS: '1',
      // No version check, no permission prompt, no colours in the banner.
      DENO_NO_UPDATE_CHECK: '1',
      DENO_NO_PROMPT: '1',
      NO_COLOR: '1',
    };
    if (server && SERVER_URL) {
      await server.query(`create database ${dbName}`);
      const url = new URL(SERVER_URL);
      url.pathname = `/${dbName}`;
      env.DATABASE_URL = url.toString();
      env.ENCRYPTION_KEY = randomBytes(32).toString('hex');
    }
    say(`deno task start (${server ? `Postgres, database ${dbName}` : 'embedded database'})`);
    svc = startService(env);
    await run(svc, dataDir);
    say('passed');
    return 0;
  } catch (err) {
    console.error(`[deno-smoke] FAILED: ${err instanceof SmokeFailure ? err.message : String(err)}`);
    if (svc) console.error(svc.output.slice(-40).join('\n'));
    return 1;
  } finally {
    clearTimeout(deadline);
    await cleanup();
  }
}

process.exit(await main());
