// Advanced orders at Alpaca, held by Alpaca itself (DESIGN §6 "Advanced orders"), end to end over
// HTTP against the fake Alpaca on 127.0.0.1: a stop-limit keeps its limit (it was sent as a plain
// stop before), a trailing stop follows the price at the broker and fills on the way down, an oco's
// fill cancels its other half, an oto's exit works once its entry fills, and a trailing stop's new
// trail reaches the broker by a replace.
import { randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderFills, orders } from '../../server/db/schema/index.ts';
import { startFakeAlpaca, type FakeAlpaca } from '../../server/fakes/alpaca.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

const alpacaKey = { keyId: `PKADV${randomBytes(5).toString('hex').toUpperCase()}`, secretKey: `alpaca-secret-${randomBytes(12).toString('hex')}` };

let alpaca: FakeAlpaca;
let server: TestServer;
let alice: FactoryUser;

beforeAll(async () => {
  alpaca = await startFakeAlpaca({ accounts: [{ ...alpacaKey, cash: '100000' }], prices: { AAPL: '200' } });
  server = await startTestServer({
    BROKER_MODE: 'real',
    BROKER_BASE_URLS: `us_broker:paper=${alpaca.url}`,
    BROKER_US_DATA_URL: alpaca.url,
    RISK_MARKET_HOURS: 'ignore',
    SIM_TICK_INTERVAL_MS: '0',
    WORKERS_IN_PROCESS: 'false',
  });
  alice = await newUser(server, { prefix: 'adv_alice' });
  const created = await call('POST', '/api/exchange-keys', { asset_class: 'us_equity', exchange: 'us_broker', paper_mode: true, api_key: alpacaKey.keyId, api_secret: alpacaKey.secretKey, base_url: alpaca.url });
  expect(created.status, created.text).toBe(201);
  await waitFor(
    () => Promise.resolve(alpaca.listenerCount(alpacaKey.keyId)),
    (count) => count === 1,
  );
});
afterAll(async () => {
  await server?.stop();
  await alpaca?.close();
});

const call = (method: string, path: string, body?: unknown) => server.http(method, path, { token: alice.tokens.access_token, ...(body === undefined ? {} : { body }) });
const place = async (body: Record<string, unknown>) => {
  const res = await call('POST', '/api/equity/orders', { asset_class: 'us_equity', symbol: 'AAPL', time_in_force: 'gtc', ...body });
  expect(res.status, res.text).toBe(201);
  return res.body as { broker_order_id: string; [field: string]: unknown };
};
const atBroker = (clientOrderId: string) => alpaca.books.getByClientOrderId(alpacaKey.keyId, clientOrderId);
const untilStatus = (brokerOrderId: string, status: string) =>
  waitFor(
    () => call('GET', `/api/equity/orders/${encodeURIComponent(brokerOrderId)}?asset_class=us_equity`),
    (res) => res.body?.status === status,
  );
const fillsOf = async (clientOrderId: string) =>
  (await server.services.db.select().from(orderFills).where(and(eq(orderFills.userId, alice.user.id), eq(orderFills.clientOrderId, clientOrderId)))).map((fill) => [fill.qty, fill.price]);
const buyAtMarket = async (clientOrderId: string, qty: number) => {
  const bought = await place({ side: 'buy', qty, order_type: 'market', client_order_id: clientOrderId });
  await untilStatus(bought.broker_order_id, 'filled');
};

