// The order emulator's stops and stop-limits (DESIGN §6 "Advanced orders"), BROKER_MODE=real from
// outside (HTTP) against the fakes on 127.0.0.1: KIS holds no stops at all, and the fake
// Binance's markets list no STOP_LOSS types (what ccxt reads), so both are emulated. A stop fires
// a market child when a trade reaches it (a buy's at or above, a sell's at or below); a stop-limit
// fires a limit child at its limit price, which rests when the price is beyond it and fills only
// within it. A fired child passes the gates but the rate limit and the lock (it is an exit); a
// child the gates refuse cancels its parent with metadata.cancel_reason, told to the user.
import { randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KIS_PATHS } from '../../server/brokers/kis/wire.ts';
import { ExactDecimal } from '../../server/decimal.ts';
import { claimRate } from '../../server/controls/rate-queries.ts';
import { setLock } from '../../server/controls/queries.ts';
import { orderFills, orders, orderTriggers, outboxEvents } from '../../server/db/schema/index.ts';
import { startFakeBinance, type FakeBinance } from '../../server/fakes/binance.ts';
import { startFakeKis, type FakeKis } from '../../server/fakes/kis.ts';
import { nextClose } from '../../server/markets/calendar.ts';
import { noticeItemOf } from '../../server/notifications/events.ts';
import { MINUTE_SCOPE } from '../../server/orders/gates.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { kisKeyBody } from '../support/kis-keys.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

const SYMBOL = '005930';
const kisKey = { appKey: `PSTEST${randomBytes(6).toString('hex')}`, appSecret: `kis-secret-${randomBytes(24).toString('hex')}`, accountNo: '50000003', productCode: '01' };
const kisKey2 = { appKey: `PSTEST${randomBytes(6).toString('hex')}`, appSecret: `kis-secret-${randomBytes(24).toString('hex')}`, accountNo: '50000004', productCode: '01' };
const binanceKey = { apiKey: `bn${randomBytes(8).toString('hex')}`, secret: `binance-secret-${randomBytes(16).toString('hex')}` };

let kis: FakeKis;
let binance: FakeBinance;
let server: TestServer;
/** KIS, then the limits' exemption (its own user: the filled minute window is a user's). */
let alice: FactoryUser;
let carol: FactoryUser;
/** The fake Binance. */
let bob: FactoryUser;

beforeAll(async () => {
  kis = await startFakeKis({
    mode: 'paper',
    accounts: [
      { ...kisKey, cash: '100000000' },
      { ...kisKey2, cash: '100000000' },
    ],
    prices: { [SYMBOL]: '96500' },
  });
  binance = await startFakeBinance({ accounts: [{ ...binanceKey, balances: { USDT: '100000', BTC: '0.2' } }], prices: { BTCUSDT: '50000' } });
  server = await startTestServer({
    BROKER_MODE: 'real',
    BROKER_BASE_URLS: `kr_broker:paper=${kis.url},crypto_exchange:paper=${binance.url}`,
    BROKER_CRYPTO_POLL_INTERVAL_MS: '200',
    BROKER_KR_POLL_INTERVAL_MS: '200',
    BROKER_KR_REQUESTS_PER_SEC: '50',
    RISK_MARKET_HOURS: 'ignore',
    // Positions here are large against the accounts: sizing is not what these tests are about.
    RISK_MAX_RISK_PER_TRADE_PCT: '50',
    SIM_TICK_INTERVAL_MS: '0',
    WORKERS_IN_PROCESS: 'false',
  });
  [alice, bob, carol] = await Promise.all([newUser(server, { prefix: 'emus_alice' }), newUser(server, { prefix: 'emus_bob' }), newUser(server, { prefix: 'emus_carol' })]);
});
afterAll(async () => {
  await server?.stop();
  await Promise.all([kis?.close(), binance?.close()]);
});

const callAs = (user: FactoryUser) => (method: string, path: string, body?: unknown) => server.http(method, path, { token: user.tokens.access_token, ...(body === undefined ? {} : { body }) });
const kisOrderCalls = () => kis.requests.filter((request) => request.path === KIS_PATHS.orderCash).length;
const binanceOrderPosts = () => binance.requests.filter((request) => request.method === 'POST' && request.path === '/api/v3/order').length;
const orderRow = async (user: FactoryUser, clientOrderId: string) => (await server.services.db.select().from(orders).where(and(eq(orders.userId, user.user.id), eq(orders.clientOrderId, clientOrderId))))[0];
const triggerRow = async (user: FactoryUser, clientOrderId: string) =>
  (await server.services.db.select().from(orderTriggers).where(and(eq(orderTriggers.userId, user.user.id), eq(orderTriggers.clientOrderId, clientOrderId))))[0];
const fillsOf = async (user: FactoryUser, clientOrderId: string) =>
  (await server.services.db.select().from(orderFills).where(and(eq(orderFills.userId, user.user.id), eq(orderFills.clientOrderId, clientOrderId)))).map((fill) => [Number(fill.qty), Number(fill.price)]);
/** The order frames of an order, in the order they were written. */
const framesOf = async (user: FactoryUser, clientOrderId: string) =>
  (await server.services.db.select().from(outboxEvents).where(and(eq(outboxEvents.userId, user.user.id), eq(outboxEvents.channel, 'orders'))).orderBy(outboxEvents.id)).filter(
    (row) => row.frame.client_order_id === clientOrderId,
  );
const auditActionsOf = async (user: FactoryUser, clientOrderId: string): Promise<string[]> =>
  (await callAs(user)('GET', `/api/audit?client_order_id=${clientOrderId}`)).body.items.map((item: { action: string }) => item.action);
const filled = (user: FactoryUser, clientOrderId: string) =>
  waitFor(
    () => orderRow(user, clientOrderId),
    (row) => row?.status === 'filled',
  );
/** Until the trigger fired and its child is at the broker (linked to the parent). */
const childPlaced = (row: Awaited<ReturnType<typeof orderRow>>) => typeof row?.metadata.child_broker_order_id === 'string';
const isFilled = (row: Awaited<ReturnType<typeof orderRow>>) => row?.status === 'filled';
/**
 * Trades at a price again and again until the order shows what the test waits for: an account's
 * watch (re)subscribes to the quote stream when its set of triggers changes, and a trade before the
 * subscription is not seen, as on a real stream; a price that stays at a stop trades there again.
 */
const tradeUntil = (trade: () => void, user: FactoryUser, clientOrderId: string, accept: (row: Awaited<ReturnType<typeof orderRow>>) => boolean) =>
  waitFor(async () => {
    trade();
    return orderRow(user, clientOrderId);
  }, accept);

