// The embedded database's DATA_DIR lock (db/data-dir-lock.ts) against lock files other processes
// leave: one whose pid now belongs to another process (pid reuse) or to no process does not block;
// one from another host does, naming the host and the file to delete; a live holder does, by pid.
// (Two real processes on one DATA_DIR, and a SIGKILLed holder: test/e2e/start-conflicts.test.ts.)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../config.ts';
import { lockDataDir } from '../../db/data-dir-lock.ts';

const root = mkdtempSync(join(tmpdir(), 'wfs-lock-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
const freshDir = () => join(root, `data-${++n}`, 'pgdata');

/** The lock as this process writes it, with some fields changed: what another process would leave. */
function leaveLock(dir: string, change: Record<string, unknown>) {
  const lock = lockDataDir(dir);
  const content = JSON.parse(readFileSync(`${dir}.lock`, 'utf8'));
  lock.release();
  writeFileSync(`${dir}.lock`, JSON.stringify({ ...content, ...change }));
}

const lockError = (dir: string) => {
  try {
    lockDataDir(dir).release();
  } catch (err) {
    return err;
  }
  return null;
};

describe('the embedded DATA_DIR lock', () => {
  it('refuses a second holder in one line naming the holder, and is free again once released', () => {
    const dir = freshDir();
    const lock = lockDataDir(dir);
    const err = lockError(dir);
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as Error).message;
    expect(message.split('\n')).toHaveLength(1);
    expect(message).toContain(`The embedded database in ${dir} is in use by process ${process.pid} (`);
    expect(message).toContain('stop that process, or set another DATA_DIR, or set DATABASE_URL');
    lock.release();
    expect(existsSync(`${dir}.lock`)).toBe(false);
    expect(lockError(dir)).toBeNull();
  });

  it('takes over a lock whose pid now names another process (pid reuse)', () => {
    const dir = freshDir();
    // This very process, but started at another time: the pid was reused.
    leaveLock(dir, { startTime: '1' });
    expect(lockError(dir)).toBeNull();
  });

  it('takes over a lock whose process has ended', () => {
    const dir = freshDir();
    const ended = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    });
    leaveLock(dir, { pid: Number(ended.stdout) });
    expect(lockError(dir)).toBeNull();
  });

  it('takes over a lock from before the last boot', () => {
    const dir = freshDir();
    leaveLock(dir, { bootId: 'another-boot' });
    expect(lockError(dir)).toBeNull();
  });

  it('takes over an unreadable lock (a crash while it was written)', () => {
    const dir = freshDir();
    leaveLock(dir, {});
    writeFileSync(`${dir}.lock`, '');
    expect(lockError(dir)).toBeNull();
  });

  it('leaves a lock from another host alone, naming the host and the file to delete if it no longer runs', () => {
    const dir = freshDir();
    leaveLock(dir, { host: 'elsewhere', pid: 4242 });
    const message = (lockError(dir) as Error).message;
    expect(message).toContain('in use by process 4242 on host elsewhere');
    expect(message).toContain(`if it no longer runs there, delete ${dir}.lock`);
  });
});
