// Block `condition`: picks the first branch whose `if` expression is true (a branch without `if`
// is the else); the executor follows only the edges of the selected branch.
import { z } from 'zod';
import { evaluateDataExpression } from '../executor/expression.ts';
import type { BlockType } from './block.ts';

const schema = z
  .object({
    branches: z
      .array(
        z
          .object({
            id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and -'),
            if: z.string().min(1).max(10_000).optional(),
          })
          .strict(),
      )
      .min(1)
      .refine((bs) => new Set(bs.map((b) => b.id)).size === bs.length, 'branch ids must be unique'),
  })
  .strict();

export const conditionBlock: BlockType<z.output<typeof schema>> = {
  type: 'condition',
  schema,
  rawFields: ['branches'],
  async run(config, ctx) {
    for (const branch of config.branches) {
      if (branch.if === undefined) return { output: { selected: branch.id } };
      const expression = ctx.substituteCode(branch.if);
      // Plain comparisons over data need no sandbox; anything else (calls, …) goes to the pool.
      const fast = evaluateDataExpression(expression, ctx.scope);
      if (fast) {
        if (fast.value) return { output: { selected: branch.id } };
        continue;
      }
      const outcome = await ctx.pool.run(
        {
          code: asFunction(expression),
          language: 'javascript',
          scope: ctx.scope,
          owner: ctx.workspaceId,
          source: asFunction(branch.if),
          timeoutMs: ctx.settings.functionTimeoutMs,
        },
        ctx.signal,
      );
      if (!outcome.ok) throw new Error(`Branch "${branch.id}": ${outcome.error}`);
      if (outcome.value === true) return { output: { selected: branch.id } };
    }
    // No branch matched and there is no else: nothing downstream of this condition runs.
    return { output: { selected: null } };
  },
};

const asFunction = (expression: string) => `return !!(${expression});`;