const addKisKey = async (user: FactoryUser, key: typeof kisKey) => {
  const created = await callAs(user)('POST', '/api/exchange-keys', kisKeyBody(key, kis.url));
  expect(created.status, created.text).toBe(201);
};
/** Until the account's trigger watch has the symbol on the fake KIS's quote stream. */
const untilKisWatched = () =>
  waitFor(
    () => Promise.resolve(kis.quotes.sessions()),
    (sessions) => sessions.some((symbols) => symbols.includes(SYMBOL)),
  );

describe('stops and stop-limits at KIS, emulated', () => {
  const call = (method: string, path: string, body?: unknown) => callAs(alice)(method, path, body);
  const kr = (body: Record<string, unknown>) => call('POST', '/api/equity/orders', { asset_class: 'kr_equity', symbol: SYMBOL, time_in_force: 'day', ...body });

  it('holds a position to sell', async () => {
    await addKisKey(alice, kisKey);
    const bought = await kr({ side: 'buy', qty: 10, order_type: 'market', client_order_id: 'emus-buy-1' });
    expect(bought.status, bought.text).toBe(201);
    await filled(alice, 'emus-buy-1');
  });

  it('accepts a sell stop as emulated with no broker call; a trade at its stop sells at market, the fill the order’s own', async () => {
    const calls = kisOrderCalls();
    const placed = await kr({ side: 'sell', qty: 2, order_type: 'stop', stop_price: 95000, client_order_id: 'emus-stop-1' });
    expect(placed.status, placed.text).toBe(201);
    expect(placed.body).toMatchObject({ order_type: 'stop', stop_price: 95000, metadata: { emulated: true } });
    expect(placed.body.broker_order_id).toMatch(/^emu-/);
    expect(placed.body.metadata.hwm).toBeUndefined();
    expect(kisOrderCalls()).toBe(calls);
    expect(await triggerRow(alice, 'emus-stop-1')).toMatchObject({ status: 'working', orderType: 'stop', stopPrice: '95000', hwm: null, limitPrice: null });
    const read = await call('GET', `/api/equity/orders/${placed.body.broker_order_id}?asset_class=kr_equity`);
    expect(read.body).toMatchObject({ status: 'open', stop_price: 95000 });

    await untilKisWatched();
    // Above the stop: nothing; a fixed stop does not follow the price up.
    kis.setPrice(SYMBOL, '98000');
    kis.setPrice(SYMBOL, '95100');
    // The child's broker id is recorded once the broker has answered its placement, in a
    // transaction of its own, which the child's fill may overtake: both are waited for.
    const row = await tradeUntil(() => kis.setPrice(SYMBOL, '95000'), alice, 'emus-stop-1', (seen) => isFilled(seen) && childPlaced(seen));
    expect(row).toMatchObject({ filledQty: '2', avgFillPrice: '95000', stopPrice: '95000', brokerOrderId: placed.body.broker_order_id });
    expect(row!.metadata).toMatchObject({ emulated: true, child_client_order_id: 'emus-stop-1.tr', child_broker_order_id: expect.any(String) });
    expect(kisOrderCalls()).toBe(calls + 1);
    await server.services.orders.idle();
    expect(await fillsOf(alice, 'emus-stop-1')).toEqual([[2, 95000]]);
    expect(await orderRow(alice, 'emus-stop-1.tr')).toBeUndefined();
    expect(await triggerRow(alice, 'emus-stop-1')).toMatchObject({ status: 'triggered', childClientOrderId: 'emus-stop-1.tr' });
    const frames = await framesOf(alice, 'emus-stop-1');
    const types = frames.map((frame) => frame.frame.event_type);
    expect(types.filter((type) => type === 'triggered')).toHaveLength(1);
    expect(types.indexOf('triggered')).toBeLessThan(types.indexOf('fill'));
    expect(frames.find((frame) => frame.frame.event_type === 'triggered')!.frame.payload).toMatchObject({ price: '95000', stop_price: '95000', child_client_order_id: 'emus-stop-1.tr' });
    expect(await auditActionsOf(alice, 'emus-stop-1')).toEqual(expect.arrayContaining(['order.placed', 'order.triggered', 'order.fill']));
  });

  it('refuses a stop that would trigger at once, as a broker does, with no broker call', async () => {
    const calls = kisOrderCalls();
    // The price is 95000: a sell stop at or above it, a buy stop at or below it.
    for (const [side, stop] of [
      ['sell', 95000],
      ['buy', 94000],
    ] as const) {
      const refused = await kr({ side, qty: 1, order_type: 'stop', stop_price: stop });
      expect([refused.status, refused.body.code], refused.text).toEqual([422, 'BROKER_REJECTED']);
      expect(refused.body.message).toContain('would trigger immediately');
    }
    expect(kisOrderCalls()).toBe(calls);
  });

  it('holds the units of a working emulated sell: a sell beyond what it leaves is refused until it is canceled', async () => {
    // The account holds 8 shares; the stop sells them all.
    const placed = await kr({ side: 'sell', qty: 8, order_type: 'stop', stop_price: 90000, client_order_id: 'emus-hold-1' });
    expect(placed.status, placed.text).toBe(201);
    const refused = await kr({ side: 'sell', qty: 1, order_type: 'market' });
    expect([refused.status, refused.body.code], refused.text).toEqual([422, 'INSUFFICIENT_FUNDS']);
    expect((await call('DELETE', `/api/equity/orders/${placed.body.broker_order_id}?asset_class=kr_equity`)).status).toBe(204);
    const sold = await kr({ side: 'sell', qty: 1, order_type: 'market', client_order_id: 'emus-hold-sell' });
    expect(sold.status, sold.text).toBe(201);
    await filled(alice, 'emus-hold-sell');
    // And back: the tests below count on the shares.
    const bought = await kr({ side: 'buy', qty: 1, order_type: 'market', client_order_id: 'emus-hold-buy' });
    expect(bought.status, bought.text).toBe(201);
    await filled(alice, 'emus-hold-buy');
  });

  it('fires a buy stop-limit when the price rises to its stop; its limit child rests while the price is beyond the limit and fills within it', async () => {
    const placed = await kr({ side: 'buy', qty: 1, order_type: 'stop_limit', stop_price: 97000, limit_price: 97500, client_order_id: 'emus-sl-1' });
    expect(placed.status, placed.text).toBe(201);
    expect(placed.body).toMatchObject({ order_type: 'stop_limit', stop_price: 97000, limit_price: 97500, metadata: { emulated: true, stop_limit_price: 97500 } });
    expect(await triggerRow(alice, 'emus-sl-1')).toMatchObject({ orderType: 'stop_limit', stopPrice: '97000', limitPrice: '97500' });
    const calls = kisOrderCalls();
    // A buy stop below the price would have fired; under it nothing does.
    kis.setPrice(SYMBOL, '96900');
    // The price gaps past the stop and the limit: the child, a limit buy at 97500, rests.
    const triggered = await tradeUntil(() => kis.setPrice(SYMBOL, '98000'), alice, 'emus-sl-1', childPlaced);
    expect(kisOrderCalls()).toBe(calls + 1);
    expect(triggered).toMatchObject({ status: 'open', filledQty: '0', limitPrice: '97500' });
    const read = await call('GET', `/api/equity/orders/${placed.body.broker_order_id}?asset_class=kr_equity`);
    expect(read.body).toMatchObject({ status: 'open', order_type: 'stop_limit', filled_qty: 0 });
    // Back within the limit: it fills at its own price, never beyond it.
    kis.setPrice(SYMBOL, '97400');
    const row = await filled(alice, 'emus-sl-1');
    expect(row).toMatchObject({ filledQty: '1', avgFillPrice: '97500' });
    expect(kisOrderCalls()).toBe(calls + 1);
  });
});

