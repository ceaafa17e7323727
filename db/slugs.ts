// Turns a display name into a URL slug, and finds a free one when the plain slug is taken.
import type { Queryable } from './client.ts';

/** A URL slug of a name; `fallback` when the name has no letters or digits to make one of. */
export function slugify(name: string, fallback = 'workspace'): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
    .replace(/-+$/g, '');
  return slug || fallback;
}

/**
 * The base slug, or base-2, base-3, … : the first that `taken` does not already list. The unique
 * index still decides a race; callers retry on its violation.
 */
export async function freeSlug(
  db: Queryable,
  base: string,
  takenQuery: string,
  params: unknown[],
): Promise<string> {
  const rows = await db.query<{ slug: string }>(takenQuery, [...params, base, `${base}-%`]);
  const taken = new Set(rows.map((r) => r.slug));
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}
