// Waiting for commits made without a flush to reach disk. A transaction run with
// `synchronous_commit = off` (COMMIT_WITHOUT_FLUSH) is answered, and lets go of its locks, as soon
// as its commit record is in the WAL buffers; WAL reaches disk in order, so once any later commit
// that waits for the flush has been answered, the earlier one is durable too. walFlushed() is that
// later commit: an update of a row of wal_flush_marks (migration 0027), committed durably. Callers
// that arrive together share one (../batcher.ts), so concurrent write groups cost one disk flush.
//
// Why not a cheaper statement: a transaction that writes no WAL record of its own commits without
// flushing even with synchronous_commit on (pg_current_xact_id() alone returns in 0.17 ms on a disk
// whose flush takes 3.5 ms), and pg_logical_emit_message is for superusers only.
import { createBatcher } from './batcher.ts';
import type { Db } from './client.ts';

const flushers = new WeakMap<Db, () => Promise<void>>();

/**
 * Resolves once every commit this process had been answered before the call is on disk; rejects
 * when that cannot be known (the connection failed): a caller must then not say its writes held.
 */
export function walFlushed(db: Db): Promise<void> {
  let flush = flushers.get(db);
  if (!flush) {
    const batch = createBatcher(async (asks: null[]) => {
      await db.query('update wal_flush_marks set flushed_at = now() where slot = pg_backend_pid() % 64');
      return asks.map(() => undefined);
    });
    flush = () => batch(null);
    flushers.set(db, flush);
  }
  return flush();
}