describe('the replace of an emulated order at KIS, before its trigger', () => {
  const call = (method: string, path: string, body?: unknown) => callAs(alice)(method, path, body);
  const patch = (id: string, body: Record<string, unknown>) => call('PATCH', `/api/equity/orders/${id}`, { asset_class: 'kr_equity', broker_order_id: id, ...body });

  it('validates it as any replace (tick, lot, would trigger at once) leaving the order as it was, then arms the trigger again with the new stop and quantity in one step', async () => {
    // The price is 97400 after the stop-limit above; the account holds 9 shares.
    const placed = await call('POST', '/api/equity/orders', { asset_class: 'kr_equity', symbol: SYMBOL, side: 'sell', qty: 2, order_type: 'stop', stop_price: 95000, time_in_force: 'day', client_order_id: 'emus-rep-1' });
    expect(placed.status, placed.text).toBe(201);
    const id: string = placed.body.broker_order_id;
    const armed = await triggerRow(alice, 'emus-rep-1');
    const calls = kisOrderCalls();

    const offGrid = await patch(id, { stop_price: 94950 });
    expect([offGrid.status, offGrid.body.code], offGrid.text).toEqual([422, 'RISK_RULE_VIOLATION']);
    const offLot = await patch(id, { qty: 1.5 });
    expect([offLot.status, offLot.body.code], offLot.text).toEqual([422, 'VALIDATION_ERROR']);
    const atOnce = await patch(id, { stop_price: 97500 });
    expect([atOnce.status, atOnce.body.code], atOnce.text).toEqual([422, 'BROKER_REJECTED']);
    expect(atOnce.body.message).toContain('would trigger immediately');
    expect(await triggerRow(alice, 'emus-rep-1')).toEqual(armed);
    expect(await orderRow(alice, 'emus-rep-1')).toMatchObject({ qty: '2', stopPrice: '95000' });

    const replaced = await patch(id, { stop_price: 94000, qty: 3 });
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body).toMatchObject({ broker_order_id: id, qty: 3, stop_price: 94000, status: 'open', metadata: expect.objectContaining({ emulated: true }) });
    const rearmed = await triggerRow(alice, 'emus-rep-1');
    expect(rearmed).toMatchObject({ status: 'working', qty: '3', stopPrice: '94000' });
    expect(rearmed!.armedAt.getTime()).toBeGreaterThanOrEqual(armed!.armedAt.getTime());
    expect(rearmed!.armedAt).not.toEqual(armed!.armedAt);
    const frames = await framesOf(alice, 'emus-rep-1');
    expect(frames.map((frame) => frame.frame.event_type).at(-1)).toBe('replaced');
    expect(frames.at(-1)!.frame.payload).toMatchObject({ emulated: true, qty: '3', stop_price: '94000' });
    expect(await auditActionsOf(alice, 'emus-rep-1')).toEqual(expect.arrayContaining(['order.replace_refused', 'order.replace_requested', 'order.replaced']));
    expect(kisOrderCalls()).toBe(calls);

    // The old stop is no longer armed: a trade there sells nothing; the new one sells the new quantity.
    await untilKisWatched();
    kis.setPrice(SYMBOL, '95000');
    const row = await tradeUntil(() => kis.setPrice(SYMBOL, '94000'), alice, 'emus-rep-1', isFilled);
    expect(row).toMatchObject({ filledQty: '3', avgFillPrice: '94000' });
    expect(kisOrderCalls()).toBe(calls + 1);
  });
});

