// A fired trigger whose child's placement got no answer (DESIGN §6 "Advanced orders"; the fake KIS,
// which holds no trailing stops and keeps no client order ids): the reconciler asks the broker for
// the child. One that reached the broker (its answer lost on the way back) is linked, its fill the
// order's; one that never did works again once no answer can be on its way, and the watch fires it
// anew at the next price through its stop: one sale in all, either way.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KIS_PATHS } from '../../server/brokers/kis/wire.ts';
import { orderFills, orders, orderTriggers } from '../../server/db/schema/index.ts';
import { startFakeKis, type FakeKis } from '../../server/fakes/kis.ts';
import { createCcxtClientIdStore, createKisLinkStore } from '../../server/orders/broker-links.ts';
import { clientOrderIdRuleOf, toExchangeClientOrderId } from '../../server/brokers/ccxt/index.ts';
import type { Clock } from '../../server/clock.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { kisKeyBody, kisRealModeEnv, newKisKey } from '../support/kis-keys.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

const kisKey = newKisKey('reco', '50000004');
const SYMBOL = '005930';
const ORDER_POST = { method: 'POST', path: KIS_PATHS.orderCash };
const account = () => ({ userId: alice.user.id, assetClass: 'kr_equity' as const, mode: 'paper' as const });
/**
 * The adapter matches a lost order among KIS's by its details only once two minutes have passed
 * since it was sent: a fired trigger is made three minutes old (its row), and the fake's clock runs
 * as far behind while the child goes out, so that KIS's record of the child is as old as the trigger.
 */
const PAST_MS = 180_000;
let fakeBehindMs = 0;
/**
 * The service's clock: a Seoul noon that runs on from there, so that three minutes back is the same
 * Seoul day whatever the time of day the suite runs.
 */
const startedAt = Date.now();
const clock: Clock = { now: () => new Date(Date.parse('2026-03-10T03:00:00Z') + (Date.now() - startedAt)) };

let kis: FakeKis;
let server: TestServer;
let alice: FactoryUser;

beforeAll(async () => {
  kis = await startFakeKis({ mode: 'paper', accounts: [{ ...kisKey, cash: '100000000' }], prices: { [SYMBOL]: '96500' }, now: () => new Date(clock.now().getTime() - fakeBehindMs) });
  // No worker jobs: their reconcile every minute would race the test's own passes, which it counts.
  server = await startTestServer(kisRealModeEnv(kis.url), undefined, { clock });
  alice = await newUser(server, { prefix: 'emu_reco' });
});
afterAll(async () => {
  await server?.stop();
  await kis?.close();
});

const call = (method: string, path: string, body?: unknown) => server.http(method, path, { token: alice.tokens.access_token, ...(body === undefined ? {} : { body }) });
const orderCalls = () => kis.requests.filter((request) => request.method === 'POST' && request.path === KIS_PATHS.orderCash).length;
const orderRow = async (clientOrderId: string) => (await server.services.db.select().from(orders).where(and(eq(orders.userId, alice.user.id), eq(orders.clientOrderId, clientOrderId))))[0];
const triggerRow = async (clientOrderId: string) => (await server.services.db.select().from(orderTriggers).where(and(eq(orderTriggers.userId, alice.user.id), eq(orderTriggers.clientOrderId, clientOrderId))))[0];
const fillsOf = async (clientOrderId: string) => (await server.services.db.select().from(orderFills).where(and(eq(orderFills.userId, alice.user.id), eq(orderFills.clientOrderId, clientOrderId)))).map((fill) => [fill.qty, fill.price]);
const auditOf = async (clientOrderId: string) => (await call('GET', `/api/audit?client_order_id=${clientOrderId}`)).body.items as { action: string; data: Record<string, unknown> }[];
/**
 * Trades at `price` until the trigger has fired and its child's placement has ended without an
 * answer. Sent again and again: a watch whose set of triggers changed opens a new quote stream,
 * and a trade sent before it subscribed is not seen.
 */
