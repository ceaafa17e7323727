// What model tokens cost, so an agent block's usage becomes dollars in the execution's cost.
// Rates are dollars per 1M tokens (OpenAI list prices); update them here when providers change them.

export interface ModelPrice {
  /** Dollars per 1M prompt (input) tokens. */
  input: number;
  /** Dollars per 1M completion (output) tokens. */
  output: number;
}

export const MODEL_PRICES: Readonly<Record<string, ModelPrice>> = {
  'gpt-4o': { input: 2.5, output: 10 },
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  'gpt-4.1': { input: 2, output: 8 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4 },
  'o3-mini': { input: 1.1, output: 4.4 },
};

/**
 * For models we do not know (self-hosted, other providers): priced like gpt-4o, so unknown usage is
 * over- rather than under-counted against a spending limit.
 */
export const DEFAULT_PRICE: ModelPrice = { input: 2.5, output: 10 };

/**
 * The price of a model name. Providers answer with dated snapshots ("gpt-4o-2024-08-06"), so the
 * longest known name the model starts with wins ("gpt-4o-mini-…" is gpt-4o-mini, not gpt-4o).
 */
export function priceFor(model: string): ModelPrice {
  // Routers name models with their provider ("openai/gpt-4o").
  const name = model.trim().toLowerCase().split('/').pop() ?? '';
  let best: string | undefined;
  for (const known of Object.keys(MODEL_PRICES)) {
    const matches = name === known || name.startsWith(`${known}-`);
    if (matches && (best === undefined || known.length > best.length)) best = known;
  }
  return (best && MODEL_PRICES[best]) || DEFAULT_PRICE;
}

/** Dollars for one call's tokens. */
export function priceOf(model: string, promptTokens: number, completionTokens: number): number {
  const { input, output } = priceFor(model);
  const dollars = (promptTokens * input + completionTokens * output) / 1_000_000;
  // Round away binary-fraction noise (0.30000000000000004) without losing sub-cent precision.
  return Math.round(dollars * 1e12) / 1e12;
}
