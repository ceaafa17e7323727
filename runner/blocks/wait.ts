// Block `wait`: pauses this path of the workflow; other paths go on. Cancelled with the execution.
// Beyond PARK_AFTER_MS the execution parks instead of holding the runner (runner/executor/park.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { MAX_IN_PROCESS_WAIT_MS, MAX_WAIT_MS } from '../executor/park.ts';
import type { BlockType } from './block.ts';

const schema = z.object({ ms: z.number().int().min(0).max(MAX_WAIT_MS) }).strict();

export const waitBlock: BlockType<z.output<typeof schema>> = {
  type: 'wait',
  schema,
  async run(config, ctx) {
    const output = { waitedMs: config.ms };
    ctx.park?.(config.ms, output);
    if (config.ms > MAX_IN_PROCESS_WAIT_MS)
      throw new Error(
        `A wait longer than ${MAX_IN_PROCESS_WAIT_MS} ms is only possible in the workflow itself, not inside a loop, a parallel or a child workflow`,
      );
    await sleep(config.ms, undefined, { signal: ctx.signal });
    return { output };
  },
};