describe('an OCO at KIS, emulated: a take-profit and a stop leg, two triggers', () => {
  const call = (method: string, path: string, body?: unknown) => callAs(alice)(method, path, body);
  const oco = (clientOrderId: string) =>
    call('POST', '/api/equity/orders', { asset_class: 'kr_equity', symbol: SYMBOL, side: 'sell', qty: 2, order_type: 'limit', limit_price: 96000, order_class: 'oco', bracket: { stop_loss: 92000 }, time_in_force: 'day', client_order_id: clientOrderId });

  it('holds both legs with no broker call; a replace changes a leg’s price, not its quantity; a cancel of either leg ends both', async () => {
    // The price is 94000; the account holds 6 shares.
    const calls = kisOrderCalls();
    const placed = await oco('emus-oco-1');
    expect(placed.status, placed.text).toBe(201);
    expect(placed.body).toMatchObject({ order_type: 'limit', limit_price: 96000, stop_price: null, metadata: { emulated: true, order_class: 'oco' } });
    const leg = await orderRow(alice, 'emus-oco-1:sl');
    expect(leg).toMatchObject({ status: 'open', orderType: 'stop', stopPrice: '92000', qty: '2', metadata: expect.objectContaining({ emulated: true, parent_client_order_id: 'emus-oco-1' }) });
    expect(await triggerRow(alice, 'emus-oco-1')).toMatchObject({ status: 'working', orderType: 'limit', stopPrice: '96000', limitPrice: '96000', siblingClientOrderId: 'emus-oco-1:sl' });
    expect(await triggerRow(alice, 'emus-oco-1:sl')).toMatchObject({ status: 'working', orderType: 'stop', stopPrice: '92000', siblingClientOrderId: 'emus-oco-1' });
    // The take-profit's limit and the stop leg's stop move, each armed anew, the other leg as it was (as paper's legs do).
    const replaced = await call('PATCH', `/api/equity/orders/${placed.body.broker_order_id}`, { asset_class: 'kr_equity', broker_order_id: placed.body.broker_order_id, limit_price: 97000 });
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body, replaced.text).toMatchObject({ limit_price: 97000, qty: 2, status: 'open' });
    expect(await triggerRow(alice, 'emus-oco-1')).toMatchObject({ status: 'working', limitPrice: '97000', siblingClientOrderId: 'emus-oco-1:sl' });
    const stopMoved = await call('PATCH', `/api/equity/orders/${leg!.brokerOrderId}`, { asset_class: 'kr_equity', broker_order_id: leg!.brokerOrderId, stop_price: 91000 });
    expect(stopMoved.status, stopMoved.text).toBe(200);
    expect(await triggerRow(alice, 'emus-oco-1:sl')).toMatchObject({ status: 'working', stopPrice: '91000', qty: '2' });
    expect(await triggerRow(alice, 'emus-oco-1')).toMatchObject({ status: 'working', limitPrice: '97000' });
    // A leg's quantity is the pair's.
    const resized = await call('PATCH', `/api/equity/orders/${leg!.brokerOrderId}`, { asset_class: 'kr_equity', broker_order_id: leg!.brokerOrderId, qty: 1 });
    expect([resized.status, resized.body.code], resized.text).toEqual([422, 'BROKER_REJECTED']);
    expect(await triggerRow(alice, 'emus-oco-1:sl')).toMatchObject({ qty: '2' });
    const canceled = await call('DELETE', `/api/equity/orders/${leg!.brokerOrderId}?asset_class=kr_equity`);
    expect(canceled.status, canceled.text).toBe(204);
    expect(await orderRow(alice, 'emus-oco-1')).toMatchObject({ status: 'canceled' });
    expect(await orderRow(alice, 'emus-oco-1:sl')).toMatchObject({ status: 'canceled' });
    expect(await triggerRow(alice, 'emus-oco-1')).toMatchObject({ status: 'canceled' });
    expect(kisOrderCalls()).toBe(calls);
  });

  it('fires its take-profit when the price reaches the limit: a limit sell there, and the stop leg canceled in the transaction of its fill', async () => {
    const placed = await oco('emus-oco-2');
    expect(placed.status, placed.text).toBe(201);
    const calls = kisOrderCalls();
    const row = await tradeUntil(() => kis.setPrice(SYMBOL, '96000'), alice, 'emus-oco-2', isFilled);
    expect(row).toMatchObject({ filledQty: '2', avgFillPrice: '96000', metadata: expect.objectContaining({ child_client_order_id: 'emus-oco-2.tr' }) });
    expect(kisOrderCalls()).toBe(calls + 1);
    expect(await orderRow(alice, 'emus-oco-2:sl')).toMatchObject({ status: 'canceled', metadata: expect.objectContaining({ cancel_reason: 'oco_sibling' }) });
    expect(await triggerRow(alice, 'emus-oco-2:sl')).toMatchObject({ status: 'canceled' });
    const triggered = (await framesOf(alice, 'emus-oco-2')).find((frame) => frame.frame.event_type === 'triggered')!;
    const fill = (await framesOf(alice, 'emus-oco-2')).find((frame) => frame.frame.event_type === 'fill')!;
    const legCanceled = (await framesOf(alice, 'emus-oco-2:sl')).find((frame) => frame.frame.event_type === 'canceled')!;
    expect(triggered.frame.payload).toMatchObject({ price: '96000', limit_price: '96000' });
    expect(triggered.frame.payload).not.toHaveProperty('stop_price');
    // As a broker ends an OCO's other leg: at the fill, in its transaction.
    expect(legCanceled.txId).toBe(fill.txId);
    expect(legCanceled.frame.payload).toMatchObject({ cancel_reason: 'oco_sibling', sibling_client_order_id: 'emus-oco-2' });
    // Down through the canceled stop leg: nothing more is sold.
    kis.setPrice(SYMBOL, '91000');
    await server.services.orders.idle();
    expect(await orderRow(alice, 'emus-oco-2:sl')).toMatchObject({ status: 'canceled', filledQty: '0' });
  });

  it('keeps its stop leg while the take-profit’s limit rests unfilled; the stop then cancels that limit at KIS and sells the whole quantity, once', async () => {
    // The account holds 4 shares after the OCO above.
    kis.setPrice(SYMBOL, '94000');
    const placed = await oco('emus-oco-3');
    expect(placed.status, placed.text).toBe(201);
    const calls = kisOrderCalls();
    // A trade at the take-profit on the stream while KIS's book stays at 94000: its limit sell rests there.
    const tp = await tradeUntil(() => kis.quotes.publish([{ symbol: SYMBOL, price: '96000' }]), alice, 'emus-oco-3', childPlaced);
    expect(tp).toMatchObject({ status: 'open', filledQty: '0' });
    expect(kisOrderCalls()).toBe(calls + 1);
    // The stop leg still works: a broker ends an OCO's other leg at a fill, not before.
    expect(await orderRow(alice, 'emus-oco-3:sl')).toMatchObject({ status: 'open' });
    expect(await triggerRow(alice, 'emus-oco-3:sl')).toMatchObject({ status: 'working' });
    // Down through the stop: the resting limit is canceled at KIS, then the stop leg sells at market.
    const sold = await tradeUntil(() => kis.setPrice(SYMBOL, '91500'), alice, 'emus-oco-3:sl', isFilled);
    expect(sold).toMatchObject({ filledQty: '2', avgFillPrice: '91500' });
    const ended = await waitFor(
      () => orderRow(alice, 'emus-oco-3'),
      (row) => row?.status === 'canceled',
    );
    expect(ended).toMatchObject({ filledQty: '0' });
    expect(kisOrderCalls()).toBe(calls + 2);
    await server.services.orders.idle();
    const positions = await call('GET', '/api/equity/positions?asset_class=kr_equity');
    expect(positions.body.items).toEqual([expect.objectContaining({ symbol: SYMBOL, qty: 2 })]);
  });
});

