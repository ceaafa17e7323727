// References in block configs: `<start.field>`, `<blockId.path.to.value>`, `<blockId>`,
// `<loop.item>`, `<loop.index>` and `{{SECRET}}`. A string that is exactly one reference takes the
// value with its type; otherwise references are interpolated as text.

// A reference names a block (or start/loop/parallel) and an optional dotted path; array indexes are
// written as path segments (`<fetch.data.items.0.name>`).
const REF = /<([A-Za-z][A-Za-z0-9_-]*)((?:\.[A-Za-z0-9_$-]+)*)>/g;
const SECRET = /\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}/g;
const ONE_REF = /^<([A-Za-z][A-Za-z0-9_-]*)((?:\.[A-Za-z0-9_$-]+)*)>$/;
const ONE_SECRET = /^\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}$/;

export const LOOP_ROOTS = new Set(['loop', 'parallel']);

export interface Reference {
  root: string;
  path: string[];
  /** The text as written, for error messages. */
  text: string;
}

/**
 * The references in a string. A bare `<word>` is a reference only when `word` is a known root
 * (a block id, start, loop): TypeScript generics such as `Array<string>` are not references.
 */
export function findReferences(text: string, isRoot: (name: string) => boolean): Reference[] {
  const refs: Reference[] = [];
  for (const m of text.matchAll(REF)) {
    const root = m[1] as string;
    const path = m[2] ? (m[2].slice(1).split('.') as string[]) : [];
    if (path.length === 0 && !isRoot(root)) continue;
    refs.push({ root, path, text: m[0] });
  }
  return refs;
}

export function findSecrets(text: string): string[] {
  return [...text.matchAll(SECRET)].map((m) => m[1] as string);
}

/** What references resolve against while a workflow runs. */
export interface ResolveScope {
  /** Roots: start (the inputs), each block's output by id, loop/parallel variables. */
  roots: Map<string, unknown>;
  secrets: Map<string, string>;
}

export class UnresolvedReference extends Error {}

/** Roots that are not a block's output: inputs may be left out and loop items are data. */
const DATA_ROOTS = new Set(['start', ...LOOP_ROOTS]);

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** Keys to show in a message: enough to spot the one meant. */
function keyList(value: Record<string, unknown>): string {
  const keys = Object.keys(value);
  const shown = keys.slice(0, 20).join(', ');
  return keys.length > 20 ? `${shown}, … (${keys.length} in all)` : shown;
}

/** Why a reference into a block's output found nothing: the part missing and the keys that are there. */
function notFound(text: string, root: string, at: string[], key: string, value: Record<string, unknown>) {
  const keys = Object.keys(value).length ? keyList(value) : '';
  const where =
    at.length === 0
      ? `block "${root}" has ${keys ? `outputs ${keys}` : 'no outputs'}`
      : `<${[root, ...at].join('.')}> has no "${key}" (${keys ? `its keys: ${keys}` : 'it is empty'})`;
  return new UnresolvedReference(`Reference ${text} not found: ${where}`);
}

function lookup(scope: ResolveScope, root: string, path: string[], text: string): unknown {
  if (!scope.roots.has(root)) {
    // A bare <word> that names nothing is plain text (see findReferences); a dotted one is an error.
    if (path.length === 0) return undefined;
    throw new UnresolvedReference(`${text} refers to "${root}", which has not run`);
  }
  let value: unknown = scope.roots.get(root);
  // Into a block's output, an object without the key named is a mistake in the reference (a typo,
  // a field the block never gives), which would otherwise flow on as undefined: the run fails naming
  // it. A null on the way still resolves to nothing (a value that is legitimately empty), as does
  // an array item past the end.
  const checked = !DATA_ROOTS.has(root);
  for (const [i, key] of path.entries()) {
    if (value === null || value === undefined) return undefined;
    if (checked && isPlainObject(value) && !Object.hasOwn(value, key))
      throw notFound(text, root, path.slice(0, i), key, value);
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

function secret(scope: ResolveScope, name: string): string {
  const value = scope.secrets.get(name);
  if (value === undefined) throw new UnresolvedReference(`Secret {{${name}}} is not set in this workspace`);
  return value;
}

const asText = (v: unknown) =>
  v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v);

export function resolveString(text: string, scope: ResolveScope): unknown {
  const one = ONE_REF.exec(text);
  if (one && scope.roots.has(one[1] as string)) {
    return lookup(scope, one[1] as string, one[2] ? one[2].slice(1).split('.') : [], text);
  }
  const oneSecret = ONE_SECRET.exec(text);
  if (oneSecret) return secret(scope, oneSecret[1] as string);
  return text
    .replace(REF, (whole, root: string, dotted: string) => {
      if (!dotted && !scope.roots.has(root)) return whole;
      return asText(lookup(scope, root, dotted ? dotted.slice(1).split('.') : [], whole));
    })
    .replace(SECRET, (_, name: string) => secret(scope, name));
}

/** Resolves every string in a JSON-like value; `raw` names top-level keys left as written (code). */
export function resolveValue(value: unknown, scope: ResolveScope, raw: readonly string[] = []): unknown {
  if (typeof value === 'string') return resolveString(value, scope);
  if (Array.isArray(value)) return value.map((v) => resolveValue(v, scope));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = raw.includes(k) ? v : resolveValue(v, scope);
    return out;
  }
  return value;
}

/**
 * Code with references replaced by JSON literals of their values, so function bodies and condition
 * expressions can use `<block.field>` like a variable. Secrets become string literals.
 */
export function substituteIntoCode(code: string, scope: ResolveScope): string {
  return code
    .replace(REF, (whole, root: string, dotted: string) => {
      if (!dotted && !scope.roots.has(root)) return whole;
      const v = lookup(scope, root, dotted ? dotted.slice(1).split('.') : [], whole);
      return v === undefined ? 'undefined' : JSON.stringify(v);
    })
    .replace(SECRET, (_, name: string) => JSON.stringify(secret(scope, name)));
}
