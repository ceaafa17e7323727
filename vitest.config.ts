import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    // PGlite instances are WASM heaps: a few per worker, and a slow machine may take a while to start one.
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
