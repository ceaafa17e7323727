// Runner processes (runner/main.ts) for the tests that start, share and kill them on a server
// database: started with the test service's database, key and storage, killed without mercy.
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import type { TestService } from './service.ts';

/** What a runner needs to work beside the test service: its database, encryption key and storage. */
export const serviceRunnerEnv = (svc: TestService): Record<string, string> => ({
  DATABASE_URL: svc.config.DATABASE_URL as string,
  ENCRYPTION_KEY: (svc.config.ENCRYPTION_KEY as Buffer).toString('hex'),
  DATA_DIR: svc.config.DATA_DIR,
});

const outputs = new WeakMap<ChildProcess, string[]>();

/** The last lines a runner started here printed (its log at warn and above): for failure messages. */
export const runnerOutput = (child: ChildProcess): string => (outputs.get(child) ?? []).join('');

/** Starts `runner/main.ts` with env, recorded in `into`; resolves once it says it started. */
export function startRunnerProcess(env: Record<string, string>, into: ChildProcess[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['runner/main.ts'], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  into.push(child);
  const tail: string[] = [];
  outputs.set(child, tail);
  const keepTail = (d: Buffer) => {
    tail.push(d.toString());
    if (tail.length > 200) tail.shift();
  };
  child.stdout?.on('data', keepTail);
  child.stderr?.on('data', keepTail);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d) => {
      out += d;
      if (out.includes('Runner started')) resolve(child);
    });
    child.stderr?.on('data', (d) => {
      out += d;
    });
    // Set RUNNER_TEST_LOG to a file to keep what the runners said (diagnosing a failure).
    const keep = process.env.RUNNER_TEST_LOG;
    if (keep) {
      child.stdout?.on('data', (d) => appendFileSync(keep, d));
      child.stderr?.on('data', (d) => appendFileSync(keep, d));
    }
    child.once('exit', (code) => reject(new Error(`runner exited (${code}) before starting: ${out}`)));
  });
}

/**
 * Starts a runner beside the test service, as the multi-process tests want it: a dead peer noticed
 * within seconds (a 10 s heartbeat, supervised every second; the service must send jobs with the same
 * heartbeat) and the test's local servers reachable. `extra` adds or overrides variables.
 */
export const startServiceRunner = (
  svc: TestService,
  into: ChildProcess[],
  extra: Record<string, string> = {},
): Promise<ChildProcess> =>
  startRunnerProcess(
    {
      ...serviceRunnerEnv(svc),
      QUEUE_HEARTBEAT_SECONDS: '10',
      QUEUE_SUPERVISE_SECONDS: '1',
      HTTP_ALLOW_LIST: '127.0.0.1',
      ...extra,
    },
    into,
  );

/** How a process ended, at once if it already has. */
export const exited = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null)
      resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => resolve({ code, signal }));
  });

/** SIGKILLs every process in the list and waits for each to end; the list is emptied. */
export async function killAll(children: ChildProcess[]) {
  for (const child of children.splice(0)) {
    child.kill('SIGKILL');
    await exited(child);
  }
}
