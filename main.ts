// Everything in one process: the public API, the runner and the admin plane, on the embedded
// database unless DATABASE_URL is set. This is `npm start`, the first thing a new user runs.
import { createAdminApp } from './admin/app.ts';
import { ensureConsoleBuilt } from './admin/console/build.ts';
import { startApi } from './api/start.ts';
import { loadConfigOrExit } from './config.ts';
import { startDatabaseAnnounced } from './db/startup.ts';
import { createMetricsRegistry, listenMetrics, registerBacklogGauges } from './http/metrics.ts';
import { listenOrExit } from './http/serve.ts';
import { configuredSecrets, createLogger } from './logger.ts';
import { startRunner } from './runner/runner.ts';
import { onShutdown } from './shutdown.ts';

const config = loadConfigOrExit();
const log = createLogger(config.LOG_LEVEL, {}, { secrets: configuredSecrets(config) });
const { db, encryptionKey, bootstrapped } = await startDatabaseAnnounced(config, log);
const runner = await startRunner({ db, config, log, encryptionKey });
// One registry: the admin port's /metrics shows the API's latencies beside the backlog gauges.
const metrics = createMetricsRegistry();
registerBacklogGauges(metrics, db, log);
const api = await startApi({ db, config, log, queue: runner.boss, metrics });
const apiServer = await listenOrExit(api.app, config.PORT, config.HOST);
// The console's files come from `npm install`/`npm run build`; a missing build is made in the background.
const consoleBuild = ensureConsoleBuilt(log);
const admin = await listenOrExit(
  createAdminApp({ db, config, log, encryptionKey, queue: runner.boss, metrics, consoleBuild }),
  config.ADMIN_PORT,
  config.ADMIN_HOST,
  { port: 'ADMIN_PORT', host: 'ADMIN_HOST' },
);
const metricsServer = await listenMetrics({ db, config, registry: metrics });
// Stop taking requests and jobs first, let running work drain, close the database last. Before the
// lines that say it is ready: a SIGTERM sent the moment they are read must find the handler.
onShutdown(log, [
  apiServer.close,
  admin.close,
  async () => metricsServer?.close(),
  api.close,
  runner.stop,
  db.close,
]);

console.log(
  `API:         ${apiServer.url}   (database: ${config.DATABASE_URL ? 'postgres' : `embedded, ${config.DATA_DIR}`})`,
);
console.log(`Admin plane: ${admin.url}/trpc`);
console.log(`Console:     ${admin.url}/   (sign in with ADMIN_TOKEN)`);
if (metricsServer) console.log(`Metrics:     ${metricsServer.url}/metrics`);
if (bootstrapped.apiKey) {
  console.log(
    `Try: curl -X POST ${apiServer.url}/api/v1/workspaces -H 'X-API-Key: ${bootstrapped.apiKey}' -H 'Content-Type: application/json' -d '{"name":"My workspace"}'`,
  );
}