const untilChildUnanswered = (clientOrderId: string, price: string, calls: number) =>
  waitFor(
    async () => {
      kis.setPrice(SYMBOL, price);
      return { trigger: await triggerRow(clientOrderId), calls: orderCalls() };
    },
    ({ trigger, calls: now }) => trigger?.status === 'triggered' && trigger.childClientOrderId !== null && now === calls + 1,
  );
/** The trigger as if it had fired PAST_MS ago. */
const ageTrigger = (clientOrderId: string) =>
  server.services.db
    .update(orderTriggers)
    .set({ updatedAt: new Date(clock.now().getTime() - PAST_MS) })
    .where(and(eq(orderTriggers.userId, alice.user.id), eq(orderTriggers.clientOrderId, clientOrderId)));
const trailingSell = async (clientOrderId: string, qty: number) => {
  const placed = await call('POST', '/api/equity/orders', { asset_class: 'kr_equity', symbol: SYMBOL, side: 'sell', qty, order_type: 'trailing_stop', trail_price: 1000, time_in_force: 'gtc', client_order_id: clientOrderId });
  expect(placed.status, placed.text).toBe(201);
  await waitFor(
    () => Promise.resolve(kis.quotes.sessions()),
    (sessions) => sessions.some((symbols) => symbols.includes(SYMBOL)),
  );
  return placed.body as { broker_order_id: string; stop_price: number };
};