describe('advanced orders held by Alpaca', () => {
  it('sends a stop_limit as Alpaca’s stop_limit with its limit: triggered past its limit it rests, and it fills within it', async () => {
    alpaca.setPrice('AAPL', '200');
    const order = await place({ side: 'buy', qty: 1, order_type: 'stop_limit', stop_price: 210, limit_price: 212, client_order_id: 'adv-stop-limit-1' });
    expect(order).toMatchObject({ order_type: 'stop_limit', stop_price: 210, limit_price: 212 });
    expect(atBroker('adv-stop-limit-1')).toMatchObject({ type: 'stop_limit', stop_price: '210', limit_price: '212' });
    // Gapped past its limit: a stop would fill at 215, the stop-limit waits.
    alpaca.setPrice('AAPL', '215');
    expect(atBroker('adv-stop-limit-1').status).toBe('new');
    alpaca.setPrice('AAPL', '211');
    const filled = await untilStatus(order.broker_order_id, 'filled');
    expect(filled.body).toMatchObject({ order_type: 'stop_limit', filled_qty: 1, avg_fill_price: 211, limit_price: 212 });
    await server.services.orders.idle();
    expect(await fillsOf('adv-stop-limit-1')).toEqual([['1', '211']]);
  });

  it('places a trailing stop at Alpaca: its stop follows the price up there and it fills on the way down, once', async () => {
    alpaca.setPrice('AAPL', '200');
    await buyAtMarket('adv-trail-entry', 10);
    const order = await place({ side: 'sell', qty: 4, order_type: 'trailing_stop', trail_percent: 5, client_order_id: 'adv-trail-1' });
    // The broker set its stop from the price at acceptance, and the order says so.
    expect(order).toMatchObject({ order_type: 'trailing_stop', stop_price: 190 });
    expect(atBroker('adv-trail-1')).toMatchObject({ type: 'trailing_stop', trail_percent: '5', hwm: '200', stop_price: '190' });
    alpaca.setPrice('AAPL', '220');
    expect(atBroker('adv-trail-1')).toMatchObject({ hwm: '220', stop_price: '209', status: 'new' });
    // Above the moved stop (a plain stop at 190 would also wait here, but not at 208).
    alpaca.setPrice('AAPL', '212');
    expect(atBroker('adv-trail-1').status).toBe('new');
    alpaca.setPrice('AAPL', '208');
    const filled = await untilStatus(order.broker_order_id, 'filled');
    expect(filled.body).toMatchObject({ order_type: 'trailing_stop', filled_qty: 4, avg_fill_price: 208 });
    await server.services.orders.idle();
    expect(await fillsOf('adv-trail-1')).toEqual([['4', '208']]);
  });

  it('replaces a trailing stop’s trail at Alpaca: the successor trails by the new distance from the same mark, our order follows it and fills by it', async () => {
    alpaca.setPrice('AAPL', '200');
    const order = await place({ side: 'sell', qty: 1, order_type: 'trailing_stop', trail_price: 10, client_order_id: 'adv-trail-2' });
    const first = atBroker('adv-trail-2');
    expect(first).toMatchObject({ trail_price: '10', stop_price: '190' });
    const replaced = await call('PATCH', `/api/equity/orders/${encodeURIComponent(order.broker_order_id)}`, { asset_class: 'us_equity', trail_price: 4 });
    expect(replaced.status, replaced.text).toBe(200);
    // Alpaca made a new order; its client order id is ours, tagged, so its updates find our order.
    const successor = alpaca.books.getOrder(alpacaKey.keyId, atBroker('adv-trail-2').replaced_by!);
    expect(successor).toMatchObject({ type: 'trailing_stop', trail_price: '4', hwm: '200', stop_price: '196', client_order_id: expect.stringMatching(/^adv-trail-2~r/) });
    expect(replaced.body).toMatchObject({ client_order_id: 'adv-trail-2', broker_order_id: successor.id, status: 'open', stop_price: 196 });
    // The old order's `replaced` update ends it at Alpaca, not ours.
    await server.services.orders.idle();
    expect((await untilStatus(successor.id, 'open')).body).toMatchObject({ client_order_id: 'adv-trail-2' });
    alpaca.setPrice('AAPL', '195');
    const filled = await untilStatus(successor.id, 'filled');
    expect(filled.body).toMatchObject({ client_order_id: 'adv-trail-2', filled_qty: 1, avg_fill_price: 195 });
    await server.services.orders.idle();
    expect(await fillsOf('adv-trail-2')).toEqual([['1', '195']]);
  });

  it('places an oco at Alpaca in its own shape: both halves work at once, and the take-profit’s fill cancels the stop', async () => {
    alpaca.setPrice('AAPL', '200');
    const oco = await place({ side: 'sell', qty: 3, order_type: 'limit', limit_price: 230, order_class: 'oco', bracket: { stop_loss: 180 }, client_order_id: 'adv-oco-1' });
    const parent = atBroker('adv-oco-1');
    expect(parent).toMatchObject({ order_class: 'oco', type: 'limit', limit_price: '230', status: 'new' });
    expect(parent.legs).toEqual([expect.objectContaining({ type: 'stop', stop_price: '180', side: 'sell', status: 'new' })]);
    alpaca.setPrice('AAPL', '231');
    await untilStatus(oco.broker_order_id, 'filled');
    expect(atBroker('adv-oco-1').legs).toEqual([expect.objectContaining({ status: 'canceled' })]);
    // The stop that was canceled never sells: a fall through it changes nothing.
    alpaca.setPrice('AAPL', '170');
    await server.services.orders.idle();
    expect(await fillsOf('adv-oco-1')).toEqual([['3', '231']]);
    const positions = await call('GET', '/api/equity/positions?asset_class=us_equity');
    // 10 bought, 1 by the stop-limit, 4 and 1 sold by the trailing stops, 3 by the oco.
    expect(positions.body.items).toEqual([expect.objectContaining({ symbol: 'AAPL', qty: 3 })]);
  });

  it('places an oto at Alpaca: the entry fills and its one exit then works at the broker', async () => {
    alpaca.setPrice('AAPL', '200');
    const oto = await place({ side: 'buy', qty: 2, order_type: 'market', order_class: 'oto', bracket: { take_profit: 250 }, client_order_id: 'adv-oto-1' });
    await untilStatus(oto.broker_order_id, 'filled');
    const entry = atBroker('adv-oto-1');
    expect(entry).toMatchObject({ order_class: 'oto', status: 'filled' });
    expect(entry.legs).toEqual([expect.objectContaining({ type: 'limit', side: 'sell', limit_price: '250', status: 'new' })]);
    const row = (await server.services.db.select().from(orders).where(and(eq(orders.userId, alice.user.id), eq(orders.clientOrderId, 'adv-oto-1'))))[0];
    expect(row).toMatchObject({ status: 'filled', filledQty: '2' });
  });
});
