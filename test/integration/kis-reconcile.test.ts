// The reconciler and a KIS order whose placement answer was lost (KIS took it, the answer never
// reached us, and our record is still the intent), in BROKER_MODE=real against the fake KIS: the
// order is found among the day's orders by symbol, side, quantity and time, linked to KIS's
// order number with its fill recorded once, while a twin placed and linked normally is left
// alone; several orders that fit are not guessed between, and the intent stays pending, audited.
import { randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KIS_PATHS } from '../../server/brokers/kis/wire.ts';
import { BrokerUnavailableError, type BrokerOrderRequest } from '../../server/brokers/types.ts';
import type { Clock } from '../../server/clock.ts';
import { auditEvents, orderFills, orders } from '../../server/db/schema/index.ts';
import { startFakeKis, type FakeKis } from '../../server/fakes/kis.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

const kisKey = { appKey: `PSTEST${randomBytes(6).toString('hex')}`, appSecret: `kis-secret-${randomBytes(24).toString('hex')}`, accountNo: '50000002', productCode: '01' };
/** The adapter looks for a lost order once two minutes have passed: the fake's clock runs this far behind while the orders are placed. */
const PAST_MS = 180_000;
let fakeBehindMs = 0;

let kis: FakeKis;
let server: TestServer;
let alice: FactoryUser;

/**
 * The service's clock, and the fake's (three minutes behind it while orders are placed): both
 * start at noon in Seoul (03:00 UTC) and run on from there, so the fake's orders fall on the
 * service's day whatever the time of day the suite runs (within three minutes after Seoul's
 * midnight they would not). They run rather than stand still: the budget of KIS requests refills
 * on it while the events consumer polls.
 */
const startedAt = Date.now();
const clock: Clock = { now: () => new Date(Date.parse('2026-03-10T03:00:00Z') + (Date.now() - startedAt)) };

beforeAll(async () => {
  kis = await startFakeKis({ mode: 'paper', accounts: [{ ...kisKey, cash: '100000000' }], prices: { '005930': '96500' }, now: () => new Date(clock.now().getTime() - fakeBehindMs) });
  server = await startTestServer({
    BROKER_MODE: 'real',
    BROKER_BASE_URLS: `kr_broker:paper=${kis.url}`,
    BROKER_KR_POLL_INTERVAL_MS: '200',
    BROKER_KR_REQUESTS_PER_SEC: '50',
    RISK_MARKET_HOURS: 'ignore',
    SIM_TICK_INTERVAL_MS: '0',
    // The workers' reconcile every minute would race the test's own passes, which it counts.
    WORKERS_IN_PROCESS: 'false',
  }, undefined, { clock });
  alice = await newUser(server, { prefix: 'kis_lost' });
  const created = await server.http('POST', '/api/exchange-keys', {
    token: alice.tokens.access_token,
    body: { asset_class: 'kr_equity', exchange: 'kr_broker', paper_mode: true, account_no: `${kisKey.accountNo}-01`, account_product_code: '01', api_key: kisKey.appKey, api_secret: kisKey.appSecret, base_url: kis.url },
  });
  expect(created.status, created.text).toBe(201);
});
afterAll(async () => {
  await server?.stop();
  await kis?.close();
});

const account = () => ({ userId: alice.user.id, assetClass: 'kr_equity' as const, mode: 'paper' as const });
const rowOf = async (clientOrderId: string) => (await server.services.db.select().from(orders).where(and(eq(orders.userId, alice.user.id), eq(orders.clientOrderId, clientOrderId))))[0];
const fillsOf = async (clientOrderId: string) =>
  (await server.services.db.select().from(orderFills).where(and(eq(orderFills.userId, alice.user.id), eq(orderFills.clientOrderId, clientOrderId)))).map((fill) => fill.qty);
const decisionsOf = async (clientOrderId: string) =>
  (await server.services.db.select().from(auditEvents).where(and(eq(auditEvents.subjectUserId, alice.user.id), eq(auditEvents.action, 'order.reconciled'))))
    .filter((row) => row.data.client_order_id === clientOrderId)
    .map((row) => row.data);
/** Polls of the day's orders so far: waiting for a few more lets the events consumer see what changed. */
const polls = () => kis.requests.filter((request) => request.path === KIS_PATHS.dailyOrders).length;
const afterPolls = async (count: number) => {
  const from = polls();
  await waitFor(
    () => Promise.resolve(polls()),
    (seen) => seen >= from + count,
  );
};

