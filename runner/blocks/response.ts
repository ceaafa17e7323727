// Block `response`: shapes the workflow's output. Its `data` (references resolved) is the output of
// the execution.
import { z } from 'zod';
import type { BlockType } from './block.ts';

const schema = z.object({ data: z.unknown() }).strict();

export const responseBlock: BlockType<z.output<typeof schema>> = {
  type: 'response',
  schema,
  async run(config) {
    return { output: config.data ?? null };
  },
};
