// Everything in one process: the public API, the runner and the admin plane, on the embedded
// database unless DATABASE_URL is set. This is `npm start`, the first thing a new user runs.
import { createAdminApp } from './admin/app.ts';
import { ensureConsoleBuilt } from './admin/console/build.ts';
import { createMetricsApp, createMetricsRegistry, registerBacklogGauges } from './admin/metrics.ts';
import { startApi } from './api/start.ts';
import { exitOnConfigError, loadConfigOrExit } from './config.ts';
import { bootstrapBanner, startDatabase } from './db/startup.ts';
import { configuredSecrets, createLogger } from './logger.ts';
import { startRunner } from './runner/runner.ts';
import { listen } from './serve.ts';
import { onShutdown } from './shutdown.ts';

const config = loadConfigOrExit();
const log = createLogger(config.LOG_LEVEL, {}, { secrets: configuredSecrets(config) });
const { db, encryptionKey, bootstrapped } = await startDatabase(config, log).catch(exitOnConfigError);
// At once: a start that fails later (a port taken) must not lose the key and token it created.
for (const line of bootstrapBanner(bootstrapped)) console.log(line);
const runner = await startRunner({ db, config, log, encryptionKey });
// One registry: the admin port's /metrics shows the API's latencies beside the backlog gauges.
const metrics = createMetricsRegistry();
registerBacklogGauges(metrics, db, log);
const api = await startApi({ db, config, log, queue: runner.boss, metrics });
const apiServer = await listen(api.app, config.PORT, config.HOST).catch(exitOnConfigError);
// The console's files come from `npm install`/`npm run build`; a missing build is made in the background.
const consoleBuild = ensureConsoleBuilt(log);
const admin = await listen(
  createAdminApp({ db, config, log, encryptionKey, queue: runner.boss, metrics, consoleBuild }),
  config.ADMIN_PORT,
  config.ADMIN_HOST,
  { port: 'ADMIN_PORT', host: 'ADMIN_HOST' },
).catch(exitOnConfigError);
const metricsServer =
  config.METRICS_PORT === undefined
    ? null
    : await listen(
        createMetricsApp({ db, config, registry: metrics }),
        config.METRICS_PORT,
        config.METRICS_HOST,
        { port: 'METRICS_PORT', host: 'METRICS_HOST' },
      ).catch(exitOnConfigError);
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
