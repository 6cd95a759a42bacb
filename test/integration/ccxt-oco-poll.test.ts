// A native OCO at Binance with the crypto events by polling (BROKER_CRYPTO_STREAM=poll), not the
// order stream: the stop leg's fill comes from the account's trades and the limit leg's end from
// its leaving the open orders, and both are recorded as with the stream (ccxt-oco.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeBinance } from '../../server/fakes/binance.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { newFakeBinanceKey, realCryptoEnv, registerFakeBinanceKey, startSeededFakeBinance } from '../support/fake-binance-account.ts';
import { orderRowsOf } from '../support/order-rows.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const binanceKey = newFakeBinanceKey();
let binance: FakeBinance;
let server: TestServer;
let bob: FactoryUser;

beforeAll(async () => {
  binance = await startSeededFakeBinance(binanceKey);
  server = await startTestServer({ ...realCryptoEnv(binance), BROKER_CRYPTO_STREAM: 'poll' });
  bob = await newUser(server, { prefix: 'ocopoll_bob' });
  await registerFakeBinanceKey(server, bob, binance, binanceKey, { stream: false });
});
afterAll(async () => {
  await server?.stop();
  await binance?.close();
});

const call = (method: string, path: string, body?: unknown) => server.http(method, path, { token: bob.tokens.access_token, ...(body === undefined ? {} : { body }) });

describe('a native OCO at Binance, events by polling', () => {
  it('the price falling through the stop: the stop leg is recorded filled as the limit leg’s child, the limit leg canceled by it (Binance expires it), each once', async () => {
    const rows = orderRowsOf(server, bob.user.id);
    const buy = await call('POST', '/api/equity/orders', { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.01, order_type: 'market', client_order_id: 'poll-buy-1' });
    expect(buy.status, buy.text).toBe(201);
    await rows.untilStatus('poll-buy-1', 'filled');
    const placed = await call('POST', '/api/equity/orders', {
      asset_class: 'crypto',
      symbol: 'BTC/USDT',
      side: 'sell',
      qty: 0.01,
      order_type: 'limit',
      limit_price: 55000,
      order_class: 'oco',
      bracket: { stop_loss: 47000 },
      time_in_force: 'gtc',
      client_order_id: 'poll-oco-1',
    });
    expect(placed.status, placed.text).toBe(201);
    expect(placed.body.metadata).toMatchObject({ order_class: 'oco' });
    binance.setPrice('BTCUSDT', '46500');
    const stopRow = await rows.untilStatus('poll-oco-1:sl', 'filled');
    expect(stopRow!.metadata).toMatchObject({ parent_client_order_id: 'poll-oco-1' });
    expect((await rows.fills('poll-oco-1:sl')).map((fill) => [fill.qty, fill.price])).toEqual([['0.01', '46500']]);
    // Binance expired it; our oco's other leg reads canceled, with the reason.
    const limitRow = await rows.untilStatus('poll-oco-1', 'canceled');
    expect(limitRow!.metadata).toMatchObject({ cancel_reason: 'oco_sibling' });
    expect(await rows.fills('poll-oco-1')).toEqual([]);
  });
});
