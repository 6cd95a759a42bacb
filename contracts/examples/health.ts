// Examples of the plain /health routes (no procedure: the schemas are the contracts' own).
import type { z } from 'zod';
import type { THealth, ZFeatureFlags, ZHealth } from '../health.ts';
import { example, type OperationExample } from './types.ts';

/** The 503 of GET /health: the database did not answer its ping (server/http/health.ts checkHealth). */
export const degradedHealthExample: THealth = { status: 'degraded', db: 'down', version: '0.1.0', uptime_s: 86412, halted: false };

export const HEALTH_EXAMPLES: Record<string, OperationExample> = {
  health: example<z.ZodVoid, typeof ZHealth>({ output: { status: 'ok', db: 'ok', version: '0.1.0', uptime_s: 86412, halted: false } }),
  healthFlags: example<z.ZodVoid, typeof ZFeatureFlags>({
    output: {
      FEATURE_EQUITY_PAPER: true,
      FEATURE_EQUITY_LIVE: false,
      FEATURE_LLM_ANALYSIS: true,
      FEATURE_EQUITY_ANALYSIS: true,
      FEATURE_USBROKER_BROKER: true,
      FEATURE_KRBROKER_BROKER: false,
      ALLOW_LIVE: false,
    },
  }),
};
