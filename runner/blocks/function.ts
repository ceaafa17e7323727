// Block `function`: a JavaScript or TypeScript function body, run in the sandboxed worker pool.
// It sees `inputs` (the workflow inputs), `blocks` (outputs so far, by id) and `loop`, and may use
// references such as `<greet.message>`, which arrive as JSON literals.
import { z } from 'zod';
import type { BlockType } from './block.ts';
import { CodeFailure } from './failures.ts';

const schema = z
  .object({
    code: z.string().min(1).max(100_000),
    language: z.enum(['javascript', 'typescript']).default('javascript'),
    timeoutMs: z.number().int().min(1).max(300_000).optional(),
  })
  .strict();

export const functionBlock: BlockType<z.output<typeof schema>> = {
  type: 'function',
  schema,
  rawFields: ['code'],
  async run(config, ctx) {
    const outcome = await ctx.pool.run(
      {
        code: ctx.substituteCode(config.code),
        language: config.language,
        scope: ctx.scope,
        owner: ctx.workspaceId,
        source: config.code,
        timeoutMs: config.timeoutMs ?? ctx.settings.functionTimeoutMs,
      },
      ctx.signal,
    );
    for (const line of outcome.logs) ctx.log(line);
    // The code's own failure: retried when the block's `retry` says retryOn: ["error"].
    if (!outcome.ok) throw new CodeFailure(outcome.error);
    return { output: outcome.value };
  },
};
