// What an LLM call costs: the configured prices per million tokens, found for the exact model id a
// provider answered with, and the parser of the prices setting.
import type { TModelPrices } from '../types.ts';

export interface TokenUsage {
  tokensInput: number;
  tokensOutput: number;
}

/**
 * The price of `model`: its own entry, else the longest configured prefix of it, because providers
 * answer with dated ids (`gpt-4o-mini-2024-07-18`) while a setting names the family (`gpt-4o-mini`).
 */
const priceOf = (prices: TModelPrices, model: string): TModelPrices[string] | undefined => {
  if (Object.hasOwn(prices, model)) return prices[model];
  let best: string | undefined;
  for (const configured of Object.keys(prices)) {
    if (configured.length > 0 && model.startsWith(configured) && (best === undefined || configured.length > best.length)) best = configured;
  }
  return best === undefined ? undefined : prices[best];
};

/** The cost in USD; a model without a price costs 0 (the report says the provider and model, so a gap shows). */
export const costOf = (prices: TModelPrices, model: string, usage: TokenUsage): number => {
  const price = priceOf(prices, model);
  if (!price) return 0;
  return (usage.tokensInput * price.input + usage.tokensOutput * price.output) / 1_000_000;
};

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const checkPrice = (model: string, side: 'input' | 'output', value: unknown): number => {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    const got = value === undefined ? 'nothing' : typeof value === 'number' ? String(value) : JSON.stringify(value);
    throw new Error(`LLM prices: "${model}".${side} must be a finite number of USD per million tokens, at least 0 (got ${got})`);
  }
  return value;
};

/**
 * Reads the prices setting, e.g. `{"gpt-4o-mini":{"input":0.15,"output":0.6}}`. A wrong setting
 * throws at start-up: a silently dropped price would make every call look free to the budgets.
 */
export const parseModelPrices = (text: string): TModelPrices => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`LLM prices: not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (!isPlainObject(parsed)) throw new Error('LLM prices: must be a JSON object of model id to {"input": …, "output": …}');
  const prices: TModelPrices = {};
  for (const [model, entry] of Object.entries(parsed)) {
    if (model.trim() === '') throw new Error('LLM prices: a model id must not be empty');
    if (!isPlainObject(entry)) throw new Error(`LLM prices: "${model}" must be an object {"input": …, "output": …}`);
    prices[model] = { input: checkPrice(model, 'input', entry.input), output: checkPrice(model, 'output', entry.output) };
  }
  return prices;
};
