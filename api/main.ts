// The public API alone, for production: `npm run api`. Scale it out behind a load balancer.
import { loadConfigOrExit, requireServerDatabase } from '../config.ts';
import { bootstrapBanner, startDatabase } from '../db/startup.ts';
import { createLogger } from '../logger.ts';
import { listen } from '../serve.ts';
import { onShutdown } from '../shutdown.ts';
import { startApi } from './start.ts';

const config = requireServerDatabase(loadConfigOrExit(), 'api');
const log = createLogger(config.LOG_LEVEL, { process: 'api' });
const { db, bootstrapped } = await startDatabase(config, log);
const api = await startApi({ db, config, log });
const server = await listen(api.app, config.PORT, config.HOST);
for (const line of bootstrapBanner(bootstrapped)) console.log(line);
console.log(`API listening on ${server.url}`);
onShutdown(log, [server.close, api.close, db.close]);
