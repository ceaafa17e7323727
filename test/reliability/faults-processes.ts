// Processes the fault tests start and kill: runner processes (runner/main.ts) and a private Postgres
// cluster that a test may stop and start without disturbing the shared test server.
import { type ChildProcess, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  exited,
  killAll,
  runnerOutput,
  startRunnerProcess as startRunner,
} from '../helpers/runner-processes.ts';

/** A runner with the fault tests' defaults (a short heartbeat, the local http target allowed). */
export const startRunnerProcess = (env: Record<string, string>, into: ChildProcess[]) =>
  startRunner(
    { QUEUE_HEARTBEAT_SECONDS: '10', QUEUE_SUPERVISE_SECONDS: '1', HTTP_ALLOW_LIST: '127.0.0.1', ...env },
    into,
  );

export { exited, killAll, runnerOutput };

const BIN = '/usr/lib/postgresql/15/bin';

/** Whether this machine can run a private cluster (the server binaries of the test server's major). */
export const canRunPrivatePostgres = () => existsSync(join(BIN, 'initdb')) && existsSync(join(BIN, 'pg_ctl'));

export interface PrivatePostgres {
  url: string;
  start(): void;
  /** `fast` disconnects clients (57P01); `immediate` drops them like a crash. */
  stop(mode?: 'fast' | 'immediate'): void;
  destroy(): void;
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

/**
 * A throwaway cluster in a temp dir on a free port. Postgres refuses to run as root, so as root
 * initdb and pg_ctl run as the `postgres` user, which owns the directory.
 */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'faults-pg-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
  }
  const run = (bin: string, args: string[]) =>
    asRoot
      ? execFileSync('runuser', ['-u', 'postgres', '--', join(BIN, bin), ...args], { stdio: 'pipe' })
      : execFileSync(join(BIN, bin), args, { stdio: 'pipe' });
  const data = join(dir, 'data');
  const port = await freePort();
  run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`;
  let running = false;
  const pg: PrivatePostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start() {
      run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '30', 'start']);
      running = true;
    },
    stop(mode = 'fast') {
      run('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '30', 'stop']);
      running = false;
    },
    destroy() {
      try {
        if (running || existsSync(join(data, 'postmaster.pid'))) pg.stop('immediate');
      } catch {
        // Already down.
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  // Also when the test process ends abruptly (a timed-out hook): no cluster outlives its test.
  process.once('exit', () => pg.destroy());
  try {
    pg.start();
  } catch (err) {
    pg.destroy();
    throw err;
  }
  return pg;
}
