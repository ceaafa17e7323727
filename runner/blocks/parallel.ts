// Block `parallel`: runs its body graph for every item at once, at most `concurrency` at a time.
// Output: `{results}` in item order, whatever order they finished in.
import { z } from 'zod';
import type { BlockType } from './block.ts';
import { ITEMS_MESSAGE, iterationFields, iterationItems, needsItems } from './iteration.ts';

const schema = z
  .object({ ...iterationFields, concurrency: z.number().int().min(1).max(100).default(10) })
  .strict()
  .refine(needsItems, ITEMS_MESSAGE);

export const parallelBlock: BlockType<z.output<typeof schema>> = {
  type: 'parallel',
  schema,
  graphField: 'blocks',
  async run(config, ctx) {
    const items = iterationItems(config);
    const results: Record<string, unknown>[] = new Array(items.length);
    let next = 0;
    const lane = async () => {
      while (next < items.length && !ctx.signal.aborted) {
        const index = next++;
        results[index] = await ctx.runGraph(
          { blocks: config.blocks, edges: config.edges },
          { item: items[index], index },
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(config.concurrency, items.length) }, lane));
    return { output: { results } };
  },
};