describe('an emulated day order at KIS', () => {
  const call = (method: string, path: string, body?: unknown) => callAs(alice)(method, path, body);

  it('ends at its session’s close (the calendar’s, as the simulator’s): the day-order job expires it, an OCO’s two legs together', async () => {
    // The price is 91000; the account holds 4 shares.
    const placed = await call('POST', '/api/equity/orders', { asset_class: 'kr_equity', symbol: SYMBOL, side: 'sell', qty: 2, order_type: 'limit', limit_price: 96000, order_class: 'oco', bracket: { stop_loss: 89000 }, time_in_force: 'day', client_order_id: 'emus-day-1' });
    expect(placed.status, placed.text).toBe(201);
    const armed = await triggerRow(alice, 'emus-day-1');
    const row = await orderRow(alice, 'emus-day-1');
    expect(armed!.expiresAt).toEqual(nextClose({ assetClass: 'kr_equity', at: row!.submittedAt }));
    expect((await triggerRow(alice, 'emus-day-1:sl'))!.expiresAt).toEqual(armed!.expiresAt);
    // Nothing is due before the close.
    expect(await server.services.orders.expireEmulated()).toBe(0);
    // The close has passed (the clock of a test server is the machine's: the row is moved instead).
    await server.services.db.update(orderTriggers).set({ expiresAt: new Date(Date.now() - 1000) }).where(and(eq(orderTriggers.userId, alice.user.id), eq(orderTriggers.clientOrderId, 'emus-day-1')));
    expect(await server.services.orders.expireEmulated()).toBe(2);
    expect(await orderRow(alice, 'emus-day-1')).toMatchObject({ status: 'expired', metadata: expect.objectContaining({ cancel_reason: 'expired' }) });
    expect(await orderRow(alice, 'emus-day-1:sl')).toMatchObject({ status: 'expired' });
    expect(await triggerRow(alice, 'emus-day-1:sl')).toMatchObject({ status: 'canceled' });
    expect((await framesOf(alice, 'emus-day-1')).at(-1)!.frame).toMatchObject({ event_type: 'canceled', status: 'expired' });
    expect(await auditActionsOf(alice, 'emus-day-1')).toEqual(expect.arrayContaining(['order.expired']));
    expect(await server.services.orders.expireEmulated()).toBe(0);
  });
});

describe('a bracket at KIS (which holds none): the entry at KIS, its exits emulated', () => {
  const call = (method: string, path: string, body?: unknown) => callAs(alice)(method, path, body);

  it('arms the take-profit and the stop leg with the entry’s fill, for its quantity; the take-profit fires and sells, the stop leg canceled with it', async () => {
    // The price is 91000.
    const calls = kisOrderCalls();
    const placed = await call('POST', '/api/equity/orders', {
      asset_class: 'kr_equity',
      symbol: SYMBOL,
      side: 'buy',
      qty: 2,
      order_type: 'market',
      time_in_force: 'day',
      bracket: { take_profit: 93000, stop_loss: 89000 },
      client_order_id: 'emus-br-1',
    });
    expect(placed.status, placed.text).toBe(201);
    // The entry goes to KIS alone: its broker id is KIS's.
    expect(placed.body.broker_order_id).not.toMatch(/^emu-/);
    expect(placed.body.metadata).toMatchObject({ emulated_exits: true });
    await filled(alice, 'emus-br-1');
    const tp = await waitFor(
      () => orderRow(alice, 'emus-br-1:tp'),
      (row) => row !== undefined,
    );
    expect(tp).toMatchObject({ status: 'open', side: 'sell', orderType: 'limit', limitPrice: '93000', qty: '2', metadata: expect.objectContaining({ emulated: true, parent_client_order_id: 'emus-br-1' }) });
    expect(await orderRow(alice, 'emus-br-1:sl')).toMatchObject({ status: 'open', orderType: 'stop', stopPrice: '89000', qty: '2' });
    expect(await triggerRow(alice, 'emus-br-1:tp')).toMatchObject({ status: 'working', orderType: 'limit', siblingClientOrderId: 'emus-br-1:sl' });
    expect(await triggerRow(alice, 'emus-br-1:sl')).toMatchObject({ status: 'working', orderType: 'stop', siblingClientOrderId: 'emus-br-1:tp' });
    expect(kisOrderCalls()).toBe(calls + 1);
    const sold = await tradeUntil(() => kis.setPrice(SYMBOL, '93000'), alice, 'emus-br-1:tp', isFilled);
    expect(sold).toMatchObject({ filledQty: '2', avgFillPrice: '93000' });
    expect(await orderRow(alice, 'emus-br-1:sl')).toMatchObject({ status: 'canceled', metadata: expect.objectContaining({ cancel_reason: 'oco_sibling' }) });
    expect(kisOrderCalls()).toBe(calls + 2);
  });
});

