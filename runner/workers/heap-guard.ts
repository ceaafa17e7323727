// Loads the heap guard (runner/native/heap-guard.cc) into a function-pool worker: past its V8 heap limit,
// the worker goes on with room to spare until the pool stops it (runner/pool.ts), instead of with the
// 16 MB that Node grants, which one large allocation can overrun, aborting the whole process.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { isMainThread } from 'node:worker_threads';

/** Where scripts/build-heap-guard.ts (node-gyp) writes the addon. */
export const HEAP_GUARD_PATH = fileURLToPath(
  new URL('../native/build/Release/heap_guard.node', import.meta.url),
);

/** Whether the addon has been built (npm install builds it, when the machine has a C++ toolchain). */
export function heapGuardBuilt(): boolean {
  return existsSync(HEAP_GUARD_PATH);
}

/**
 * Installs the guard on this worker thread's isolate; false if the addon is not built or does not load.
 * Never on the main thread, whose heap would go on growing 2 GiB past its limit at a time with no pool to
 * stop it, nor on Deno, which sets no worker heap limits and whose binary is not the Node the addon is
 * built against.
 */
export function installHeapGuard(): boolean {
  if (isMainThread || process.versions.deno !== undefined || !heapGuardBuilt()) return false;
  try {
    createRequire(import.meta.url)(HEAP_GUARD_PATH);
    return true;
  } catch {
    return false;
  }
}
