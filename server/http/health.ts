// GET /health and GET /health/flags.
import type { TFeatureFlags, THealth } from '../../contracts/health.ts';
import type { Config } from '../config.ts';
import type { Services } from '../services.ts';

const PING_TIMEOUT_MS = 2000;

export const checkHealth = async (services: Services): Promise<THealth> => {
  const timeout = new Promise<boolean>((resolve) => setTimeout(resolve, PING_TIMEOUT_MS, false).unref());
  const dbOk = await Promise.race([services.database.ping(), timeout]);
  return {
    status: dbOk ? 'ok' : 'degraded',
    db: dbOk ? 'ok' : 'down',
    version: services.version,
    uptime_s: Math.round((services.clock.now().getTime() - services.startedAt.getTime()) / 1000),
    // A halt is an operator's decision, not a fault: it is reported here but keeps the 200.
    halted: services.halt.isHalted(),
  };
};

export const featureFlags = (config: Config): TFeatureFlags => ({
  FEATURE_EQUITY_PAPER: config.FEATURE_EQUITY_PAPER,
  FEATURE_EQUITY_LIVE: config.FEATURE_EQUITY_LIVE,
  FEATURE_LLM_ANALYSIS: config.FEATURE_LLM_ANALYSIS,
  FEATURE_EQUITY_ANALYSIS: config.FEATURE_EQUITY_ANALYSIS,
  FEATURE_USBROKER_BROKER: config.FEATURE_USBROKER_BROKER,
  FEATURE_KRBROKER_BROKER: config.FEATURE_KRBROKER_BROKER,
  ALLOW_LIVE: config.ALLOW_LIVE,
});
