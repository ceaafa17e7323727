// The public API alone, for production: `npm run api`. Scale it out behind a load balancer.
import { loadConfigOrExit, requireServerDatabase } from '../config.ts';
import { startDatabaseAnnounced } from '../db/startup.ts';
import { createMetricsRegistry, listenMetrics } from '../http/metrics.ts';
import { listenOrExit } from '../http/serve.ts';
import { configuredSecrets, createLogger } from '../logger.ts';
import { onShutdown } from '../shutdown.ts';
import { startApi } from './start.ts';

const config = requireServerDatabase(loadConfigOrExit(), 'api');
const log = createLogger(config.LOG_LEVEL, { process: 'api' }, { secrets: configuredSecrets(config) });
const { db } = await startDatabaseAnnounced(config, log);
// Latencies and process metrics only, on METRICS_PORT: the backlog gauges come from the admin
// plane, once for the whole service, not once per API replica.
const metrics = config.METRICS_PORT === undefined ? undefined : createMetricsRegistry();
const api = await startApi({ db, config, log, ...(metrics ? { metrics } : {}) });
const server = await listenOrExit(api.app, config.PORT, config.HOST);
const metricsServer = metrics ? await listenMetrics({ db, config, registry: metrics }) : null;
// Before the lines that say it is ready: a SIGTERM sent the moment they are read must find the handler.
onShutdown(log, [server.close, async () => metricsServer?.close(), api.close, db.close]);
console.log(`API listening on ${server.url}`);
if (metricsServer) console.log(`Metrics on ${metricsServer.url}/metrics`);
