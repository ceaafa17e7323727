// Vite's configuration of the admin console: one page under admin/console, built into
// admin/console/dist. The build (admin/console/build.ts) passes it inline; `npx vite admin/console`
// reads this file for a development server that sends /trpc to the admin plane of `npm start`.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import type { InlineConfig } from 'vite';

export const CONSOLE_ROOT = fileURLToPath(new URL('.', import.meta.url));

export function consoleViteConfig(outDir = fileURLToPath(new URL('./dist', import.meta.url))): InlineConfig {
  return {
    root: CONSOLE_ROOT,
    base: '/',
    configFile: false,
    // Nothing to copy: the page brings everything it shows (no fonts or scripts from elsewhere).
    publicDir: false,
    logLevel: 'warn',
    plugins: [react()],
    build: { outDir, emptyOutDir: true, assetsDir: 'assets', sourcemap: false, chunkSizeWarningLimit: 1000 },
    server: { proxy: { '/trpc': `http://127.0.0.1:${process.env.ADMIN_PORT ?? 3001}` } },
  };
}

export default consoleViteConfig();
