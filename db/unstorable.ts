// What Postgres cannot store in a JSON value (text with a NUL or a lone surrogate, nesting too deep),
// found before any store meets it: both planes check every body and query with it.
import type { FieldIssue } from '../errors.ts';
import { isStorableText, MAX_JSON_DEPTH } from './tables/values.ts';

/** A value met in the walk: its parent's node and its key there, so a path is built only for an issue. */
interface Node {
  value: unknown;
  parent: Node | null;
  key: string | number;
  depth: number;
}

const pathOf = (node: Node | null, key?: string): (string | number)[] => {
  const path: (string | number)[] = key === undefined ? [] : [key];
  for (let n = node; n?.parent; n = n.parent) path.push(n.key);
  return path.reverse();
};

/**
 * What in a JSON value Postgres cannot store, as a 400 issue naming where; null when all is well.
 * Text: a NUL or a lone surrogate (text and jsonb refuse both), as a key or a value. Nesting deeper
 * than MAX_JSON_DEPTH: no store takes it, and serialising it again (a job's data, a log) would
 * overflow the stack. Checked once for every body and query, so no store meets either and answers a
 * 500. Iterative, so the check itself survives any depth; a batch of a thousand rows passes through
 * here, so no path is built unless there is an issue to name.
 */
export function unstorableIssue(value: unknown): FieldIssue | null {
  const stack: Node[] = [{ value, parent: null, key: '', depth: 0 }];
  const text = (path: (string | number)[]): FieldIssue => ({
    code: 'invalid_format',
    path,
    message: `${path.length ? path.join('.') : 'Text'} may not contain NUL characters or unpaired surrogates`,
  });
  while (stack.length) {
    const node = stack.pop() as Node;
    const v = node.value;
    if (typeof v === 'string') {
      if (!isStorableText(v)) return text(pathOf(node));
    } else if (v !== null && typeof v === 'object') {
      if (node.depth >= MAX_JSON_DEPTH)
        return {
          code: 'too_big',
          path: pathOf(node).slice(0, 8),
          message: `JSON may nest at most ${MAX_JSON_DEPTH} levels`,
        };
      const depth = node.depth + 1;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) push(stack, v[i], node, i, depth);
      } else {
        for (const k of Object.keys(v)) {
          if (!isStorableText(k)) return text(pathOf(node, k));
          push(stack, (v as Record<string, unknown>)[k], node, k, depth);
        }
      }
    }
  }
  return null;
}

// Numbers, booleans and null hold nothing to check: only strings and containers go on the stack.
function push(stack: Node[], value: unknown, parent: Node, key: string | number, depth: number) {
  if (typeof value === 'string' || (value !== null && typeof value === 'object')) {
    stack.push({ value, parent, key, depth });
  }
}
