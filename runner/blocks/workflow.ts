// Block `workflow`: runs another deployed workflow of the same workspace as a child and outputs the
// child's output. A depth limit stops runaway recursion (a workflow calling itself).
import { z } from 'zod';
import type { BlockType } from './block.ts';

const schema = z
  .object({
    workflowId: z.uuid(),
    inputs: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();

export const workflowBlock: BlockType<z.output<typeof schema>> = {
  type: 'workflow',
  schema,
  async run(config, ctx) {
    return { output: await ctx.runWorkflow(config.workflowId, config.inputs) };
  },
};
