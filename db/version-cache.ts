// Deployed workflow versions, cached in memory: a version never changes once written, so an API or
// runner process reads each one from the database once (bounded, least recently used first out).
// A version's definition was parsed before it was stored; the caller names its type (`D`).
import type { Queryable } from './client.ts';
import type { StoredDefinition } from './workflows.ts';

export interface CachedVersion<D = StoredDefinition> {
  definition: D;
  /**
   * Whether a run may read secrets: the definition names a `{{SECRET}}`, or runs child workflows,
   * which may name their own. Runs that need none skip loading them.
   */
  needsSecrets: boolean;
}

export interface VersionCache<D = StoredDefinition> {
  get(workflowId: string, version: number): Promise<CachedVersion<D> | null>;
}

export function createVersionCache<D = StoredDefinition>(db: Queryable, max = 1000): VersionCache<D> {
  const entries = new Map<string, CachedVersion<D>>();
  return {
    async get(workflowId, version) {
      const key = `${workflowId}:${version}`;
      const hit = entries.get(key);
      if (hit) {
        // Re-insert: Map order is insertion order, so the oldest-used entry is always first.
        entries.delete(key);
        entries.set(key, hit);
        return hit;
      }
      const [row] = await db.query<{ definition: D }>(
        'select definition from workflow_versions where workflow_id = $1 and version = $2',
        [workflowId, version],
      );
      if (!row) return null;
      const text = JSON.stringify(row.definition);
      const needsSecrets = /\{\{[A-Za-z_][A-Za-z0-9_]*\}\}/.test(text) || text.includes('"type":"workflow"');
      const entry = { definition: row.definition, needsSecrets };
      entries.set(key, entry);
      if (entries.size > max) entries.delete(entries.keys().next().value as string);
      return entry;
    },
  };
}
