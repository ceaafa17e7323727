// What loop and parallel share: the items to iterate (an array, or a count) and the body graph.
import { z } from 'zod';

export const MAX_ITERATIONS = 10_000;

export const iterationFields = {
  /** An array, usually a reference such as `<fetch.data.items>`. */
  forEach: z.unknown().optional(),
  count: z.number().int().min(0).max(MAX_ITERATIONS).optional(),
  blocks: z.array(z.looseObject({ id: z.string(), type: z.string() })).min(1),
  edges: z
    .array(z.object({ from: z.string(), to: z.string(), branch: z.string().optional() }).strict())
    .default([]),
};

/** The items of an iteration: forEach's array (after references resolve), or 0…count-1. */
export function iterationItems(config: { forEach?: unknown; count?: number | undefined }): unknown[] {
  if (config.forEach !== undefined) {
    if (!Array.isArray(config.forEach)) throw new Error('forEach must resolve to an array');
    if (config.forEach.length > MAX_ITERATIONS) throw new Error(`forEach has over ${MAX_ITERATIONS} items`);
    return config.forEach;
  }
  return Array.from({ length: config.count ?? 0 }, (_, i) => i);
}

export const needsItems = (c: { forEach?: unknown; count?: number | undefined }) =>
  (c.forEach === undefined) !== (c.count === undefined);
export const ITEMS_MESSAGE = 'Give exactly one of forEach and count';
