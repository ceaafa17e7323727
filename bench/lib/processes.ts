// The processes a bench runs beside itself, so their work does not share the measured main thread:
// runners (the production topology) and the load generator (bench/lib/load.ts).
import { spawn } from 'node:child_process';
import type { Config } from '../../config.ts';

/** A runner process on the bench's database; resolves once it is working its queues. */
export async function spawnRunner(config: Config) {
  const child = spawn(process.execPath, [new URL('../../runner/main.ts', import.meta.url).pathname], {
    env: {
      ...process.env,
      DATABASE_URL: config.DATABASE_URL,
      ENCRYPTION_KEY: (config.ENCRYPTION_KEY as Buffer).toString('hex'),
      RUNNER_CONCURRENCY: String(config.RUNNER_CONCURRENCY),
      LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('Runner started')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`runner exited with ${code}`)));
  });
  return {
    stop: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export interface Target {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  /** A header given a fresh random value on every request (an Idempotency-Key). */
  uniqueHeader?: string;
  /** The body varies by request (see bench/lib/load.ts). */
  indexed?: boolean;
}

/**
 * Runs the load generator against a target in its own process and returns its figures: requests a
 * second, p50 and p99 in ms, and the generator's own CPU a request in µs (what the client took of
 * the machine the service shares).
 */
export async function load(
  target: Target,
  count: number,
  concurrency: number,
): Promise<{ rate: number; p50: number; p99: number; clientCpuUs: number }> {
  const spec = JSON.stringify({ ...target, count, concurrency, warmup: Math.min(200, count) });
  const child = spawn(process.execPath, [new URL('./load.ts', import.meta.url).pathname, spec], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d;
  });
  const code = await new Promise((r) => child.once('exit', r));
  if (code !== 0) throw new Error(`load generator failed (${code})`);
  return JSON.parse(out);
}
