// Starts the real service for the e2e run, as `npm start` does (node server/main.ts): PGlite in
// a temporary DATA_DIR, an ephemeral port, an admin from the environment, a BTC/USDT price set
// through the admin API, daily bars of AAPL and ETH/USDT for the charts and backtests, and an
// OpenAI-compatible fake LLM (test/support/fake-llm.ts) whose answers carry markup, so the
// analysis pages are tested against hostile model output. The tests find the service at
// E2E_BASE_URL; the returned function stops both. startSeededService starts another one seeded
// the same way, for a spec that must see nothing of the other specs (the screenshots).
import { startFakeLlm, type FakeLlmRequest } from '../support/fake-llm.ts';
import { E2E_ADMIN, startE2eService, type E2eService } from './service.ts';

export { E2E_ADMIN };

export const BTC_PRICE = 50_000;
/** Daily bars loaded for these, BAR_COUNT of them ending on BARS_END. */
export const BAR_SYMBOLS = [
  { asset_class: 'us_equity', symbol: 'AAPL' },
  { asset_class: 'crypto', symbol: 'ETH/USDT' },
] as const;
export const BAR_COUNT = 300;
export const BARS_START = '2025-01-01';
/** What the fake model writes into its reasoning: it must show as text and never run. */
export const LLM_MARKUP = '<script>window.__xss=1</script><img src=x onerror="window.__xss=2"> **bold claim**';

const call = async (baseUrl: string, method: string, urlPath: string, body: unknown, token?: string) => {
  const response = await fetch(`${baseUrl}${urlPath}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${urlPath}: ${response.status} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
};

/** A wavy series, so crossover strategies trade in it. */
const barsOf = (base: number) =>
  Array.from({ length: BAR_COUNT }, (_, index) => {
    const date = new Date(Date.parse(`${BARS_START}T00:00:00Z`) + index * 86_400_000).toISOString().slice(0, 10);
    const close = base * (1 + 0.1 * Math.sin(index / 12) + index * 0.0005);
    const open = close * (1 + 0.005 * Math.cos(index));
    return { date, open: open.toFixed(2), high: (Math.max(open, close) * 1.01).toFixed(2), low: (Math.min(open, close) * 0.99).toFixed(2), close: close.toFixed(2), volume: '1000000' };
  });

/** A valid answer for whichever agent asks (told apart by the fields its prompt names), with markup in its text. */
const llmAnswer = (request: FakeLlmRequest): string => {
  const body = request.body as { messages?: { content?: unknown }[] } | undefined;
  const first = body?.messages?.[0]?.content;
  const system = typeof first === 'string' ? first : '';
  if (system.includes('ideal_buy'))
    return JSON.stringify({ signal: 'buy', confidence: 0.6, score: 0.4, ideal_buy: 150, secondary_buy: 145, stop_loss: 140, take_profit: 170, currency: 'USD', reasoning: `Decision ${LLM_MARKUP}` });
  if (system.includes('veto_buy')) return JSON.stringify({ risk_level: 'low', veto_buy: false, flags: [LLM_MARKUP], volatility: 0.2, max_drawdown: -0.1, atr: 2, atr_stop: 146, reasoning: 'Calm.' });
  if (system.includes('stance')) return JSON.stringify({ stance: 'bull', argument: LLM_MARKUP, confidence: 0.5 });
  if (system.includes('sources')) return JSON.stringify({ signal: 'hold', confidence: 0, reasoning: 'No source configured.', sources: [] });
  return JSON.stringify({ signal: 'buy', confidence: 0.7, reasoning: `Technical ${LLM_MARKUP}`, indicators: { sma50: 150 }, trend: 'up', momentum: 'positive' });
};

/** A service with its own fake LLM, seeded as above (the admin, the BTC/USDT price, the daily bars); `stop` stops both. */
export const startSeededService = async (): Promise<E2eService> => {
  const llm = await startFakeLlm({ answer: (_nth, request) => ({ json: llmAnswer(request) }) });
  let service: E2eService | undefined;
  const stop = async () => {
    await service?.stop();
    await llm.close();
  };
  try {
    service = await startE2eService({
      // Analysis on the fake LLM's OpenAI wire format.
      LLM_PROVIDER: 'openai',
      LLM_BASE_URL: `${llm.url}/v1`,
      LLM_API_KEY: 'e2e-llm-key',
      LLM_MODEL: 'gpt-4o-mini',
      // One filled paper order is record enough for the promotion wizard's test.
      RISK_PAPER_MIN_DAYS: '0',
      RISK_PAPER_MIN_TRADES: '1',
    });
    const { baseUrl } = service;
    const admin = await call(baseUrl, 'POST', '/api/auth/login', E2E_ADMIN);
    await call(baseUrl, 'POST', '/api/admin/sim/prices', { asset_class: 'crypto', symbol: 'BTC/USDT', price: BTC_PRICE }, String(admin.access_token));
    for (const [index, { asset_class, symbol }] of BAR_SYMBOLS.entries()) {
      await call(baseUrl, 'POST', '/api/admin/market-data/ohlcv', { asset_class, symbol, bars: barsOf(index === 0 ? 150 : 3000) }, String(admin.access_token));
    }
    return { baseUrl, logFile: service.logFile, stop };
  } catch (error) {
    await stop();
    throw error;
  }
};

export default async function globalSetup(): Promise<() => Promise<void>> {
  const service = await startSeededService();
  // Playwright hands the environment of global setup to the test workers.
  process.env.E2E_BASE_URL = service.baseUrl;
  process.env.E2E_SERVICE_LOG = service.logFile;
  return () => service.stop();
}
