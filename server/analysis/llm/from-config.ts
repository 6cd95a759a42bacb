// The LLM client the settings ask for: none for the heuristic provider, else OpenAI's or
// Anthropic's wire format at LLM_BASE_URL (their own API by default) with LLM_MODEL.
import type { Clock } from '../../clock.ts';
import { ConfigError, type Config } from '../../config.ts';
import type { LlmClient } from '../types.ts';
import { createAnthropicClient } from './anthropic.ts';
import { createOpenAiClient } from './openai.ts';
import { parseModelPrices } from './pricing.ts';

/** Retries of a call wait from half a second, doubling, up to eight (jittered). */
const BACKOFF = { baseMs: 500, maxMs: 8_000 };

/** `clock`: the service's, which the calls' deadlines are measured on. */
export const llmClientFromConfig = (config: Config, clock: Clock): LlmClient | undefined => {
  if (config.LLM_PROVIDER === 'heuristic') return undefined;
  if (!config.LLM_API_KEY) throw new ConfigError('LLM_API_KEY', `is required with LLM_PROVIDER=${config.LLM_PROVIDER}`);
  let prices;
  try {
    prices = parseModelPrices(config.LLM_MODEL_PRICES);
  } catch (error) {
    throw new ConfigError('LLM_MODEL_PRICES', error instanceof Error ? error.message : String(error));
  }
  const common = { apiKey: config.LLM_API_KEY, prices, timeoutMs: config.LLM_TIMEOUT_MS, clock, maxRetries: config.LLM_MAX_RETRIES, backoff: BACKOFF };
  return config.LLM_PROVIDER === 'openai'
    ? createOpenAiClient({ ...common, baseUrl: config.LLM_BASE_URL || 'https://api.openai.com/v1', model: config.LLM_MODEL || 'gpt-4o-mini' })
    : createAnthropicClient({ ...common, baseUrl: config.LLM_BASE_URL || 'https://api.anthropic.com', model: config.LLM_MODEL || 'claude-3-5-haiku-latest' });
};
