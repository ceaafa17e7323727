// The service's entry points (main.ts, api/main.ts, runner/main.ts, admin/main.ts) as real processes:
// started with only the environment a test gives them, watched for a line, stopped with SIGTERM or
// SIGKILL, and what they printed kept. Every process started here is killed when the file ends.
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import { childBaseEnv } from './child-env.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const running = new Set<ChildProcess>();

afterAll(() => {
  for (const child of running) child.kill('SIGKILL');
});

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface EntryProcess {
  child: ChildProcess;
  pid: number;
  /** What it printed so far. */
  output: { stdout: string; stderr: string };
  exited: Promise<Exit>;
  /** Resolves once stdout has a line matching re; rejects if the process ends first. */
  ready(re: RegExp): Promise<void>;
  /** Sends the signal (SIGTERM by default) and resolves with how it ended. */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

/** Starts `node <script>` in the repository with PATH, HOME and env only. */
export function startEntry(script: string, env: Record<string, string>): EntryProcess {
  const child = spawn(process.execPath, [script], {
    cwd: ROOT,
    env: { ...childBaseEnv(), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error(`could not start ${script}`);
  running.add(child);
  const output = { stdout: '', stderr: '' };
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (output.stdout += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (output.stderr += d));
  const exited = new Promise<Exit>((resolve) =>
    child.on('close', (code, signal) => {
      running.delete(child);
      resolve({ code, signal, ...output });
    }),
  );
  return {
    child,
    pid: child.pid,
    output,
    exited,
    ready: (re) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!re.test(output.stdout)) return;
          child.stdout?.off('data', check);
          resolve();
        };
        child.stdout?.on('data', check);
        check();
        void exited.then((e) =>
          reject(
            new Error(
              `${script} ended (${e.code ?? e.signal}) before printing ${re}:\n${e.stdout}\n${e.stderr}`,
            ),
          ),
        );
      }),
    stop: (signal = 'SIGTERM') => {
      child.kill(signal);
      return exited;
    },
  };
}

/** A TCP server holding a loopback port, so that a process told to listen there cannot. */
export async function occupyPort(): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('no address');
  return { port: address.port, close: () => new Promise((r) => server.close(() => r())) };
}

/** A loopback port nobody listens on right now, for a process to be told to listen on. */
export async function freePort(): Promise<number> {
  const held = await occupyPort();
  await held.close();
  return held.port;
}

/** The lines of a text, without the empty one after a final newline. */
export const linesOf = (text: string) => text.split('\n').filter((line) => line !== '');