describe('a bracket entry at KIS that fills in parts', () => {
  const call = (method: string, path: string, body?: unknown) => callAs(alice)(method, path, body);
  /** A limit buy of 3 at 92000 with a bracket, resting at KIS (the price above it): the order's answer and KIS's order number. */
  const restingEntry = async (clientOrderId: string) => {
    const placed = await call('POST', '/api/equity/orders', {
      asset_class: 'kr_equity',
      symbol: SYMBOL,
      side: 'buy',
      qty: 3,
      order_type: 'limit',
      limit_price: 92000,
      time_in_force: 'day',
      bracket: { take_profit: 96000, stop_loss: 90000 },
      client_order_id: clientOrderId,
    });
    expect(placed.status, placed.text).toBe(201);
    await waitFor(
      () => orderRow(alice, clientOrderId),
      (row) => row?.status === 'open',
    );
    return { placed, odno: String(placed.body.broker_order_id).split('-')[1]! };
  };

  it('arms its exits for the first part and grows them with the next; the stop leg then sells the whole filled quantity', async () => {
    // The price is 93000: a limit buy at 92000 rests.
    const { placed, odno } = await restingEntry('emus-br-2');
    kis.books.fillPart(kisKey.accountNo, kisKey.productCode, odno, '1', '92000');
    const first = await waitFor(
      () => orderRow(alice, 'emus-br-2:sl'),
      (row) => row?.qty === '1',
    );
    expect(first).toMatchObject({ status: 'open', stopPrice: '90000' });
    expect(await orderRow(alice, 'emus-br-2:tp')).toMatchObject({ qty: '1' });
    const armed = await triggerRow(alice, 'emus-br-2:sl');
    kis.books.fillPart(kisKey.accountNo, kisKey.productCode, odno, '1', '92000');
    await waitFor(
      () => triggerRow(alice, 'emus-br-2:sl'),
      (row) => row?.qty === '2',
    );
    expect(await orderRow(alice, 'emus-br-2:sl')).toMatchObject({ qty: '2', status: 'open' });
    expect(await orderRow(alice, 'emus-br-2:tp')).toMatchObject({ qty: '2' });
    expect((await triggerRow(alice, 'emus-br-2:sl'))!.armedAt).not.toEqual(armed!.armedAt);
    // The entry's rest is canceled: the exits keep what it filled.
    expect((await call('DELETE', `/api/equity/orders/${placed.body.broker_order_id}?asset_class=kr_equity`)).status).toBe(204);
    const sold = await tradeUntil(() => kis.setPrice(SYMBOL, '90000'), alice, 'emus-br-2:sl', isFilled);
    expect(sold).toMatchObject({ filledQty: '2', avgFillPrice: '90000' });
    expect(await orderRow(alice, 'emus-br-2:tp')).toMatchObject({ status: 'canceled' });
  });

  it('makes a new pair of exits for a fill that comes after the last pair ended, as the simulator does', async () => {
    kis.setPrice(SYMBOL, '93000');
    const { placed, odno } = await restingEntry('emus-br-3');
    kis.books.fillPart(kisKey.accountNo, kisKey.productCode, odno, '1', '92000');
    await waitFor(
      () => orderRow(alice, 'emus-br-3:sl'),
      (row) => row?.qty === '1',
    );
    // The first pair ends: a trade at its stop on the stream (KIS's book stays at 93000, above the
    // entry's limit, which rests on) fires its stop leg, which sells the one share; its take-profit
    // is canceled at that fill.
    const sold = await tradeUntil(() => kis.quotes.publish([{ symbol: SYMBOL, price: '90000' }]), alice, 'emus-br-3:sl', isFilled);
    expect(sold).toMatchObject({ filledQty: '1', avgFillPrice: '93000' });
    expect(await orderRow(alice, 'emus-br-3:tp')).toMatchObject({ status: 'canceled' });
    expect(await orderRow(alice, 'emus-br-3')).toMatchObject({ status: 'partially_filled', filledQty: '1' });
    // The entry buys one more: a new pair for it, the first pair as it ended.
    kis.books.fillPart(kisKey.accountNo, kisKey.productCode, odno, '1', '92000');
    const second = await waitFor(
      () => orderRow(alice, 'emus-br-3:sl.2'),
      (row) => row !== undefined,
    );
    expect(second).toMatchObject({ status: 'open', orderType: 'stop', stopPrice: '90000', qty: '1', metadata: expect.objectContaining({ emulated: true, parent_client_order_id: 'emus-br-3' }) });
    expect(await orderRow(alice, 'emus-br-3:tp.2')).toMatchObject({ status: 'open', orderType: 'limit', limitPrice: '96000', qty: '1' });
    expect(await triggerRow(alice, 'emus-br-3:sl.2')).toMatchObject({ status: 'working', siblingClientOrderId: 'emus-br-3:tp.2' });
    expect(await orderRow(alice, 'emus-br-3:sl')).toMatchObject({ status: 'filled', qty: '1' });
    expect(await orderRow(alice, 'emus-br-3:tp')).toMatchObject({ status: 'canceled', qty: '1' });
    expect((await call('DELETE', `/api/equity/orders/${placed.body.broker_order_id}?asset_class=kr_equity`)).status).toBe(204);
    expect((await call('DELETE', `/api/equity/orders/${second!.brokerOrderId}?asset_class=kr_equity`)).status).toBe(204);
  });
});

