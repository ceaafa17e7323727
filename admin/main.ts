// The admin plane alone, for production: `npm run admin` serves it; `npm run admin -- <router.procedure>
// '<json>'` is the CLI (admin/cli.ts) instead.
import { loadConfigOrExit, requireServerDatabase } from '../config.ts';
import { startDatabaseAnnounced } from '../db/startup.ts';
import { createMetricsRegistry, listenMetrics, registerBacklogGauges } from '../http/metrics.ts';
import { listenOrExit } from '../http/serve.ts';
import { startBoss } from '../jobs/boss.ts';
import { configuredSecrets, createLogger } from '../logger.ts';
import { onShutdown } from '../shutdown.ts';
import { createAdminApp } from './app.ts';
import { ensureConsoleBuilt } from './console/build.ts';

if (process.argv.length > 2) {
  const { runCli } = await import('./cli.ts');
  process.exitCode = await runCli(process.argv.slice(2));
} else {
  const config = requireServerDatabase(loadConfigOrExit(), 'admin');
  const log = createLogger(config.LOG_LEVEL, { process: 'admin' }, { secrets: configuredSecrets(config) });
  const { db, encryptionKey } = await startDatabaseAnnounced(config, log);
  // A sender only: the runners do the queue's maintenance.
  const queue = await startBoss(db, { log, supervise: false });
  const metrics = createMetricsRegistry();
  registerBacklogGauges(metrics, db, log);
  const consoleBuild = ensureConsoleBuilt(log);
  const server = await listenOrExit(
    createAdminApp({ db, config, log, encryptionKey, queue, metrics, consoleBuild }),
    config.ADMIN_PORT,
    config.ADMIN_HOST,
    { port: 'ADMIN_PORT', host: 'ADMIN_HOST' },
  );
  // The same registry on a port of its own, for a scraper that must not reach the admin plane.
  const metricsServer = await listenMetrics({ db, config, registry: metrics });
  // Before the lines that say it is ready: a SIGTERM sent the moment they are read must find the handler.
  onShutdown(log, [
    server.close,
    async () => metricsServer?.close(),
    () => queue.stop({ graceful: false, close: false }),
    db.close,
  ]);
  console.log(`Admin plane listening on ${server.url}/trpc`);
  console.log(`Admin console on ${server.url}/`);
  if (metricsServer) console.log(`Metrics on ${metricsServer.url}/metrics`);
}
