// The CSV file of an import sits in storage from its upload's first byte until the import is over
// (./transfer-routes.ts). A process that dies in between would leave it there forever: so each file
// is recorded in the database before it is stored (db/tables/import-spools.ts), under a lease its
// process renews while the file is in use, and sweeps remove the files whose lease ran out: at
// start-up and every few minutes, from any API process. A file in use is never swept: its lease is
// renewed every minute and lasts ten, and one that ran out is never renewed, so a process stalled
// past its lease loses the file (its import fails) rather than two processes disagreeing about it.
import type { Db, Queryable } from '../../../db/client.ts';
import {
  claimSpool,
  expiredSpools,
  forgetSpool,
  releaseSpool,
  renewSpools,
} from '../../../db/tables/import-spools.ts';
import type { Logger } from '../../../logger.ts';
import type { StorageDriver } from '../../../storage/driver.ts';

export const SPOOL_LEASE_SECONDS = 600;
const RENEW_MS = 60_000;
export const SWEEP_MS = 5 * 60_000;

/**
 * The storage an import's file goes through: `put` records the file (and holds its lease) before
 * storing it, `delete` removes it and then its record. What the process holds is renewed on a
 * timer that runs only while it holds something.
 */
export function spooledStorage(db: Queryable, inner: StorageDriver, log: Logger): StorageDriver {
  const held = new Set<string>();
  let timer: ReturnType<typeof setInterval> | undefined;
  const renew = async () => {
    const keys = [...held];
    const renewed = new Set(await renewSpools(db, keys, SPOOL_LEASE_SECONDS));
    for (const key of keys) {
      if (held.has(key) && !renewed.has(key)) {
        log.warn('an import file outlived its lease: a sweep may remove it', { key });
      }
    }
  };
  const hold = (key: string) => {
    held.add(key);
    if (timer) return;
    timer = setInterval(() => {
      renew().catch((err: unknown) => log.error('could not renew the leases of import files', { err }));
    }, RENEW_MS);
    timer.unref?.();
  };
  const drop = (key: string) => {
    held.delete(key);
    if (!held.size && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };
  return {
    name: inner.name,
    async put(key, body, options) {
      await claimSpool(db, key, SPOOL_LEASE_SECONDS);
      hold(key);
      try {
        return await inner.put(key, body, options);
      } catch (err) {
        // A failed put leaves nothing stored: the record goes too.
        drop(key);
        await releaseSpool(db, key).catch(() => {});
        throw err;
      }
    },
    get: (key) => inner.get(key),
    exists: (key) => inner.exists(key),
    async delete(key) {
      await inner.delete(key);
      drop(key);
      // Should this fail, the lease runs out and a sweep forgets the file it finds gone.
      await releaseSpool(db, key).catch((err: unknown) =>
        log.error('could not forget a removed import file', { key, err }),
      );
    },
    close: () => inner.close(),
  };
}

/**
 * Removes the import files whose lease ran out before `now` (the database's clock by default), or
 * every recorded one with `all`, and forgets them; answers how many. A file is removed before its
 * record, so a sweep that dies halfway leaves the record for the next.
 */
export async function sweepSpools(
  db: Queryable,
  storage: StorageDriver,
  options: { now?: Date; all?: boolean } = {},
): Promise<number> {
  let swept = 0;
  for (;;) {
    const keys = await expiredSpools(db, { ...options, limit: 100 });
    for (const key of keys) {
      await storage.delete(key);
      await forgetSpool(db, key, options);
    }
    swept += keys.length;
    if (keys.length < 100) return swept;
  }
}

/**
 * Sweeps at once and then every SWEEP_MS. Embedded, the first sweep takes every recorded file: the
 * database has one process, so a file recorded before it started is a dead process's.
 */
export function startSpoolSweeper(deps: { db: Db; storage: StorageDriver; log: Logger }) {
  const { db, storage, log } = deps;
  let running: Promise<unknown> = Promise.resolve();
  const sweep = (all: boolean) => {
    running = running
      .then(() => sweepSpools(db, storage, { all }))
      .then((n) => {
        if (n) log.info('removed import files left behind', { count: n });
      })
      .catch((err: unknown) => log.error('could not sweep import files', { err }));
  };
  sweep(db.backend === 'pglite');
  const timer = setInterval(() => sweep(false), SWEEP_MS);
  timer.unref?.();
  return {
    async close() {
      clearInterval(timer);
      await running;
    },
  };
}
