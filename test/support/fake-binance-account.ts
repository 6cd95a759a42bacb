// A user's crypto account on the fake Binance in BROKER_MODE=real: a fresh key, the fake seeded
// with its account and prices, the server's settings that reach it, and the key registered with
// the account's order stream listening.
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { startFakeBinance, type FakeBinance } from '../../server/fakes/binance.ts';
import type { FactoryUser } from './factories.ts';
import type { TestServer } from './server.ts';
import { waitFor } from './wait.ts';

export interface FakeBinanceKey {
  apiKey: string;
  secret: string;
}

export const newFakeBinanceKey = (): FakeBinanceKey => ({ apiKey: `bn${randomBytes(8).toString('hex')}`, secret: `binance-secret-${randomBytes(16).toString('hex')}` });

/** The fake with the key's account (100000 USDT), BTCUSDT at 50000 and ETHUSDT at 3000. */
export const startSeededFakeBinance = (key: FakeBinanceKey): Promise<FakeBinance> =>
  startFakeBinance({ accounts: [{ ...key, balances: { USDT: '100000' } }], prices: { BTCUSDT: '50000', ETHUSDT: '3000' } });

/** Real mode with paper crypto keys on the fake (its origin allowed), fast polling, no market hours, no workers. */
export const realCryptoEnv = (binance: FakeBinance): Record<string, string> => ({
  BROKER_MODE: 'real',
  BROKER_BASE_URLS: `crypto_exchange:paper=${binance.url}`,
  BROKER_CRYPTO_POLL_INTERVAL_MS: '200',
  BROKER_STREAM_SILENCE_SEC: '5',
  RISK_MARKET_HOURS: 'ignore',
  SIM_TICK_INTERVAL_MS: '0',
  WORKERS_IN_PROCESS: 'false',
});

/** Registers the key as the user's paper crypto key and (unless `stream` is false: events by polling) waits until its order stream listens on the fake. */
export const registerFakeBinanceKey = async (server: TestServer, user: FactoryUser, binance: FakeBinance, key: FakeBinanceKey, { stream = true } = {}): Promise<void> => {
  const body = { asset_class: 'crypto', exchange: 'crypto_exchange', paper_mode: true, base_url: binance.url, api_key: key.apiKey, api_secret: key.secret };
  const created = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body });
  expect(created.status, created.text).toBe(201);
  if (stream) await waitFor(() => Promise.resolve(binance.userStreamSubscribers(key.apiKey)), (count) => count === 1);
};
