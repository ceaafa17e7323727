// The scopes an API key may be limited to. Each route of the public API declares the one it needs
// (api/routes/router.ts); a key with no scopes keeps its full reach. A `:write` scope grants its
// `:read` too (writing a table without reading it back helps no one); `workflows:execute` grants
// only execution, its jobs and cancellation, so a pipeline's key cannot read workflow definitions.

export const SCOPES = [
  'workflows:read',
  'workflows:write',
  'workflows:execute',
  'knowledge:read',
  'knowledge:write',
  'tables:read',
  'tables:write',
  'files:read',
  'files:write',
  'logs:read',
  'audit:read',
  'workspaces:write',
] as const;

export type Scope = (typeof SCOPES)[number];

export const isScope = (s: string): s is Scope => (SCOPES as readonly string[]).includes(s);

/** Whether a key limited to `held` (empty: unlimited) may do what needs `needed`. */
export function grants(held: readonly string[], needed: Scope): boolean {
  if (held.length === 0 || held.includes(needed)) return true;
  return needed.endsWith(':read') && held.includes(needed.replace(/:read$/, ':write'));
}
