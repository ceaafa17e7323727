// README.md's quick start, run as a reader runs it: its ```sh blocks, taken from the README itself,
// in bash. The first block (the one with `npm start`) starts the service, on the embedded database
// under a scratch DATA_DIR and on free ports; the others run in order, in one shell, and each step
// must succeed (errexit, pipefail). So the quick start cannot rot.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/entry-processes.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// The address the README gives the API; the test serves it on a free port instead.
const README_API = 'http://127.0.0.1:3000';

/** The ```sh blocks under README.md's "Quick start" heading, in order. */
function quickStartBlocks(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const start = readme.search(/^## Quick start/m);
  if (start < 0) throw new Error('README.md has no "## Quick start" section');
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1] as string);
}

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

const children = new Set<ChildProcess>();
const dirs: string[] = [];

afterAll(() => {
  // Each bash leads a process group of its own (npm, node): end the whole group.
  for (const child of children) if (child.pid) process.kill(-child.pid, 'SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Runs a script with bash in its own process group, with only the given environment (plus PATH, HOME). */
function bash(script: string, cwd: string, env: Record<string, string>) {
  const child = spawn('bash', ['-c', script], {
    cwd,
    detached: true,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const output = { stdout: '', stderr: '' };
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (output.stdout += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (output.stderr += d));
  const exited = new Promise<Exit>((resolve) =>
    child.on('close', (code) => {
      children.delete(child);
      resolve({ code, ...output });
    }),
  );
  return { child, output, exited };
}

const MARK = (i: number) => `::quick start block ${i} done::`;

describe('README quick start', () => {
  it('runs as written against a freshly started service, and the search finds the uploaded document', async () => {
    const blocks = quickStartBlocks();
    const serviceBlocks = blocks.filter((b) => /^npm start\s*$/m.test(b));
    expect(serviceBlocks, 'exactly one quick-start block starts the service').toHaveLength(1);
    const steps = blocks.filter((b) => !serviceBlocks.includes(b));
    expect(steps.length).toBeGreaterThanOrEqual(4);
    // The one address the steps use is the API's, set once; the CLI finds the admin plane by ADMIN_PORT.
    const script = steps.join('\n');
    expect(script.split(README_API)).toHaveLength(2);
    expect(script).not.toMatch(/ADMIN_PORT|ADMIN_URL|:3001/);
    // Pasted into zsh, whose interactive shell does not take `#` as a comment by default, a comment
    // would run as a command: none outside heredocs' bodies.
    const outsideHeredocs = blocks.map((b) => b.replace(/<<'(\w+)'\n[\s\S]*?\n\1\n/g, '')).join('\n');
    expect(outsideHeredocs).not.toMatch(/(^|\s)#/m);

    // The reader's terminals stand in this repository; a directory below it, which git ignores,
    // keeps the files the steps write (hello.json, handbook.md) out of the working tree.
    mkdirSync(join(ROOT, 'test/artifacts'), { recursive: true });
    const cwd = mkdtempSync(join(ROOT, 'test/artifacts/quick-start-'));
    dirs.push(cwd);
    const [port, adminPort] = [await freePort(), await freePort()];
    const api = `http://127.0.0.1:${port}`;

    const service = bash(serviceBlocks[0] as string, cwd, {
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      HOST: '127.0.0.1',
      DATA_DIR: join(cwd, '.data'),
      LOG_LEVEL: 'warn',
    });
    await new Promise<void>((resolve, reject) => {
      const check = () => {
        if (/^Console: /m.test(service.output.stdout)) {
          service.child.stdout?.off('data', check);
          resolve();
        }
      };
      service.child.stdout?.on('data', check);
      void service.exited.then((e) =>
        reject(new Error(`the service exited (${e.code}) before it was ready:\n${e.stdout}\n${e.stderr}`)),
      );
    });
    expect(service.output.stdout).toContain(`API:         ${api}`);

    const run = bash(
      [
        'set -euo pipefail',
        ...steps.map((step, i) => `${step.split(README_API).join(api)}\necho '${MARK(i)}'`),
      ].join('\n'),
      cwd,
      { ADMIN_PORT: String(adminPort) },
    );
    const result = await run.exited;
    const failure = `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`;
    expect(result.code, failure).toBe(0);
    // What each step printed, between the marks.
    const printed = steps.map((_, i) => {
      const from = i === 0 ? 0 : result.stdout.indexOf(MARK(i - 1)) + MARK(i - 1).length;
      const to = result.stdout.indexOf(MARK(i));
      expect(to, `step ${i} finished\n${failure}`).toBeGreaterThan(-1);
      return result.stdout.slice(from, to).trim();
    });
    const all = printed.join('\n');
    expect(all).toMatch(/^workspace [0-9a-f-]{36}, key sk-service-\S+$/m);
    expect(all).toMatch(/^workflow [0-9a-f-]{36}$/m);
    expect(all).toMatch(/^document [0-9a-f-]{36}: completed$/m);
    expect(all).toContain('{"message":"Hello, Ada!"}');
    expect(all).toContain('{"message":"Hello, Grace!"}');

    // The last step's last line is the search's answer: the uploaded document, found.
    const lastLines = (printed.at(-1) as string).split('\n');
    const search = JSON.parse(lastLines.at(-1) as string);
    expect(search.success).toBe(true);
    expect(search.data.results[0]).toMatchObject({
      documentName: 'handbook.md',
      content: expect.stringContaining('Parental leave is sixteen weeks'),
    });

    process.kill(-(service.child.pid as number), 'SIGTERM');
    const stopped = await service.exited;
    // node ends on SIGTERM after draining, with nothing logged at warn or above but the console build.
    expect(stopped.stderr, stopped.stderr).not.toMatch(/"level":"(error|fatal)"/);
  }, 240_000);
});
