// The record of each CSV file an import keeps in storage while it runs (migration 0014): a lease its
// process renews, so that a file left behind by a process that died is found and removed, and a file
// a live process is still reading, in this process or another, is not.
import type { Queryable } from '../client.ts';

/**
 * Records a spooled file, held for `leaseSeconds` from now: before its first byte is stored, so a
 * crash at any point after leaves the record to find it by.
 */
export async function claimSpool(db: Queryable, key: string, leaseSeconds: number): Promise<void> {
  await db.query(
    `insert into table_import_spools (storage_key, held_until)
     values ($1, now() + make_interval(secs => $2::int))`,
    [key, leaseSeconds],
  );
}

/**
 * Extends the leases of files still held; a lease that has run out is not renewed (a sweep may be
 * removing its file). Answers the keys renewed.
 */
export async function renewSpools(db: Queryable, keys: string[], leaseSeconds: number): Promise<string[]> {
  if (!keys.length) return [];
  const rows = await db.query<{ storage_key: string }>(
    `update table_import_spools set held_until = now() + make_interval(secs => $2::int)
      where storage_key = any($1::text[]) and held_until >= now()
      returning storage_key`,
    [keys, leaseSeconds],
  );
  return rows.map((r) => r.storage_key);
}

/** The record of a file its process has removed itself. */
export async function releaseSpool(db: Queryable, key: string): Promise<void> {
  await db.query('delete from table_import_spools where storage_key = $1', [key]);
}

/**
 * The spooled files whose lease ran out before `now` (the database's clock by default), oldest
 * first; `all` takes every one whatever its lease (an embedded database at start-up: no other
 * process can hold one).
 */
export async function expiredSpools(
  db: Queryable,
  options: { now?: Date; all?: boolean; limit?: number } = {},
): Promise<string[]> {
  const rows = await db.query<{ storage_key: string }>(
    `select storage_key from table_import_spools
      where $2::boolean or held_until < coalesce($1::timestamptz, now())
      order by held_until limit $3`,
    [options.now ?? null, options.all === true, options.limit ?? 100],
  );
  return rows.map((r) => r.storage_key);
}

/**
 * Forgets a swept file, once it is removed: only if its lease still ran out by `now` (with `all`,
 * whatever it is).
 */
export async function forgetSpool(
  db: Queryable,
  key: string,
  options: { now?: Date; all?: boolean } = {},
): Promise<void> {
  await db.query(
    `delete from table_import_spools
      where storage_key = $1 and ($3::boolean or held_until < coalesce($2::timestamptz, now()))`,
    [key, options.now ?? null, options.all === true],
  );
}
