// Building the admin console with Vite's JS API into admin/console/dist: `npm run build`, the
// postinstall step, and start-up when the files are missing all come here. A build goes into a fresh
// directory first and is swapped in whole, so a running admin plane never serves half of one and two
// builds at once cannot mix their files.
import { randomBytes } from 'node:crypto';
import { existsSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../../logger.ts';

const ROOT = fileURLToPath(new URL('.', import.meta.url));
export const CONSOLE_DIST = join(ROOT, 'dist');

export const consoleIsBuilt = (dir = CONSOLE_DIST) => existsSync(join(dir, 'index.html'));

/** Builds the console and swaps it in as `dist` (admin/console/dist); resolves with how long it took. */
export async function buildConsole(dist = CONSOLE_DIST): Promise<{ ms: number }> {
  const started = performance.now();
  // Loaded here, not at the top: a process whose console is built never loads Vite.
  const { build } = await import('vite');
  const { consoleViteConfig } = await import('./vite.config.ts');
  // Beside the target, so the swap is a rename on one file system.
  const fresh = join(dirname(dist), `.dist-${process.pid}-${randomBytes(4).toString('hex')}`);
  const old = `${fresh}-old`;
  try {
    await build(consoleViteConfig(fresh));
    if (!consoleIsBuilt(fresh)) throw new Error('Vite finished without writing index.html');
    if (existsSync(dist)) renameSync(dist, old);
    try {
      renameSync(fresh, dist);
    } catch (err) {
      // Another build swapped its files in between: theirs are as good as ours.
      if (!consoleIsBuilt(dist)) throw err;
    }
  } finally {
    rmSync(fresh, { recursive: true, force: true });
    rmSync(old, { recursive: true, force: true });
  }
  return { ms: performance.now() - started };
}

/** What the admin plane says at / while the console is missing. */
export interface ConsoleBuild {
  state: 'ready' | 'building' | 'failed';
  /** Settles when a start-up build has finished, whichever way. */
  done: Promise<void>;
}

export interface EnsureOptions {
  /** Where the built files go (admin/console/dist). */
  dir?: string;
  /** How to build them (buildConsole). */
  build?: (dir: string) => Promise<{ ms: number }>;
  /** Where the lines a person reads go (stdout, beside the other start-up lines). */
  say?: (line: string) => void;
}

/**
 * At start-up: when the console's files are missing, builds them in the background and says so. The
 * admin plane serves meanwhile (its / answers that the console is being built); a failed build is
 * logged and leaves / answering how to build, never stops the process.
 */
export function ensureConsoleBuilt(log: Logger, options: EnsureOptions = {}): ConsoleBuild {
  const { dir = CONSOLE_DIST, build = buildConsole, say = console.log } = options;
  if (consoleIsBuilt(dir)) return { state: 'ready', done: Promise.resolve() };
  say('Admin console: its files are missing, building them now (the admin plane serves meanwhile)');
  const status: ConsoleBuild = { state: 'building', done: Promise.resolve() };
  status.done = build(dir).then(
    ({ ms }) => {
      status.state = 'ready';
      say(`Admin console: built in ${(ms / 1000).toFixed(1)} s`);
    },
    (err: unknown) => {
      status.state = 'failed';
      log.error('admin console build failed: `npm run build` shows why', { err });
      say('Admin console: the build failed (see the log); run `npm run build`');
    },
  );
  return status;
}