describe('stops and stop-limits at a ccxt exchange (the fake Binance, whose markets list no stops), emulated', () => {
  const call = (method: string, path: string, body?: unknown) => callAs(bob)(method, path, body);
  const btc = (body: Record<string, unknown>) => call('POST', '/api/equity/orders', { asset_class: 'crypto', symbol: 'BTC/USDT', time_in_force: 'gtc', ...body });

  it('takes the key', async () => {
    const created = await call('POST', '/api/exchange-keys', { asset_class: 'crypto', exchange: 'crypto_exchange', paper_mode: true, base_url: binance.url, api_key: binanceKey.apiKey, api_secret: binanceKey.secret });
    expect(created.status, created.text).toBe(201);
    await waitFor(
      () => Promise.resolve(binance.userStreamSubscribers(binanceKey.apiKey)),
      (count) => count === 1,
    );
  });

  it('fires a sell stop-limit when the price falls to its stop; its limit sell rests below the limit and fills at it', async () => {
    const posts = binanceOrderPosts();
    const placed = await btc({ side: 'sell', qty: 0.1, order_type: 'stop_limit', stop_price: 49000, limit_price: 48900, client_order_id: 'emus-btc-sl' });
    expect(placed.status, placed.text).toBe(201);
    expect(placed.body).toMatchObject({ order_type: 'stop_limit', stop_price: 49000, limit_price: 48900, metadata: { emulated: true } });
    expect(binanceOrderPosts()).toBe(posts);
    await waitFor(
      () => Promise.resolve(binance.marketStreamSubscribers()),
      (count) => count > 0,
    );
    const triggered = await tradeUntil(() => binance.setPrice('BTCUSDT', '48800'), bob, 'emus-btc-sl', childPlaced);
    expect(triggered).toMatchObject({ status: 'open', filledQty: '0' });
    // At the exchange: a limit sell at the stop-limit's limit, resting.
    expect(binance.books.openOrders(binanceKey.apiKey, 'BTCUSDT').map((order) => [order.type, order.side, Number(order.price), Number(order.origQty)])).toEqual([['LIMIT', 'SELL', 48900, 0.1]]);
    // Triggered: no longer the emulator's to replace.
    const late = await call('PATCH', `/api/equity/orders/${placed.body.broker_order_id}`, { asset_class: 'crypto', broker_order_id: placed.body.broker_order_id, limit_price: 48800 });
    expect([late.status, late.body.code], late.text).toEqual([422, 'ORDER_NOT_CANCELABLE']);
    binance.setPrice('BTCUSDT', '49100');
    const row = await filled(bob, 'emus-btc-sl');
    expect([Number(row!.filledQty), Number(row!.avgFillPrice)]).toEqual([0.1, 48900]);
    expect(binanceOrderPosts()).toBe(posts + 1);
    await server.services.orders.idle();
    expect(await fillsOf(bob, 'emus-btc-sl')).toEqual([[0.1, 48900]]);
  });

  it('fires a buy stop when the price rises to it: a market buy', async () => {
    const posts = binanceOrderPosts();
    const placed = await btc({ side: 'buy', qty: 0.1, order_type: 'stop', stop_price: 51000, client_order_id: 'emus-btc-stop' });
    expect(placed.status, placed.text).toBe(201);
    expect(placed.body).toMatchObject({ order_type: 'stop', stop_price: 51000, metadata: { emulated: true } });
    binance.setPrice('BTCUSDT', '50900');
    const row = await tradeUntil(() => binance.setPrice('BTCUSDT', '51000'), bob, 'emus-btc-stop', isFilled);
    expect([Number(row!.filledQty), Number(row!.avgFillPrice)]).toEqual([0.1, 51000]);
    expect(binanceOrderPosts()).toBe(posts + 1);
  });

  it('replaces a trailing stop’s trail: its stop set again from its mark, and it sells there', async () => {
    // The price is 51000, the mark a trail starts from.
    const placed = await btc({ side: 'sell', qty: 0.05, order_type: 'trailing_stop', trail_percent: 2, client_order_id: 'emus-btc-trail' });
    expect(placed.status, placed.text).toBe(201);
    expect(placed.body).toMatchObject({ stop_price: 49980, metadata: { hwm: 51000, trail_percent: 2 } });
    const replaced = await call('PATCH', `/api/equity/orders/${placed.body.broker_order_id}`, { asset_class: 'crypto', broker_order_id: placed.body.broker_order_id, trail_percent: 1 });
    expect(replaced.status, replaced.text).toBe(200);
    // 51000 × 0.99 = 50490.
    expect(replaced.body).toMatchObject({ stop_price: 50490, metadata: expect.objectContaining({ trail_percent: 1, hwm: 51000 }) });
    expect(await triggerRow(bob, 'emus-btc-trail')).toMatchObject({ trailPercent: '1', trailPrice: null });
    const posts = binanceOrderPosts();
    binance.setPrice('BTCUSDT', '50500');
    const row = await tradeUntil(() => binance.setPrice('BTCUSDT', '50490'), bob, 'emus-btc-trail', isFilled);
    expect([Number(row!.filledQty), Number(row!.avgFillPrice)]).toEqual([0.05, 50490]);
    expect(binanceOrderPosts()).toBe(posts + 1);
  });

  it('holds an OCO whose stop leg trails (Binance’s own OCO takes no trailing leg): the stop leg follows the price and fires, its market sell filled, the take-profit canceled with it', async () => {
    binance.setPrice('BTCUSDT', '52000');
    const posts = binanceOrderPosts();
    const placed = await btc({ side: 'sell', qty: 0.1, order_type: 'limit', limit_price: 54000, order_class: 'oco', bracket: { trail_percent: 2 }, client_order_id: 'emus-btc-oco' });
    expect(placed.status, placed.text).toBe(201);
    expect(placed.body).toMatchObject({ order_type: 'limit', limit_price: 54000, metadata: { emulated: true, order_class: 'oco' } });
    expect(await orderRow(bob, 'emus-btc-oco:sl')).toMatchObject({ orderType: 'trailing_stop', status: 'open', metadata: expect.objectContaining({ trail_percent: 2, hwm: 52000 }) });
    expect(Number((await orderRow(bob, 'emus-btc-oco:sl'))!.stopPrice)).toBe(50960);
    expect(binanceOrderPosts()).toBe(posts);
    // 53000 × 0.98 = 51940.
    await tradeUntil(() => binance.setPrice('BTCUSDT', '53000'), bob, 'emus-btc-oco:sl', (row) => Number(row?.stopPrice) === 51940);
    const leg = await tradeUntil(() => binance.setPrice('BTCUSDT', '51900'), bob, 'emus-btc-oco:sl', isFilled);
    expect([Number(leg!.filledQty), Number(leg!.avgFillPrice)]).toEqual([0.1, 51900]);
    expect(await orderRow(bob, 'emus-btc-oco')).toMatchObject({ status: 'canceled', filledQty: '0', metadata: expect.objectContaining({ cancel_reason: 'oco_sibling' }) });
    expect(binanceOrderPosts()).toBe(posts + 1);
  });

  it('cancels a triggered stop-limit whose limit rests at the exchange: its child canceled there, the order canceled by its event', async () => {
    // The price is 52000 after the OCO above.
    // The account holds 0.05 BTC.
    const placed = await btc({ side: 'sell', qty: 0.05, order_type: 'stop_limit', stop_price: 51000, limit_price: 50900, client_order_id: 'emus-btc-sl2' });
    expect(placed.status, placed.text).toBe(201);
    const triggered = await tradeUntil(() => binance.setPrice('BTCUSDT', '50800'), bob, 'emus-btc-sl2', childPlaced);
    expect(triggered).toMatchObject({ status: 'open', filledQty: '0' });
    const childId = String(triggered!.metadata.child_broker_order_id);
    const canceled = await call('DELETE', `/api/equity/orders/${placed.body.broker_order_id}?asset_class=crypto`);
    expect(canceled.status, canceled.text).toBe(204);
    const row = await waitFor(
      () => orderRow(bob, 'emus-btc-sl2'),
      (one) => one?.status === 'canceled',
    );
    expect(row).toMatchObject({ filledQty: '0', brokerOrderId: placed.body.broker_order_id });
    expect(binance.books.openOrders(binanceKey.apiKey, 'BTCUSDT')).toEqual([]);
    expect(binance.requests.some((request) => request.method === 'DELETE' && request.path === '/api/v3/order')).toBe(true);
    expect(await auditActionsOf(bob, 'emus-btc-sl2')).toEqual(expect.arrayContaining(['order.cancel_requested', 'order.canceled']));
    expect(childId).toMatch(/^BTCUSDT~/);
  });

  it('holds the cash of a working emulated buy: a buy beyond what it leaves is refused (the exchange’s own figure does not net it)', async () => {
    binance.setPrice('BTCUSDT', '51000');
    // 1.5 × 52000 = 78000 USDT, of about 108000 after the trades above (the stop-limit above sold nothing).
    const placed = await btc({ side: 'buy', qty: 1.5, order_type: 'stop', stop_price: 52000, client_order_id: 'emus-btc-funds' });
    expect(placed.status, placed.text).toBe(201);
    // 0.7 × 51000 = 35700: within the cash, beyond what the stop buy leaves of it.
    const refused = await btc({ side: 'buy', qty: 0.7, order_type: 'market' });
    expect([refused.status, refused.body.code], refused.text).toEqual([422, 'INSUFFICIENT_FUNDS']);
  });

  it('cancels the parent of a child the gates refuse (funds spent outside the service meanwhile), with its reason, audited and told to the user; nothing goes to the exchange', async () => {
    // Spent at the exchange itself (another app on the same account): the service cannot hold it.
    binance.books.place(binanceKey.apiKey, { symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: '0.7' });
    const posts = binanceOrderPosts();
    const brokerOrderId = (await orderRow(bob, 'emus-btc-funds'))!.brokerOrderId!;
    const canceled = await tradeUntil(() => binance.setPrice('BTCUSDT', '52000'), bob, 'emus-btc-funds', (row) => row?.status === 'canceled');
    expect(canceled!.metadata).toMatchObject({ cancel_reason: 'trigger_refused', child_client_order_id: 'emus-btc-funds.tr' });
    expect(canceled!.metadata.child_broker_order_id).toBeUndefined();
    expect(canceled!.reason).toBeTruthy();
    expect(binanceOrderPosts()).toBe(posts);
    const read = await call('GET', `/api/equity/orders/${brokerOrderId}?asset_class=crypto`);
    expect(read.body).toMatchObject({ status: 'canceled', metadata: expect.objectContaining({ cancel_reason: 'trigger_refused' }) });
    const frames = await framesOf(bob, 'emus-btc-funds');
    expect(frames.map((frame) => frame.frame.event_type).slice(-2)).toEqual(['triggered', 'canceled']);
    const cancelFrame = frames.at(-1)!;
    expect(cancelFrame.frame.payload).toMatchObject({ cancel_reason: 'trigger_refused', code: 'INSUFFICIENT_FUNDS' });
    // The notifications read this row as a rejection.
    expect(noticeItemOf({ channel: cancelFrame.channel, frame: cancelFrame.frame, at: cancelFrame.createdAt })).toMatchObject({ event: 'rejection' });
    expect(await auditActionsOf(bob, 'emus-btc-funds')).toEqual(expect.arrayContaining(['order.triggered', 'order.canceled']));
  });

  it('judges a fired sell on the units its order held, reading no account: what changed at the exchange itself is the exchange’s to refuse, and the order is canceled with its refusal', async () => {
    binance.setPrice('BTCUSDT', '52000');
    const btcFree = binance.books.balances(binanceKey.apiKey).find((balance) => balance.asset === 'BTC')!.free;
    const placed = await btc({ side: 'sell', qty: Number(btcFree), order_type: 'stop', stop_price: 51000, client_order_id: 'emus-btc-held' });
    expect(placed.status, placed.text).toBe(201);
    // Half of it then locked at the exchange itself (another app's resting sell on the same account).
    const half = new ExactDecimal(btcFree).dividedBy(2).toFixed();
    const outside = binance.books.place(binanceKey.apiKey, { symbol: 'BTCUSDT', side: 'SELL', type: 'LIMIT', quantity: half, price: '90000', timeInForce: 'GTC' });
    const posts = binanceOrderPosts();
    const canceled = await tradeUntil(() => binance.setPrice('BTCUSDT', '51000'), bob, 'emus-btc-held', (row) => row?.status === 'canceled');
    // The service's checks passed it on its hold; the exchange refused the whole quantity.
    expect(binanceOrderPosts()).toBe(posts + 1);
    expect(canceled!.metadata).toMatchObject({ cancel_reason: 'trigger_refused', child_client_order_id: 'emus-btc-held.tr' });
    const frames = await framesOf(bob, 'emus-btc-held');
    expect(frames.map((frame) => frame.frame.event_type).slice(-2)).toEqual(['triggered', 'canceled']);
    expect(frames.at(-1)!.frame.payload).toMatchObject({ cancel_reason: 'trigger_refused', code: 'BROKER_REJECTED' });
    expect(binance.books.balances(binanceKey.apiKey).find((balance) => balance.asset === 'BTC')!.free).toBe(half);
    binance.books.cancel(binanceKey.apiKey, 'BTCUSDT', { orderId: String(outside.order.orderId) });
  });
});

