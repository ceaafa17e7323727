// Builds the admin console (admin/console → admin/console/dist) with Vite: `npm run build`, and the
// postinstall step of `npm install`. With --postinstall a failure only warns, so an install is never
// broken by the console: start-up builds it again when it is still missing.
import { buildConsole, CONSOLE_DIST } from '../admin/console/build.ts';

const postinstall = process.argv.includes('--postinstall');
try {
  const { ms } = await buildConsole();
  console.log(`Admin console built into ${CONSOLE_DIST} in ${(ms / 1000).toFixed(1)} s`);
} catch (err) {
  console.error(`Admin console build failed: ${err instanceof Error ? err.message : String(err)}`);
  if (postinstall) console.error('(the service still installs; `npm start` tries the build again)');
  else process.exitCode = 1;
}
