// The public API alone, for production: `npm run api`. Scale it out behind a load balancer.
import { createMetricsApp, createMetricsRegistry } from '../admin/metrics.ts';
import { exitOnConfigError, loadConfigOrExit, requireServerDatabase } from '../config.ts';
import { bootstrapBanner, startDatabase } from '../db/startup.ts';
import { configuredSecrets, createLogger } from '../logger.ts';
import { listen } from '../serve.ts';
import { onShutdown } from '../shutdown.ts';
import { startApi } from './start.ts';

const config = requireServerDatabase(loadConfigOrExit(), 'api');
const log = createLogger(config.LOG_LEVEL, { process: 'api' }, { secrets: configuredSecrets(config) });
const { db, bootstrapped } = await startDatabase(config, log).catch(exitOnConfigError);
// At once: a start that fails later (a port taken) must not lose the key and token it created.
for (const line of bootstrapBanner(bootstrapped)) console.log(line);
// Latencies and process metrics only, on METRICS_PORT: the backlog gauges come from the admin
// plane, once for the whole service, not once per API replica.
const metrics = config.METRICS_PORT === undefined ? undefined : createMetricsRegistry();
const api = await startApi({ db, config, log, ...(metrics ? { metrics } : {}) });
const server = await listen(api.app, config.PORT, config.HOST).catch(exitOnConfigError);
const metricsServer =
  metrics && config.METRICS_PORT !== undefined
    ? await listen(
        createMetricsApp({ db, config, registry: metrics }),
        config.METRICS_PORT,
        config.METRICS_HOST,
        {
          port: 'METRICS_PORT',
          host: 'METRICS_HOST',
        },
      ).catch(exitOnConfigError)
    : null;
// Before the lines that say it is ready: a SIGTERM sent the moment they are read must find the handler.
onShutdown(log, [server.close, async () => metricsServer?.close(), api.close, db.close]);
console.log(`API listening on ${server.url}`);
if (metricsServer) console.log(`Metrics on ${metricsServer.url}/metrics`);
