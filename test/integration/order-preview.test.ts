// POST /api/equity/orders/preview: what the ticket shows before sending. The estimate is priced by
// the fills' fee profiles (crypto 0.1 %, KRX commission cut to whole won and the 0.20 % sell tax),
// buying power is the account route's, and nothing is placed.
import { count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orders, simOrders } from '../../server/db/schema/index.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let keyCount = 0;

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0' });
  const admin = await newUser(server, { role: 'admin', prefix: 'pvw_admin' });
  for (const [assetClass, symbol, price] of [
    ['crypto', 'BTC/USDT', 50000],
    ['kr_equity', '005930', 70100],
  ] as const) {
    const res = await server.http('POST', '/api/admin/sim/prices', { token: admin.tokens.access_token, body: { asset_class: assetClass, symbol, price } });
    expect(res.status, res.text).toBe(200);
  }
});
afterAll(() => server.stop());

/** A user with a crypto and a KRX key. */
const trader = async (prefix: string) => {
  const user = await newUser(server, { prefix });
  for (const body of [{ exchange: 'crypto_exchange' }, { asset_class: 'kr_equity', exchange: 'kr_broker', account_no: '50012345-01', account_product_code: '01' }]) {
    const res = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { ...body, api_key: `preview-key-${process.pid}-${++keyCount}`, api_secret: 's' } });
    expect(res.status, res.text).toBe(201);
  }
  return user;
};
const preview = (user: FactoryUser, body: Record<string, unknown>) => server.http('POST', '/api/equity/orders/preview', { token: user.tokens.access_token, body });
const buyingPowerOf = async (user: FactoryUser, assetClass: string) =>
  ((await server.http('GET', `/api/equity/account?asset_class=${assetClass}`, { token: user.tokens.access_token })).body as { buying_power: number }).buying_power;
const orderCounts = async (user: FactoryUser) => ({
  orders: (await server.services.db.select({ n: count() }).from(orders).where(eq(orders.userId, user.user.id)))[0]!.n,
  books: (await server.services.db.select({ n: count() }).from(simOrders).where(eq(simOrders.userId, user.user.id)))[0]!.n,
});

