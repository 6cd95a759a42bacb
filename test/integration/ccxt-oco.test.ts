// A native OCO at Binance through the ccxt adapter, BROKER_MODE=real over HTTP against the fake
// Binance on 127.0.0.1: the oco placed as Binance's own order list (orderList/oco: a LIMIT_MAKER
// above the price, a STOP_LOSS below it), both legs working at the exchange; the price reaching
// either leg fills it once and the exchange expires the other, which our records read as our oco's
// cancel of it (metadata.cancel_reason `oco_sibling`), following the order stream's events (the
// stop leg recorded as the limit leg's child `<id>:sl`); prices on the
// wrong side are the exchange's refusal (422 BROKER_REJECTED with its reason).
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OCO_SIBLING_ENDED } from '../../server/brokers/ccxt/mapping.ts';
import { outboxEvents } from '../../server/db/schema/index.ts';
import type { FakeBinance } from '../../server/fakes/binance.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { newFakeBinanceKey, realCryptoEnv, registerFakeBinanceKey, startSeededFakeBinance } from '../support/fake-binance-account.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { orderRowsOf } from '../support/order-rows.ts';
import { clientOrderIdRuleOf, toExchangeClientOrderId } from '../../server/brokers/ccxt/client-ids.ts';

const binanceKey = newFakeBinanceKey();
let binance: FakeBinance;
let server: TestServer;
let alice: FactoryUser;

beforeAll(async () => {
  binance = await startSeededFakeBinance(binanceKey);
  server = await startTestServer(realCryptoEnv(binance));
  alice = await newUser(server, { prefix: 'oco_alice' });
  await registerFakeBinanceKey(server, alice, binance, binanceKey);
});
afterAll(async () => {
  await server?.stop();
  await binance?.close();
});

const call = (method: string, path: string, body?: unknown) => server.http(method, path, { token: alice.tokens.access_token, ...(body === undefined ? {} : { body }) });
const rows = () => orderRowsOf(server, alice.user.id);
const orderRow = (clientOrderId: string) => rows().row(clientOrderId);
const untilRow = (clientOrderId: string, status: string) => rows().untilStatus(clientOrderId, status);
const fillsOf = async (clientOrderId: string) => (await rows().fills(clientOrderId)).map((fill) => [fill.qty, fill.price]);
/** The client id Binance is sent for ours (its digest form when ours is too long). */
const binanceIdOf = (ours: string) => toExchangeClientOrderId(ours, clientOrderIdRuleOf('binance'));
/** The fake's orders of the account with this client id (the exchange's own record). */
const atExchange = (clientOrderId: string) => binance.books.orders(binanceKey.apiKey).find((order) => order.clientOrderId === clientOrderId);
/** The order frames of an order's end, as written to the outbox. */
const canceledFramesOf = async (clientOrderId: string) =>
  (await server.services.db.select().from(outboxEvents).where(and(eq(outboxEvents.userId, alice.user.id), eq(outboxEvents.channel, 'orders'))).orderBy(outboxEvents.id))
    .map((row) => row.frame as { client_order_id?: string; event_type?: string; payload?: Record<string, unknown> })
    .filter((frame) => frame.client_order_id === clientOrderId && (frame.event_type === 'canceled' || frame.event_type === 'expired'));
const oco = (id: string, prices: { limit: number; stop: number; stopLimit?: number }) =>
  call('POST', '/api/equity/orders', {
    asset_class: 'crypto',
    symbol: 'BTC/USDT',
    side: 'sell',
    qty: 0.01,
    order_type: 'limit',
    limit_price: prices.limit,
    order_class: 'oco',
    bracket: { stop_loss: prices.stop, ...(prices.stopLimit === undefined ? {} : { stop_loss_limit: prices.stopLimit }) },
    time_in_force: 'gtc',
    client_order_id: id,
  });

