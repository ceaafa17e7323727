// What `node main.ts` answers when what it needs is taken: a DATA_DIR whose embedded database another
// process holds (refused in one line that names the holder; a holder killed with SIGKILL blocks no
// one), a port something else listens on (one line naming the variable that sets it), and a
// database server that does not answer (one line naming DATABASE_URL).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { linesOf, occupyPort, startEntry } from '../helpers/entry-processes.ts';

// Each start opens an embedded Postgres (a few seconds); the first one on a directory also migrates it.
const START_TIMEOUT = 120_000;
const STARTED = /^Admin plane: .*\n/m;

const dataDir = mkdtempSync(join(tmpdir(), 'wfs-conflicts-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const mainEnv = (env: Record<string, string> = {}) => ({
  DATA_DIR: dataDir,
  HOST: '127.0.0.1',
  PORT: '0',
  ADMIN_PORT: '0',
  ...env,
});

describe('two main.ts on one DATA_DIR', () => {
  it(
    'refuses the second in one line naming the folder and the holder; after a SIGKILL of the first, starts',
    async () => {
      const first = startEntry('main.ts', mainEnv());
      await first.ready(STARTED);

      const attempt = startEntry('main.ts', mainEnv());
      // A second start that comes up is the failure this guards against: stopped, not waited out.
      const second = await Promise.race([attempt.exited, attempt.ready(STARTED).then(() => attempt.stop())]);
      expect(second.code, second.stderr).toBe(1);
      expect(second.stdout).toBe('');
      const lines = linesOf(second.stderr);
      expect(lines).toHaveLength(1);
      const [line] = lines;
      expect(line).toContain(join(dataDir, 'pgdata'));
      expect(line).toContain(`process ${first.pid} (`);
      expect(line).toContain('main.ts');
      expect(line).toMatch(/stop that process, or set another DATA_DIR, or set DATABASE_URL/);

      // Killed without a chance to let go: its lock is left behind, and must not count.
      const killed = await first.stop('SIGKILL');
      expect(killed.signal).toBe('SIGKILL');
      expect(existsSync(join(dataDir, 'pgdata.lock'))).toBe(true);

      const third = startEntry('main.ts', mainEnv());
      await third.ready(STARTED);
      const stopped = await third.stop();
      expect(stopped.code, stopped.stderr).toBe(0);
      // A clean stop lets go of the folder.
      expect(existsSync(join(dataDir, 'pgdata.lock'))).toBe(false);
    },
    3 * START_TIMEOUT,
  );
});

describe('main.ts on a port in use', () => {
  it.each(['PORT', 'ADMIN_PORT'])(
    '%s taken: exits non-zero with one line naming the port and the variable',
    async (variable) => {
      const taken = await occupyPort();
      try {
        const exit = await startEntry('main.ts', mainEnv({ [variable]: String(taken.port) })).exited;
        expect(exit.code, exit.stderr).toBe(1);
        // Log lines (JSON, a runner's warnings) may come first; the answer is one line, no stack.
        const lines = linesOf(exit.stderr).filter((line) => !line.startsWith('{'));
        expect(lines).toHaveLength(1);
        expect(lines[0]).toContain(`Port ${taken.port} is already in use`);
        expect(lines[0]).toContain(`set ${variable} to another port`);
      } finally {
        await taken.close();
      }
      // The failed start let go of the folder on its way out.
      expect(existsSync(join(dataDir, 'pgdata.lock'))).toBe(false);
    },
    START_TIMEOUT,
  );
});

describe('main.ts on a database server it cannot reach', () => {
  it('exits non-zero with one line naming DATABASE_URL, without its password', async () => {
    const closed = await occupyPort();
    await closed.close();
    const exit = await startEntry(
      'main.ts',
      mainEnv({
        DATABASE_URL: `postgres://postgres:hunter2@127.0.0.1:${closed.port}/wfs`,
        ENCRYPTION_KEY: '0'.repeat(64),
      }),
    ).exited;
    expect(exit.code, exit.stderr).toBe(1);
    const lines = linesOf(exit.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`Cannot use the database at DATABASE_URL (127.0.0.1:${closed.port}/wfs)`);
    expect(exit.stderr).not.toContain('hunter2');
  });
});
