// Block `wait`: pauses this path of the workflow; other paths go on. Cancelled with the execution.
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { BlockType } from './block.ts';

const schema = z.object({ ms: z.number().int().min(0).max(300_000) }).strict();

export const waitBlock: BlockType<z.output<typeof schema>> = {
  type: 'wait',
  schema,
  async run(config, ctx) {
    await sleep(config.ms, undefined, { signal: ctx.signal });
    return { output: { waitedMs: config.ms } };
  },
};
