// What the order contract refuses before any gate runs: text the database cannot store in a
// symbol, and client order ids that end in the suffixes a bracket's children and an emulated
// order's child are named with.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMULATED_CHILD_SUFFIX } from '../../contracts/orders.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let user: FactoryUser;

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0' });
  user = await newUser(server, { prefix: 'ord_inputs' });
  const key = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { exchange: 'crypto_exchange', api_key: `order-inputs-${process.pid}`, api_secret: 's' } });
  expect(key.status, key.text).toBe(201);
  await server.services.simulator.setPrice({ assetClass: 'crypto', symbol: 'BTC/USDT', price: '50000' });
});
afterAll(() => server.stop());

const place = (body: Record<string, unknown>) => server.http('POST', '/api/equity/orders', { token: user.tokens.access_token, body });
const limitBuy = { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.001, order_type: 'limit', limit_price: 40000 };
const ordersOf = async () => (await server.http('GET', '/api/equity/orders?asset_class=crypto&size=100', { token: user.tokens.access_token })).body.items as { client_order_id: string; status: string }[];

describe('symbol', () => {
  it.each([
    ['a NUL', 'BTC\u0000/USDT'],
    ['a lone surrogate', '\ud800'],
    ['a lone surrogate after a pair', 'BTC/USDT\udc00'],
  ])('holding %s is 422 VALIDATION_ERROR naming symbol, and no order is made', async (_what, symbol) => {
    const before = (await ordersOf()).length;
    const res = await place({ ...limitBuy, symbol });
    expect(res.status, res.text).toBe(422);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', errors: [{ path: 'symbol', message: expect.stringContaining('NUL') }] });
    expect(await ordersOf()).toHaveLength(before);
  });
});

describe('client_order_id', () => {
  it.each(['entry:tp', 'entry:sl', ' entry:sl ', 'a.b-c_d:tp'])('%j ends in a bracket child suffix: 422 VALIDATION_ERROR naming client_order_id', async (clientOrderId) => {
    const res = await place({ ...limitBuy, client_order_id: clientOrderId });
    expect(res.status, res.text).toBe(422);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', errors: [{ path: 'client_order_id', message: expect.stringContaining(':tp') }] });
  });

  it.each(['entry.tr', ' entry.tr ', 'a.b-c_d.tr', `${'x'.repeat(61)}.tr`])('%j ends in an emulated order’s child suffix: 422 VALIDATION_ERROR naming client_order_id, and no order is made', async (clientOrderId) => {
    const before = (await ordersOf()).length;
    const res = await place({ ...limitBuy, client_order_id: clientOrderId });
    expect(res.status, res.text).toBe(422);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', errors: [{ path: 'client_order_id', message: expect.stringContaining(`must not end in ${EMULATED_CHILD_SUFFIX}`) }] });
    expect(await ordersOf()).toHaveLength(before);
  });

  it('ids that only contain the suffixes, or differ in case, are taken', async () => {
    for (const clientOrderId of ['entry:tp1', 'tp:entry', 'entry:sl:x', 'entry-tp', 'entry:TP', 'entry.tr.x', 'tr.entry', 'entry_tr', 'entry.TR']) {
      const res = await place({ ...limitBuy, client_order_id: clientOrderId });
      expect(res.status, `${clientOrderId}: ${res.text}`).toBe(201);
      expect(res.body.client_order_id).toBe(clientOrderId);
    }
  });

  it("the reserved suffixes are the ones a filled bracket's children carry, so no order of the caller can take a child's id", async () => {
    const res = await place({ asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.001, order_type: 'market', time_in_force: 'gtc', client_order_id: 'protected', bracket: { take_profit: 60000, stop_loss: 45000 } });
    expect(res.status, res.text).toBe(201);
    await server.services.simulator.idle();
    await server.services.orders.idle();
    const orders = await ordersOf();
    expect(orders.find((order) => order.client_order_id === 'protected')).toMatchObject({ status: 'filled' });
    expect(orders.filter((order) => order.client_order_id.startsWith('protected:')).map((order) => order.client_order_id).sort()).toEqual(['protected:sl', 'protected:tp']);
  });
});

