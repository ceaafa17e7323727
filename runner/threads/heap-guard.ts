// Loads the heap guard (runner/native/heap-guard.cc) into a pool's worker thread: past its V8 heap limit,
// the worker goes on with room to spare until its pool stops it (runner/threads/slots.ts), instead of with
// the 16 MB that Node grants, which one large allocation can overrun, aborting the whole process.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { isMainThread, Worker } from 'node:worker_threads';

/** Where scripts/build-heap-guard.ts (node-gyp) writes the addon. */
export const HEAP_GUARD_PATH = fileURLToPath(
  new URL('../native/build/Release/heap_guard.node', import.meta.url),
);

/**
 * Installs the guard on this worker thread's isolate; false if the addon is not built or does not load
 * (built for another Node: its ABI must match). Never on the main thread, whose heap would go on growing
 * 2 GiB past its limit at a time with no pool to stop it, nor on Deno, which sets no worker heap limits
 * and whose binary is not a Node the addon could be built against.
 */
export function installHeapGuard(): boolean {
  if (isMainThread || onDeno() || !existsSync(HEAP_GUARD_PATH)) return false;
  try {
    createRequire(import.meta.url)(HEAP_GUARD_PATH);
    return true;
  } catch {
    return false;
  }
}

let probed: Promise<boolean> | undefined;

/**
 * Whether a worker thread of this process can install the guard: it is built, and for this Node. Asked
 * of a worker once per process (every runner a process starts asks).
 */
export function heapGuardLoads(): Promise<boolean> {
  probed ??= probe();
  return probed;
}

async function probe(): Promise<boolean> {
  if (onDeno() || !existsSync(HEAP_GUARD_PATH)) return false;
  const probe = `import(${JSON.stringify(import.meta.url)}).then(
    (guard) => require('node:worker_threads').parentPort.postMessage(guard.installHeapGuard()),
    () => require('node:worker_threads').parentPort.postMessage(false),
  )`;
  const worker = new Worker(probe, { eval: true });
  try {
    return await new Promise<boolean>((resolve) => {
      worker.once('message', (loaded) => resolve(loaded === true));
      worker.once('error', () => resolve(false));
      worker.once('exit', () => resolve(false));
    });
  } finally {
    await worker.terminate();
  }
}

function onDeno(): boolean {
  return process.versions.deno !== undefined;
}