describe('an oto at the fake Binance whose stop leg trails: the entry at the exchange, its trailing leg emulated', () => {
  it('arms the leg with the entry’s fill, trailing from the fill price; it follows the price and sells through its stop', async () => {
    binance.setPrice('BTCUSDT', '52000');
    const placed = await callAs(bob)('POST', '/api/equity/orders', {
      asset_class: 'crypto',
      symbol: 'BTC/USDT',
      side: 'buy',
      qty: 0.1,
      order_type: 'market',
      time_in_force: 'gtc',
      order_class: 'oto',
      bracket: { trail_percent: 2 },
      client_order_id: 'emus-btc-oto',
    });
    expect(placed.status, placed.text).toBe(201);
    await filled(bob, 'emus-btc-oto');
    const leg = await waitFor(
      () => orderRow(bob, 'emus-btc-oto:sl'),
      (row) => row !== undefined,
    );
    // From the fill at 52000: 52000 × 0.98 = 50960.
    expect(leg).toMatchObject({ status: 'open', orderType: 'trailing_stop', metadata: expect.objectContaining({ trail_percent: 2, hwm: 52000, parent_client_order_id: 'emus-btc-oto' }) });
    expect([Number(leg!.qty), Number(leg!.stopPrice)]).toEqual([0.1, 50960]);
    expect(await orderRow(bob, 'emus-btc-oto:tp')).toBeUndefined();
    await tradeUntil(() => binance.setPrice('BTCUSDT', '53000'), bob, 'emus-btc-oto:sl', (row) => Number(row?.stopPrice) === 51940);
    const sold = await tradeUntil(() => binance.setPrice('BTCUSDT', '51900'), bob, 'emus-btc-oto:sl', isFilled);
    expect([Number(sold!.filledQty), Number(sold!.avgFillPrice)]).toEqual([0.1, 51900]);
  });
});

describe('a fired child is an exit: exempt from the rate limit and the emergency lock', () => {
  const call = (method: string, path: string, body?: unknown) => callAs(carol)(method, path, body);
  const kr = (body: Record<string, unknown>) => call('POST', '/api/equity/orders', { asset_class: 'kr_equity', symbol: SYMBOL, time_in_force: 'day', ...body });

  it('places a buy stop’s child under a running lock and a full minute window', async () => {
    await addKisKey(carol, kisKey2);
    kis.setPrice(SYMBOL, '96000');
    const placed = await kr({ side: 'buy', qty: 1, order_type: 'stop', stop_price: 99000, client_order_id: 'emus-exempt' });
    expect(placed.status, placed.text).toBe(201);
    const db = server.services.db;
    const now = new Date();
    await setLock(db, { userId: carol.user.id, assetClass: 'kr_equity', lockedUntil: new Date(now.getTime() + 3_600_000), reason: 'test', at: now });
    // Fill the minute's window: a placement now is 429.
    for (;;) {
      const at = new Date();
      const claim = await claimRate(db, { userId: carol.user.id, scope: MINUTE_SCOPE, windowStart: new Date(at.getTime() - 60_000), at, max: server.config.RATE_LIMIT_ORDERS_PER_MIN });
      if (!claim.counted) break;
    }
    const refused = await kr({ side: 'buy', qty: 1, order_type: 'market' });
    expect([refused.status, refused.body.code], refused.text).toEqual([429, 'RATE_LIMIT_EXCEEDED']);
    const calls = kisOrderCalls();
    const row = await tradeUntil(() => kis.setPrice(SYMBOL, '99000'), carol, 'emus-exempt', isFilled);
    expect(row).toMatchObject({ filledQty: '1', avgFillPrice: '99000' });
    expect(kisOrderCalls()).toBe(calls + 1);
  });
});