/**
 * What a crash between KIS's answer and our write leaves: the intent recorded (pending, sent
 * three minutes ago by the fake's clock) and an order at KIS whose answer never reached us.
 */
const placeLost = async (clientOrderId: string, qty: string) => {
  const sentAt = new Date(clock.now().getTime() - PAST_MS - 1_000);
  await server.services.db.insert(orders).values({
    userId: alice.user.id,
    clientOrderId,
    brokerOrderId: null,
    assetClass: 'kr_equity',
    live: false,
    broker: 'kis',
    symbol: '005930',
    side: 'buy',
    orderType: 'market',
    timeInForce: 'day',
    qty,
    status: 'pending',
    requestHash: 'x',
    submittedAt: sentAt,
    updatedAt: sentAt,
  });
  const broker = await server.services.brokers.forUser(account());
  const request: BrokerOrderRequest = { clientOrderId, symbol: '005930', side: 'buy', qty, orderType: 'market', timeInForce: 'day' };
  kis.loseAnswerNext({ method: 'POST', path: KIS_PATHS.orderCash });
  await expect(broker.placeOrder(request)).rejects.toBeInstanceOf(BrokerUnavailableError);
};

describe('an intent whose KIS answer was lost', () => {
  it('is linked to the one KIS order that fits, its fill recorded once; a twin placed and linked normally is not taken for it', async () => {
    fakeBehindMs = PAST_MS;
    await placeLost('kr-lost-1', '2');
    // The same symbol, side and quantity a moment later, placed and linked as usual.
    const twin = await server.http('POST', '/api/equity/orders', { token: alice.tokens.access_token, body: { asset_class: 'kr_equity', symbol: '005930', side: 'buy', qty: 2, order_type: 'market', client_order_id: 'kr-twin-1' } });
    expect(twin.status, twin.text).toBe(201);
    fakeBehindMs = 0;
    await waitFor(
      async () => (await rowOf('kr-twin-1'))?.status,
      (status) => status === 'filled',
    );

    const outcome = await server.services.orders.reconcile(account());
    expect(outcome).toMatchObject({ linked: 1, settled: 0, ambiguous: 0 });
    const lost = await rowOf('kr-lost-1');
    expect(lost).toMatchObject({ status: 'filled', filledQty: '2', avgFillPrice: '96500' });
    expect(lost!.brokerOrderId).toMatch(/^\d{8}-0000000001$/);
    expect((await rowOf('kr-twin-1'))!.brokerOrderId).toBe(twin.body.broker_order_id);
    expect(lost!.brokerOrderId).not.toBe(twin.body.broker_order_id);
    expect(await decisionsOf('kr-lost-1')).toEqual([expect.objectContaining({ decision: 'linked', was: 'pending', broker_status: 'filled' })]);

    // The events consumer's readings and another pass add nothing: one fill each.
    await afterPolls(3);
    await server.services.orders.reconcile(account());
    await server.services.orders.idle();
    expect(await fillsOf('kr-lost-1')).toEqual(['2']);
    expect(await fillsOf('kr-twin-1')).toEqual(['2']);
  });

  it('is not guessed between several KIS orders that fit: left pending, marked and audited once', async () => {
    fakeBehindMs = PAST_MS;
    await placeLost('kr-amb-1', '3');
    await placeLost('kr-amb-2', '3');
    fakeBehindMs = 0;

    expect(await server.services.orders.reconcile(account())).toMatchObject({ linked: 0, settled: 0, ambiguous: 2 });
    const candidates: string[][] = [];
    for (const clientOrderId of ['kr-amb-1', 'kr-amb-2']) {
      expect(await rowOf(clientOrderId)).toMatchObject({ status: 'pending', reason: 'ambiguous_at_broker', brokerOrderId: null });
      const [decision] = await decisionsOf(clientOrderId);
      expect(decision).toMatchObject({ decision: 'ambiguous' });
      candidates.push([...(decision!.candidates as string[])].sort());
    }
    // Both intents name the same two KIS orders: the two placed for them (the first test's are linked).
    expect(candidates[0]).toEqual([expect.stringMatching(/^\d{8}-0000000003$/), expect.stringMatching(/^\d{8}-0000000004$/)]);
    expect(candidates[1]).toEqual(candidates[0]);
    // A later pass decides nothing new and audits nothing again.
    expect(await server.services.orders.reconcile(account())).toMatchObject({ linked: 0, settled: 0, ambiguous: 0 });
    expect(await decisionsOf('kr-amb-1')).toHaveLength(1);
    expect(await rowOf('kr-amb-1')).toMatchObject({ status: 'pending' });
  });
});
