// One process at a time on an embedded database directory. PGlite takes no lock of its own: two
// processes on one DATA_DIR both started, and one's writes were silently lost. The lock is a file
// beside the directory naming its holder (pid, the process's start time, the boot and the host):
// a holder that died, even by SIGKILL, is seen to be gone, and a new process that happens to get
// its pid is told apart by its start time, so no dead holder blocks a start. Node and Deno alike
// (node:fs and /proc only); without /proc (macOS) liveness falls back to the pid alone.
import { linkSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, resolve } from 'node:path';
import { ConfigError } from '../config.ts';

interface Holder {
  pid: number;
  /** Field 22 of /proc/<pid>/stat (clock ticks after boot); null where there is no /proc. */
  startTime: string | null;
  bootId: string | null;
  host: string;
  command: string;
  since: string;
}

export interface DataDirLock {
  /** Removes the lock file if it is still this process's; idempotent. */
  release(): void;
}

/** Takes the lock on dataDir or throws a ConfigError whose one line names the holder and the ways out. */
export function lockDataDir(dataDir: string): DataDirLock {
  const dir = resolve(dataDir);
  const file = `${dir}.lock`;
  mkdirSync(dirname(dir), { recursive: true });
  const me = JSON.stringify(self());
  // A few rounds: each one that fails saw a lock appear or vanish between two steps.
  for (let round = 0; round < 5; round++) {
    if (create(file, me)) return held(file, me);
    const text = readOrNull(file);
    if (text === null) continue;
    const holder = parse(text);
    if (holder && alive(holder)) throw new ConfigError(inUse(dir, file, holder));
    // Stale: moved aside first, since another starter may have replaced it since it was read; what
    // was moved is checked to be the stale lock, and a live one taken by mistake is put back.
    const aside = `${file}.stale-${process.pid}`;
    try {
      renameSync(file, aside);
    } catch (err) {
      if (code(err) === 'ENOENT') continue;
      throw err;
    }
    if (readOrNull(aside) !== text) {
      try {
        linkSync(aside, file);
      } catch {
        // Someone holds it anew: the next round reads that holder.
      }
    }
    unlinkSync(aside);
  }
  throw new ConfigError(`Could not lock the embedded database in ${dir}: ${file} keeps changing`);
}

/** Creates the lock with its content in one step (a hard link of a written file), or false if it exists. */
function create(file: string, content: string): boolean {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, content);
  try {
    linkSync(tmp, file);
    return true;
  } catch (err) {
    if (code(err) === 'EEXIST') return false;
    // A file system without hard links: an exclusive create, its content written just after.
    try {
      writeFileSync(file, content, { flag: 'wx' });
      return true;
    } catch (e) {
      if (code(e) === 'EEXIST') return false;
      throw e;
    }
  } finally {
    unlinkSync(tmp);
  }
}

function held(file: string, content: string): DataDirLock {
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    process.off('exit', release);
    if (readOrNull(file) === content) unlinkSync(file);
  };
  // A process that exits without closing the database (a failed start, process.exit) lets go too.
  process.on('exit', release);
  return { release };
}

function self(): Holder {
  const [runtime = 'node', ...args] = process.argv;
  return {
    pid: process.pid,
    startTime: startTimeOf(process.pid),
    bootId: bootId(),
    host: hostname(),
    command: [basename(runtime), ...args].join(' '),
    since: new Date().toISOString(),
  };
}

function alive(h: Holder): boolean {
  // Another machine's process cannot be looked up from here: it holds the lock until it lets go.
  if (h.host !== hostname()) return true;
  const boot = bootId();
  if (h.bootId && boot && h.bootId !== boot) return false;
  const start = startTimeOf(h.pid);
  if (start !== null) return h.startTime === null || h.startTime === start;
  if (procAvailable()) return false;
  try {
    process.kill(h.pid, 0);
    return true;
  } catch (err) {
    return code(err) === 'EPERM';
  }
}

function inUse(dir: string, file: string, h: Holder): string {
  const command = (commandOf(h.pid) ?? h.command).slice(0, 200);
  const where = h.host === hostname() ? '' : ` on host ${h.host}`;
  const stale = where ? ` (if it no longer runs there, delete ${file})` : '';
  return `The embedded database in ${dir} is in use by process ${h.pid}${where} (${command}), since ${h.since}: stop that process, or set another DATA_DIR, or set DATABASE_URL to use a Postgres server${stale}`;
}

function parse(text: string): Holder | null {
  try {
    const h = JSON.parse(text) as Partial<Holder>;
    if (typeof h.pid !== 'number' || typeof h.host !== 'string') return null;
    return {
      pid: h.pid,
      startTime: h.startTime ?? null,
      bootId: h.bootId ?? null,
      host: h.host,
      command: String(h.command ?? ''),
      since: String(h.since ?? ''),
    };
  } catch {
    return null;
  }
}

/** When the process started, from /proc; null when there is no such process or it has ended (a zombie). */
function startTimeOf(pid: number): string | null {
  const stat = readOrNull(`/proc/${pid}/stat`);
  // The command name (field 2) is in parentheses and may hold spaces: count fields after it.
  const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ') ?? [];
  if (fields[0] === 'Z' || fields[0] === 'X') return null;
  return fields[19] ?? null;
}

function commandOf(pid: number): string | null {
  const cmdline = readOrNull(`/proc/${pid}/cmdline`);
  return cmdline ? cmdline.replace(/\0+$/, '').replaceAll('\0', ' ') : null;
}

const bootId = () => readOrNull('/proc/sys/kernel/random/boot_id')?.trim() ?? null;
const procAvailable = () => readOrNull(`/proc/${process.pid}/stat`) !== null;

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

const code = (err: unknown) => (err as NodeJS.ErrnoException).code;
