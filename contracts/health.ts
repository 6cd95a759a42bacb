// Wire shapes of /health and /health/flags. The OpenAPI document renders these same schemas, so
// what it says about the two routes follows the code.
import { z } from 'zod';

export const ZHealth = z.object({
  status: z.enum(['ok', 'degraded']).meta({ description: '`degraded`, with HTTP 503, when the database does not answer' }),
  db: z.enum(['ok', 'down']),
  version: z.string(),
  uptime_s: z.int().min(0).meta({ description: 'Whole seconds since the process started' }),
  halted: z.boolean().meta({ description: 'An operator has halted the service (POST /api/admin/halt); the process itself is still healthy' }),
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