describe('fields that do not belong to the order type', () => {
  it.each([
    ['a limit_price on a market order', { order_type: 'market', limit_price: 40000 }, 'limit_price'],
    ['a stop_price on a market order', { order_type: 'market', stop_price: 40000 }, 'stop_price'],
    ['a stop_price on a limit order', { order_type: 'limit', limit_price: 40000, stop_price: 39000 }, 'stop_price'],
    ['a limit_price on a stop order', { order_type: 'stop', stop_price: 60000, limit_price: 61000 }, 'limit_price'],
  ])('%s is 422 VALIDATION_ERROR naming the field, and no order is made', async (_what, fields, path) => {
    const before = (await ordersOf()).length;
    const res = await place({ ...limitBuy, limit_price: undefined, ...fields });
    expect(res.status, res.text).toBe(422);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', errors: [{ path, message: expect.stringContaining('not taken') }] });
    expect(await ordersOf()).toHaveLength(before);
  });

  it('a bracket on a sell is 422 VALIDATION_ERROR naming bracket, not a rejected order', async () => {
    const before = (await ordersOf()).length;
    const res = await place({ ...limitBuy, side: 'sell', limit_price: 60000, bracket: { take_profit: 40000, stop_loss: 65000 } });
    expect(res.status, res.text).toBe(422);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', errors: [{ path: 'bracket' }] });
    expect(await ordersOf()).toHaveLength(before);
  });

  it('a stop_limit takes both prices, and a sell may send bracket null', async () => {
    const stopLimit = await place({ ...limitBuy, order_type: 'stop_limit', stop_price: 60000, limit_price: 61000 });
    expect(stopLimit.status, stopLimit.text).toBe(201);
    const res = await place({ ...limitBuy, qty: 0.001, side: 'sell', order_type: 'limit', limit_price: 60000, bracket: null });
    expect(res.body.code, res.text).not.toBe('VALIDATION_ERROR');
  });

  it('a replace is judged against the order’s type: a limit on a market order or a stop on a limit is 422 naming it, and the order is unchanged', async () => {
    const resting = await place({ ...limitBuy, time_in_force: 'gtc' });
    expect(resting.status, resting.text).toBe(201);
    const path = `/api/equity/orders/${resting.body.broker_order_id}`;
    const res = await server.http('PATCH', path, { token: user.tokens.access_token, body: { asset_class: 'crypto', stop_price: 39000 } });
    expect(res.status, res.text).toBe(422);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', errors: [{ path: 'stop_price' }] });
    const got = await server.http('GET', `${path}?asset_class=crypto`, { token: user.tokens.access_token });
    expect(got.body).toMatchObject({ limit_price: 40000, stop_price: null });
  });
});

describe('the tick grid', () => {
  it("an off-grid crypto limit is 422 RISK_RULE_VIOLATION naming the nearest valid prices (BTC/USDT's tick 0.01), and no order is made", async () => {
    const before = (await ordersOf()).length;
    const res = await place({ ...limitBuy, limit_price: 40000.005 });
    expect(res.status, res.text).toBe(422);
    expect(res.body).toMatchObject({ code: 'RISK_RULE_VIOLATION', message: expect.stringContaining('nearest valid prices are 40000 or 40000.01') });
    expect(await ordersOf()).toHaveLength(before);
  });

  it("a bracket's off-grid stop_loss_limit is refused like its other legs, and no order is made", async () => {
    const before = (await ordersOf()).length;
    const bracket = { take_profit: 60000, stop_loss: 35000 };
    const res = await place({ ...limitBuy, bracket: { ...bracket, stop_loss_limit: 34999.995 } });
    expect(res.status, res.text).toBe(422);
    expect(res.body).toMatchObject({ code: 'RISK_RULE_VIOLATION', message: expect.stringContaining('stop-loss limit price 34999.995') });
    expect(res.body.message).toContain('nearest valid prices are 34999.99 or 35000');
    expect(await ordersOf()).toHaveLength(before);
    const onGrid = await place({ ...limitBuy, bracket: { ...bracket, stop_loss_limit: 34999.99 } });
    expect(onGrid.status, onGrid.text).toBe(201);
    expect(onGrid.body.bracket).toEqual({ ...bracket, stop_loss_limit: 34999.99 });
  });

  it('an off-grid price on a replace is refused the same way, and the order keeps its price', async () => {
    const resting = await place({ ...limitBuy, time_in_force: 'gtc' });
    expect(resting.status, resting.text).toBe(201);
    const path = `/api/equity/orders/${resting.body.broker_order_id}`;
    const res = await server.http('PATCH', path, { token: user.tokens.access_token, body: { asset_class: 'crypto', limit_price: 40100.123 } });
    expect(res.status, res.text).toBe(422);
    expect(res.body).toMatchObject({ code: 'RISK_RULE_VIOLATION', message: expect.stringContaining('40100.12 or 40100.13') });
    expect((await server.http('GET', `${path}?asset_class=crypto`, { token: user.tokens.access_token })).body).toMatchObject({ limit_price: 40000 });
    const onGrid = await server.http('PATCH', path, { token: user.tokens.access_token, body: { asset_class: 'crypto', limit_price: 40100.12 } });
    expect(onGrid.status, onGrid.text).toBe(200);
  });
});
