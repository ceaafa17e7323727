// A workflow's `concurrency: {limit, key?}`: its schema, the check of its key, and the group an
// execution counts in, resolved from the start block's inputs when it is enqueued. The limit itself
// is kept by the claim (db/execution-concurrency.ts).
import { z } from 'zod';
import type { FieldIssue } from '../../errors.ts';
import { findReferences, findSecrets, resolveString } from './references.ts';

/** Mirrors MAX_CONCURRENCY_LIMIT (db/execution-concurrency.ts) and the column's check. */
const MAX_LIMIT = 1000;

export const concurrencySchema = z
  .object({
    limit: z.number().int().min(1).max(MAX_LIMIT),
    /** A text with references into the inputs (`<start.customerId>`): one group per value. */
    key: z.string().min(1).max(500).optional(),
  })
  .strict();

export type Concurrency = z.output<typeof concurrencySchema>;

/** Problems of a key: it may refer to the inputs only (`<start.x>`), at least once, and to no secret. */
export function checkConcurrencyKey(key: string, path: (string | number)[]): FieldIssue[] {
  const refs = findReferences(key, (name) => name === 'start');
  const at = [...path, 'key'];
  if (findSecrets(key).length)
    return [{ code: 'custom', path: at, message: 'A concurrency key may not use secrets' }];
  if (!refs.length)
    return [
      {
        code: 'custom',
        path: at,
        message: 'A concurrency key refers to the inputs, e.g. <start.customerId>',
      },
    ];
  const other = refs.find((r) => r.root !== 'start' || r.path.length === 0);
  return other
    ? [
        {
          code: 'custom',
          path: at,
          message: `${other.text}: a concurrency key may only refer to inputs (<start.name>)`,
        },
      ]
    : [];
}

/**
 * The group of an execution with these inputs: the key's value as text ('' when there is no key or
 * it resolves to nothing: those executions share one "no key" group). Null: the workflow is unlimited.
 */
export function concurrencyGroup(
  concurrency: Concurrency | undefined,
  inputs: Record<string, unknown>,
): { limit: number; group: string } | null {
  if (!concurrency) return null;
  if (concurrency.key === undefined) return { limit: concurrency.limit, group: '' };
  const value = resolveString(concurrency.key, { roots: new Map([['start', inputs]]), secrets: new Map() });
  const group =
    value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  return { limit: concurrency.limit, group };
}
