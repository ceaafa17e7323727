import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// Node's on-disk compile cache for the workers and every process they start (test/helpers/child-env.ts
// passes it to the children started with a bare environment): a child process of the service compiles
// its ~130 modules from the cache instead of type-stripping and compiling them afresh each time.
process.env.NODE_COMPILE_CACHE ??= join(tmpdir(), 'workflow-service-compile-cache');

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    // PGlite instances are WASM heaps: a few per worker, and a slow machine may take a while to start one.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Vitest's default is one worker fewer than the cores: on CI's 2 cores, one file at a time. Most files
    // spend their time waiting (on Postgres, child processes, servers they start), so at least two at a
    // time: the Postgres run went from ~16 to ~11 minutes on 2 cores.
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