describe('a native OCO at Binance through ccxt', () => {
  it('buys 0.02 BTC, then places an oco as the exchange’s order list: both legs working there, the answer its limit leg with order_class oco', async () => {
    const buy = await call('POST', '/api/equity/orders', { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.02, order_type: 'market', client_order_id: 'oco-buy-1' });
    expect(buy.status, buy.text).toBe(201);
    await untilRow('oco-buy-1', 'filled');

    const placed = await oco('oco-tp-1', { limit: 55000, stop: 48000 });
    expect(placed.status, placed.text).toBe(201);
    expect(placed.body).toMatchObject({ client_order_id: 'oco-tp-1', side: 'sell', order_type: 'limit', limit_price: 55000, metadata: { order_class: 'oco' } });
    expect(binance.requests.filter((request) => request.path === '/api/v3/orderList/oco')).toHaveLength(1);
    const limitLeg = atExchange('oco-tp-1');
    const stopLeg = atExchange('oco-tp-1:sl');
    expect(limitLeg).toMatchObject({ type: 'LIMIT_MAKER', side: 'SELL', price: '55000', origQty: '0.01', status: 'NEW' });
    expect(stopLeg).toMatchObject({ type: 'STOP_LOSS', side: 'SELL', stopPrice: '48000', origQty: '0.01', status: 'NEW', orderListId: limitLeg!.orderListId });
    expect(placed.body.broker_order_id).toBe(`BTCUSDT~${limitLeg!.orderId}`);
    const open = binance.books.openOrders(binanceKey.apiKey, 'BTCUSDT').map((order) => order.clientOrderId);
    expect(open.sort()).toEqual(['oco-tp-1', 'oco-tp-1:sl']);
    // The pair holds its 0.01 once: the other 0.01 held may still be sold, not a unit more.
    const beside = await call('POST', '/api/equity/orders', { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'sell', qty: 0.01, order_type: 'limit', limit_price: 70000, time_in_force: 'gtc', client_order_id: 'oco-beside-1' });
    expect(beside.status, beside.text).toBe(201);
    const over = await call('POST', '/api/equity/orders', { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'sell', qty: 0.01, order_type: 'limit', limit_price: 70000, time_in_force: 'gtc', client_order_id: 'oco-over-1' });
    expect(over.body).toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
    const canceled = await call('DELETE', `/api/equity/orders/${encodeURIComponent(String(beside.body.broker_order_id))}?asset_class=crypto`);
    expect(canceled.status, canceled.text).toBeLessThan(300);
    await untilRow('oco-beside-1', 'canceled');
  });

  it('the price rising through the take-profit fills the limit leg once; the exchange expires the stop leg, which our child row of it reads as canceled by its sibling', async () => {
    binance.setPrice('BTCUSDT', '55500');
    await untilRow('oco-tp-1', 'filled');
    expect(await fillsOf('oco-tp-1')).toEqual([['0.01', '55000']]);
    expect(atExchange('oco-tp-1:sl')?.status).toBe('EXPIRED');
    // Binance's EXPIRED is our oco's cancel of the other leg (as at every broker), with its reason.
    const stopRow = await untilRow('oco-tp-1:sl', 'canceled');
    expect(stopRow).toMatchObject({ side: 'sell', qty: '0.01', stopPrice: '48000' });
    expect(stopRow!.metadata).toMatchObject({ parent_client_order_id: 'oco-tp-1', cancel_reason: 'oco_sibling' });
    const listed = await call('GET', '/api/equity/orders?asset_class=crypto&size=100');
    expect(listed.body.items.find((item: { client_order_id: string }) => item.client_order_id === 'oco-tp-1:sl')).toMatchObject({ status: 'canceled', metadata: expect.objectContaining({ cancel_reason: 'oco_sibling' }) });
    const frames = await canceledFramesOf('oco-tp-1:sl');
    expect(frames).toHaveLength(1);
    expect(frames[0]!.payload).toMatchObject({ reason: OCO_SIBLING_ENDED });
    expect(await fillsOf('oco-tp-1:sl')).toEqual([]);
    expect(binance.books.openOrders(binanceKey.apiKey, 'BTCUSDT')).toEqual([]);
  });

  it('another oco (an id too long for Binance: both legs go as digest forms) where the price falls through the stop: the stop leg sells at the price, the limit leg expires, each recorded once under our ids', async () => {
    const longId = 'oco-stop-path-with-an-id-longer-than-binance-takes';
    binance.setPrice('BTCUSDT', '50000');
    const placed = await oco(longId, { limit: 56000, stop: 47000 });
    expect(placed.status, placed.text).toBe(201);
    expect(atExchange(binanceIdOf(`${longId}:sl`))).toMatchObject({ type: 'STOP_LOSS', status: 'NEW' });
    binance.setPrice('BTCUSDT', '46900');
    const stopRow = await untilRow(`${longId}:sl`, 'filled');
    expect(stopRow!.metadata).toMatchObject({ parent_client_order_id: longId });
    expect(await fillsOf(`${longId}:sl`)).toEqual([['0.01', '46900']]);
    const limitRow = await untilRow(longId, 'canceled');
    expect(limitRow!.metadata).toMatchObject({ cancel_reason: 'oco_sibling' });
    expect(atExchange(binanceIdOf(longId))?.status).toBe('EXPIRED');
    expect(await fillsOf(longId)).toEqual([]);
    // Both sells together took the whole bought bitcoin, no more.
    const btc = binance.books.balances(binanceKey.apiKey).find((balance) => balance.asset === 'BTC');
    expect(btc).toMatchObject({ free: '0', locked: '0' });
  });

  it('a stop_loss_limit makes the stop leg a STOP_LOSS_LIMIT at the exchange; canceling the oco cancels both legs there and here', async () => {
    const buy = await call('POST', '/api/equity/orders', { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.01, order_type: 'market', client_order_id: 'oco-buy-2' });
    await untilRow('oco-buy-2', 'filled');
    expect(buy.status).toBe(201);
    const placed = await oco('oco-cx-1', { limit: 52000, stop: 45000, stopLimit: 44900 });
    expect(placed.status, placed.text).toBe(201);
    expect(atExchange('oco-cx-1:sl')).toMatchObject({ type: 'STOP_LOSS_LIMIT', stopPrice: '45000', price: '44900', timeInForce: 'GTC' });
    const canceled = await call('DELETE', `/api/equity/orders/${encodeURIComponent(String(placed.body.broker_order_id))}?asset_class=crypto`);
    expect(canceled.status, canceled.text).toBeLessThan(300);
    await untilRow('oco-cx-1', 'canceled');
    await untilRow('oco-cx-1:sl', 'canceled');
    expect(atExchange('oco-cx-1:sl')?.status).toBe('CANCELED');
  });

  it('an oco whose prices are on the wrong side of the price is the exchange’s refusal: 422 BROKER_REJECTED with its reason, nothing working', async () => {
    binance.setPrice('BTCUSDT', '50000');
    const before = binance.books.orders(binanceKey.apiKey).length;
    const limitBelow = await oco('oco-bad-1', { limit: 49000, stop: 48000 });
    expect(limitBelow.status, limitBelow.text).toBe(422);
    expect(limitBelow.body).toMatchObject({ code: 'BROKER_REJECTED' });
    expect(limitBelow.body.message).toContain('The relationship of the prices for the orders is not correct.');
    const stopAbove = await oco('oco-bad-2', { limit: 60000, stop: 50500 });
    expect(stopAbove.status, stopAbove.text).toBe(422);
    expect(stopAbove.body.message).toContain('The relationship of the prices for the orders is not correct.');
    expect(binance.books.orders(binanceKey.apiKey)).toHaveLength(before);
    expect((await orderRow('oco-bad-1'))?.status).toBe('rejected');
  });
});