describe('POST /api/equity/orders/preview', () => {
  it('a market buy costs qty × last price plus the crypto fee of 0.1 %, and takes it off the buying power the account answers', async () => {
    const user = await trader('pvw_market');
    const before = await buyingPowerOf(user, 'crypto');
    const res = await preview(user, { asset_class: 'crypto', symbol: 'BTC-USDT', side: 'buy', qty: 0.01, order_type: 'market' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      asset_class: 'crypto',
      symbol: 'BTC/USDT',
      side: 'buy',
      qty: 0.01,
      order_type: 'market',
      mode: 'paper',
      currency: 'USDT',
      last_price: 50000,
      reference_price: 50000,
      notional: 500,
      commission: 0.5,
      tax: 0,
      fee: 0.5,
      cash_effect: -500.5,
      buying_power_before: before,
      buying_power_after: before - 500.5,
      fee_profile: 'crypto_default',
    });
  });

  it('a limit buy is estimated at its limit price, not the last price', async () => {
    const user = await trader('pvw_limit');
    const res = await preview(user, { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.02, order_type: 'limit', limit_price: 49000.5 });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ last_price: 50000, reference_price: 49000.5, notional: 980.01, commission: 0.98001, fee: 0.98001, cash_effect: -980.99001 });
    expect(res.body.buying_power_after).toBeCloseTo(res.body.buying_power_before - 980.99001, 8);
  });

  it('tells the truth: a resting limit buy placed as previewed leaves the buying power the preview said', async () => {
    const user = await trader('pvw_truth');
    const body = { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.02, order_type: 'limit', limit_price: 40000, time_in_force: 'gtc' };
    const res = await preview(user, body);
    expect(res.status, res.text).toBe(200);
    const placed = await server.http('POST', '/api/equity/orders', { token: user.tokens.access_token, body });
    expect(placed.status, placed.text).toBe(201);
    await server.services.simulator.idle();
    await server.services.orders.idle();
    expect(await buyingPowerOf(user, 'crypto')).toBe(res.body.buying_power_after);
  });

  it('a stop is estimated at its stop, a stop-limit at its limit', async () => {
    const user = await trader('pvw_stop');
    const stop = await preview(user, { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.01, order_type: 'stop', stop_price: 51000 });
    expect(stop.status, stop.text).toBe(200);
    expect(stop.body).toMatchObject({ reference_price: 51000, notional: 510 });
    const stopLimit = await preview(user, { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.01, order_type: 'stop_limit', stop_price: 51000, limit_price: 51500 });
    expect(stopLimit.status, stopLimit.text).toBe(200);
    expect(stopLimit.body).toMatchObject({ reference_price: 51500, notional: 515 });
  });

  it('a KRX sell pays the commission and the 0.20 % tax, each cut to whole won, and adds its proceeds to the buying power', async () => {
    const user = await trader('pvw_krx');
    const before = await buyingPowerOf(user, 'kr_equity');
    const res = await preview(user, { asset_class: 'kr_equity', symbol: '005930', side: 'sell', qty: 10, order_type: 'market' });
    expect(res.status, res.text).toBe(200);
    // 10 × 70,100 = 701,000 KRW; commission 0.015 % = 105.15 → 105; tax 0.20 % = 1,402.
    expect(res.body).toEqual({
      asset_class: 'kr_equity',
      symbol: '005930',
      side: 'sell',
      qty: 10,
      order_type: 'market',
      mode: 'paper',
      currency: 'KRW',
      last_price: 70100,
      reference_price: 70100,
      notional: 701000,
      commission: 105,
      tax: 1402,
      fee: 1507,
      cash_effect: 699493,
      buying_power_before: before,
      buying_power_after: before + 699493,
      fee_profile: 'kr_broker_default',
    });
  });

  it('a live account is answered with the price and the fees, and no buying power (the broker’s own figure)', async () => {
    const user = await trader('pvw_live');
    const res = await preview(user, { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.01, order_type: 'market', live_mode: true });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ mode: 'live', currency: 'USDT', last_price: 50000, notional: 500, fee: 0.5, buying_power_before: null, buying_power_after: null });
  });

  it('refuses as the placement would: 422 VALIDATION_ERROR for bad input or lot, 422 BROKER_REJECTED for an unknown symbol, 403 without a key', async () => {
    const user = await trader('pvw_refused');
    const negative = await preview(user, { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: -1, order_type: 'market' });
    expect(negative.status, negative.text).toBe(422);
    expect(negative.body.code).toBe('VALIDATION_ERROR');
    const noLimit = await preview(user, { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.01, order_type: 'limit' });
    expect(noLimit.status, noLimit.text).toBe(422);
    expect(noLimit.body.code).toBe('VALIDATION_ERROR');
    const fraction = await preview(user, { asset_class: 'kr_equity', symbol: '005930', side: 'buy', qty: 1.5, order_type: 'market' });
    expect(fraction.status, fraction.text).toBe(422);
    expect(fraction.body.code).toBe('VALIDATION_ERROR');
    const unknown = await preview(user, { asset_class: 'crypto', symbol: 'NOPE/USDT', side: 'buy', qty: 1, order_type: 'market' });
    expect(unknown.status, unknown.text).toBe(422);
    expect(unknown.body.code).toBe('BROKER_REJECTED');
    const keyless = await newUser(server, { prefix: 'pvw_keyless' });
    const noKey = await preview(keyless, { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.01, order_type: 'market' });
    expect(noKey.status, noKey.text).toBe(403);
    expect(noKey.body.code).toBe('BROKER_NOT_CONFIGURED');
  });

  it('places nothing: no order, no intent, no books entry, and the buying power is unchanged', async () => {
    const user = await trader('pvw_nothing');
    const before = { counts: await orderCounts(user), buyingPower: await buyingPowerOf(user, 'crypto') };
    for (const body of [
      { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.01, order_type: 'market', client_order_id: 'preview-only-1' },
      { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.01, order_type: 'limit', limit_price: 49000, time_in_force: 'gtc' },
    ]) {
      const res = await preview(user, body);
      expect(res.status, res.text).toBe(200);
    }
    await server.services.simulator.idle();
    await server.services.orders.idle();
    expect(await orderCounts(user)).toEqual(before.counts);
    expect(await buyingPowerOf(user, 'crypto')).toBe(before.buyingPower);
    const listed = await server.http('GET', '/api/equity/orders?asset_class=crypto', { token: user.tokens.access_token });
    expect(listed.body.total).toBe(0);
  });
});
