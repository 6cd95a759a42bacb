// The settings of a test server whose US broker is the fake Alpaca: real mode, its orders and both
// of its streams (trade updates, and the quotes the order emulator watches), market hours ignored,
// prices moved only by the test, and no in-process jobs (their minute's reconcile would settle
// what a test means its streams to settle).
import type { FakeAlpaca } from '../../server/fakes/alpaca.ts';

export const alpacaServerSettings = (alpaca: FakeAlpaca): Record<string, string> => ({
  BROKER_MODE: 'real',
  BROKER_BASE_URLS: `us_broker:paper=${alpaca.url}`,
  BROKER_US_DATA_URL: alpaca.url,
  BROKER_US_DATA_STREAM_URL: alpaca.dataStreamUrl,
  RISK_MARKET_HOURS: 'ignore',
  SIM_TICK_INTERVAL_MS: '0',
  WORKERS_IN_PROCESS: 'false',
});
