// Wire shapes of /health and /health/flags.
import { z } from 'zod';

export const ZHealth = z.object({
  status: z.enum(['ok', 'degraded']),
  db: z.enum(['ok', 'down']),
  version: z.string(),
  uptime_s: z.number(),
});
export type THealth = z.infer<typeof ZHealth>;

/** Every FEATURE_* setting and ALLOW_LIVE, keyed by setting name. */
export const ZFeatureFlags = z.object({
  FEATURE_EQUITY_PAPER: z.boolean(),
  FEATURE_EQUITY_LIVE: z.boolean(),
  FEATURE_LLM_ANALYSIS: z.boolean(),
  FEATURE_EQUITY_ANALYSIS: z.boolean(),
  FEATURE_USBROKER_BROKER: z.boolean(),
  FEATURE_KRBROKER_BROKER: z.boolean(),
  ALLOW_LIVE: z.boolean(),
});
export type TFeatureFlags = z.infer<typeof ZFeatureFlags>;
