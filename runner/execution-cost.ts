// What an execution cost: the flat charge per execution plus the model tokens its agent blocks
// used, broken down by model the way the execution log shows it.
import type { ExecutionCost } from '../db/executions.ts';
import { COST_PER_EXECUTION } from '../db/usage.ts';
import { priceFor } from './blocks/model-prices.ts';
import type { ModelUsage } from './executor/execute.ts';

// Spend is kept to the nanodollar (numeric(20, 9)); rounding here keeps the log and the sum equal.
const nano = (dollars: number) => Math.round(dollars * 1e9) / 1e9;

export function executionCost(models: Record<string, ModelUsage>): ExecutionCost {
  const tokens = { prompt: 0, completion: 0, total: 0 };
  const byModel: ExecutionCost['models'] = {};
  let tokenCost = 0;
  for (const [name, usage] of Object.entries(models)) {
    const price = priceFor(name);
    const input = nano((usage.promptTokens * price.input) / 1_000_000);
    const output = nano((usage.completionTokens * price.output) / 1_000_000);
    const total = usage.promptTokens + usage.completionTokens;
    byModel[name] = {
      input,
      output,
      total: nano(input + output),
      tokens: { prompt: usage.promptTokens, completion: usage.completionTokens, total },
    };
    tokens.prompt += usage.promptTokens;
    tokens.completion += usage.completionTokens;
    tokens.total += total;
    tokenCost += input + output;
  }
  return { total: nano(COST_PER_EXECUTION + tokenCost), base: COST_PER_EXECUTION, tokens, models: byModel };
}
