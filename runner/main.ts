// A runner alone, for production: `npm run runner`. Start as many as the load needs, on any hosts,
// against the same Postgres; each fetches jobs from the shared queues.
import { loadConfigOrExit, requireServerDatabase } from '../config.ts';
import { startDatabaseAnnounced } from '../db/startup.ts';
import { configuredSecrets, createLogger } from '../logger.ts';
import { onShutdown } from '../shutdown.ts';
import { startRunner } from './runner.ts';

const config = requireServerDatabase(loadConfigOrExit(), 'runner');
const log = createLogger(
  config.LOG_LEVEL,
  { process: 'runner', pid: process.pid },
  { secrets: configuredSecrets(config) },
);
// A runner started first on an empty database is the one that creates the key and token: shown here.
const { db, encryptionKey } = await startDatabaseAnnounced(config, log);
const runner = await startRunner({ db, config, log, encryptionKey });
// Before the line that says it is ready: a SIGTERM sent the moment it reads so must find the handler.
onShutdown(log, [runner.stop, db.close]);
console.log('Runner started');
