// Block `loop`: runs its body graph once per item, one iteration after the other; `<loop.item>` and
// `<loop.index>` name the current one. Output: `{results}`, each iteration's block outputs by id.
import { z } from 'zod';
import type { BlockType } from './block.ts';
import { ITEMS_MESSAGE, iterationFields, iterationItems, needsItems } from './iteration.ts';

const schema = z.object(iterationFields).strict().refine(needsItems, ITEMS_MESSAGE);

export const loopBlock: BlockType<z.output<typeof schema>> = {
  type: 'loop',
  schema,
  graphField: 'blocks',
  async run(config, ctx) {
    const results: Record<string, unknown>[] = [];
    const items = iterationItems(config);
    for (const [index, item] of items.entries()) {
      results.push(await ctx.runGraph({ blocks: config.blocks, edges: config.edges }, { item, index }));
    }
    return { output: { results } };
  },
};
