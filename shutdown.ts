// Graceful shutdown on SIGTERM/SIGINT: run the given closers in order (stop taking work first, then
// drain, then close the database), then exit. A second signal exits at once.
import type { Logger } from './logger.ts';

export function onShutdown(log: Logger, closers: (() => Promise<unknown>)[]) {
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info('shutting down', { signal });
    for (const close of closers) {
      try {
        await close();
      } catch (err) {
        log.error('error during shutdown', { err });
      }
    }
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
