// What Postgres cannot store in a JSON value (text with a NUL or a lone surrogate, nesting too deep),
// found before any store meets it: both planes check every body and query with it.
import type { FieldIssue } from '../errors.ts';
import { isStorableText, MAX_JSON_DEPTH } from './tables/values.ts';

/**
 * What in a JSON value Postgres cannot store, as a 400 issue naming where; null when all is well.
 * Text: a NUL or a lone surrogate (text and jsonb refuse both), as a key or a value. Nesting deeper
 * than MAX_JSON_DEPTH: no store takes it, and serialising it again (a job's data, a log) would
 * overflow the stack. Checked once for every body and query, so no store meets either and answers a
 * 500. Iterative, so the check itself survives any depth.
 */
export function unstorableIssue(value: unknown): FieldIssue | null {
  const stack: [unknown, (string | number)[]][] = [[value, []]];
  const text = (path: (string | number)[]): FieldIssue => ({
    code: 'invalid_format',
    path,
    message: `${path.length ? path.join('.') : 'Text'} may not contain NUL characters or unpaired surrogates`,
  });
  while (stack.length) {
    const [v, path] = stack.pop() as [unknown, (string | number)[]];
    if (typeof v === 'string') {
      if (!isStorableText(v)) return text(path);
    } else if (v !== null && typeof v === 'object') {
      if (path.length >= MAX_JSON_DEPTH)
        return {
          code: 'too_big',
          path: path.slice(0, 8),
          message: `JSON may nest at most ${MAX_JSON_DEPTH} levels`,
        };
      if (Array.isArray(v)) {
        v.forEach((x, i) => {
          stack.push([x, [...path, i]]);
        });
      } else {
        for (const [k, x] of Object.entries(v)) {
          if (!isStorableText(k)) return text([...path, k]);
          stack.push([x, [...path, k]]);
        }
      }
    }
  }
  return null;
}