describe('a trigger’s child whose placement had no answer', () => {
  it('holds a position to sell', async () => {
    const created = await call('POST', '/api/exchange-keys', kisKeyBody(kisKey, kis.url));
    expect(created.status, created.text).toBe(201);
    const bought = await call('POST', '/api/equity/orders', { asset_class: 'kr_equity', symbol: SYMBOL, side: 'buy', qty: 5, order_type: 'market', client_order_id: 'reco-buy-1' });
    expect(bought.status, bought.text).toBe(201);
    await waitFor(
      () => orderRow('reco-buy-1'),
      (row) => row?.status === 'filled',
    );
  });

  it('is linked when it reached the broker: its fill is the order’s, and nothing is sold twice', async () => {
    kis.setPrice(SYMBOL, '96500');
    const placed = await trailingSell('reco-trail-1', 2);
    expect(placed.stop_price).toBe(95500);
    const calls = orderCalls();
    // KIS takes the child and fills it; the answer is lost on the way back.
    kis.loseAnswerNext(ORDER_POST);
    fakeBehindMs = PAST_MS;
    await untilChildUnanswered('reco-trail-1', '95400', calls);
    fakeBehindMs = 0;
    expect(await triggerRow('reco-trail-1')).toMatchObject({ childBrokerOrderId: null });
    expect((await orderRow('reco-trail-1'))!.status).toBe('open');
    // Too young to be matched among KIS's orders by its details: left for a later run.
    expect(await server.services.orders.reconcile(account())).toMatchObject({ linked: 0, rearmed: 0 });

    await ageTrigger('reco-trail-1');
    const outcome = await server.services.orders.reconcile(account());
    expect(outcome).toMatchObject({ linked: 1, rearmed: 0 });
    const linked = await orderRow('reco-trail-1');
    expect(linked).toMatchObject({ status: 'filled', filledQty: '2', avgFillPrice: '95400', brokerOrderId: placed.broker_order_id });
    expect(linked!.metadata).toMatchObject({ child_client_order_id: 'reco-trail-1.tr', child_broker_order_id: expect.any(String) });
    expect((await triggerRow('reco-trail-1'))!.childBrokerOrderId).toBe(linked!.metadata.child_broker_order_id);
    // Another instance (nothing in its memory) finds the child's link by its trigger: its later events reach the order.
    const links = createKisLinkStore({ db: server.services.db, userId: alice.user.id, mode: 'paper' });
    const childBrokerOrderId = String(linked!.metadata.child_broker_order_id);
    expect(await links.byBrokerOrderId(childBrokerOrderId)).toMatchObject({ clientOrderId: 'reco-trail-1.tr', brokerOrderId: childBrokerOrderId });
    expect(await links.byClientOrderId('reco-trail-1.tr')).toMatchObject({ brokerOrderId: childBrokerOrderId });
    expect(await fillsOf('reco-trail-1')).toEqual([['2', '95400']]);
    expect((await auditOf('reco-trail-1')).filter((item) => item.action === 'order.reconciled')).toEqual([expect.objectContaining({ data: expect.objectContaining({ decision: 'linked' }) })]);
    // Settled: a second run finds nothing to do, and KIS got one sell.
    expect(await server.services.orders.reconcile(account())).toMatchObject({ linked: 0, rearmed: 0 });
    expect(orderCalls()).toBe(calls + 1);
  });

  it('works again when it never reached the broker, once no answer can be on its way; the next price through the stop sells once', async () => {
    kis.setPrice(SYMBOL, '96500');
    const placed = await trailingSell('reco-trail-2', 1);
    const calls = orderCalls();
    // KIS answers 503 before taking the child.
    kis.failNext(503, '<html>Service Unavailable</html>', ORDER_POST);
    await untilChildUnanswered('reco-trail-2', '95400', calls);

    // Too young to tell a lost child from one still on its way: left alone.
    expect(await server.services.orders.reconcile(account())).toMatchObject({ linked: 0, rearmed: 0 });
    expect(await triggerRow('reco-trail-2')).toMatchObject({ status: 'triggered', childClientOrderId: 'reco-trail-2.tr' });
    // Fired three minutes ago: KIS has no such order, so the trigger works again.
    await ageTrigger('reco-trail-2');
    expect(await server.services.orders.reconcile(account())).toMatchObject({ linked: 0, rearmed: 1 });
    expect(await triggerRow('reco-trail-2')).toMatchObject({ status: 'working', childClientOrderId: null });
    expect((await auditOf('reco-trail-2')).map((item) => item.data.decision).filter(Boolean)).toEqual(['rearmed']);

    const filled = await waitFor(
      async () => {
        kis.setPrice(SYMBOL, '95300');
        return orderRow('reco-trail-2');
      },
      (row) => row?.status === 'filled',
    );
    expect(filled).toMatchObject({ filledQty: '1', avgFillPrice: '95300', brokerOrderId: placed.broker_order_id });
    await server.services.orders.idle();
    expect(await fillsOf('reco-trail-2')).toEqual([['1', '95300']]);
    // The 503 took no order: the one sale is the second child's.
    expect(orderCalls()).toBe(calls + 2);
    expect(kis.requests.filter((request) => request.method === 'POST' && request.path === KIS_PATHS.orderCash).length).toBe(calls + 2);
  });
});

describe('an emulated order’s child at a crypto exchange, after a restart', () => {
  it('is found by its trigger row: its digest client order id read back as the child’s', async () => {
    const child = `${'c'.repeat(40)}.tr`;
    await server.services.db.insert(orderTriggers).values({
      userId: alice.user.id,
      clientOrderId: 'c'.repeat(40),
      assetClass: 'crypto',
      live: false,
      symbol: 'BTC/USDT',
      side: 'sell',
      qty: '0.1',
      trailPercent: '2',
      hwm: '50000',
      stopPrice: '49000',
      status: 'triggered',
      childClientOrderId: child,
      childBrokerOrderId: 'bn-777',
      updatedAt: new Date(),
    });
    const rule = clientOrderIdRuleOf('binance');
    const store = createCcxtClientIdStore({ db: server.services.db, userId: alice.user.id, mode: 'paper', rule });
    expect(await store.find(toExchangeClientOrderId(child, rule), 'bn-777')).toBe(child);
    // Another order's id under that broker id is not the child's.
    expect(await store.find(toExchangeClientOrderId('someone-else', rule), 'bn-777')).toBeUndefined();
  });
});
