// The admin plane alone, for production: `npm run admin` serves it; `npm run admin -- <router.procedure>
// '<json>'` is the CLI (admin/cli.ts) instead.
import { loadConfigOrExit, requireServerDatabase } from '../config.ts';
import { bootstrapBanner, startDatabase } from '../db/startup.ts';
import { createLogger } from '../logger.ts';
import { startBoss } from '../runner/boss.ts';
import { listen } from '../serve.ts';
import { onShutdown } from '../shutdown.ts';
import { createAdminApp } from './app.ts';

if (process.argv.length > 2) {
  const { runCli } = await import('./cli.ts');
  process.exitCode = await runCli(process.argv.slice(2));
} else {
  const config = requireServerDatabase(loadConfigOrExit(), 'admin');
  const log = createLogger(config.LOG_LEVEL, { process: 'admin' });
  const { db, encryptionKey, bootstrapped } = await startDatabase(config, log);
  // A sender only: the runners do the queue's maintenance.
  const queue = await startBoss(db, { log, supervise: false });
  const server = await listen(
    createAdminApp({ db, config, log, encryptionKey, queue }),
    config.ADMIN_PORT,
    config.ADMIN_HOST,
  );
  for (const line of bootstrapBanner(bootstrapped)) console.log(line);
  console.log(`Admin plane listening on ${server.url}/trpc`);
  onShutdown(log, [server.close, () => queue.stop({ graceful: false, close: false }), db.close]);
}
