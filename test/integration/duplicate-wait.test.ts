// A copy of an order (the same client_order_id) that arrives while its original is still with the
// broker waits for the original's answer and answers the same, without reading the order over and
// over meanwhile: in this process it waits for the placement itself, and when the original is
// placed by another instance on the same database, for the order's event through the event bus.
// The original is held at the (fake) broker until the test lets it through. When its broker call
// then fails with its outcome unknown (the order stays pending, with no event), the copy waiting
// elsewhere is woken by the mark's signal: given an hour to wait, it answers only if woken.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ZPlaceOrderRequest } from '../../contracts/orders.ts';
import { unconfirmedError } from '../../server/brokers/errors.ts';
import type { Broker } from '../../server/brokers/types.ts';
import type { Db } from '../../server/db/client.ts';
import { AppError } from '../../server/errors.ts';
import { startFakeAlpaca, type FakeAlpaca } from '../../server/fakes/alpaca.ts';
import { createOrders } from '../../server/orders/orders.ts';
import type * as OrderQueries from '../../server/orders/queries.ts';
import { remoteSubmission } from '../../server/orders/remote-submission.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { startTestServer, tempDir, type HttpResult, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

/**
 * Every read of an order by its client order id, with the database handle that made it (one per
 * instance) and whether the placement made it (a placement or its replay, not the intake of the
 * broker's events, which reads the order too).
 */
const reads = vi.hoisted(() => [] as { db: unknown; clientOrderId: string; byPlacement: boolean }[]);
vi.mock('../../server/orders/queries.ts', async (importOriginal) => {
  const queries = await importOriginal<typeof OrderQueries>();
  const findOrderByClientId: typeof queries.findOrderByClientId = (db, key) => {
    const caller = new Error().stack ?? '';
    reads.push({ db, clientOrderId: key.clientOrderId, byPlacement: /orders[/\\](placement|duplicates)\.ts/.test(caller) });
    return queries.findOrderByClientId(db, key);
  };
  return { ...queries, findOrderByClientId };
});
/** How often the placement on `db` read the order so far. */
const readsOf = (db: Db, clientOrderId: string) => reads.filter((read) => read.byPlacement && read.db === db && read.clientOrderId === clientOrderId).length;

const onPostgres = Boolean(process.env.DATABASE_URL);
/** A duplicate's wait bound far past the test's own: a duplicate that answers was woken. */
const HOUR_MS = 3_600_000;
const newKey = () => ({ keyId: `PKTEST${randomBytes(5).toString('hex').toUpperCase()}`, secretKey: `alpaca-secret-${randomBytes(12).toString('hex')}` });
const realEnv = (alpaca: FakeAlpaca) => ({ BROKER_MODE: 'real', BROKER_BASE_URLS: `us_broker:paper=${alpaca.url}`, BROKER_US_DATA_URL: alpaca.url, RISK_MARKET_HOURS: 'ignore', SIM_TICK_INTERVAL_MS: '0' });
/** A resting limit buy: the broker's answer stays the order's state while the test looks. */
const order = (clientOrderId: string) => ({ asset_class: 'us_equity', symbol: 'AAPL', side: 'buy', qty: 1, order_type: 'limit', limit_price: 150, time_in_force: 'gtc', client_order_id: clientOrderId });
const place = (server: TestServer, user: FactoryUser, clientOrderId: string) => server.http('POST', '/api/equity/orders', { token: user.tokens.access_token, body: order(clientOrderId) });

/** A user of `server` with a key on the fake Alpaca. */
const trader = async (server: TestServer, alpaca: FakeAlpaca, key: { keyId: string; secretKey: string }) => {
  const user = await newUser(server, { prefix: 'dup_wait' });
  const created = await server.http('POST', '/api/exchange-keys', { token: user.tokens.access_token, body: { asset_class: 'us_equity', exchange: 'us_broker', paper_mode: true, api_key: key.keyId, api_secret: key.secretKey, base_url: alpaca.url } });
  expect(created.status, created.text).toBe(201);
  return user;
};

/** Holds the next order the user's broker on `server` is asked to place, until `release`. */
const holdNextPlacement = async (server: TestServer, user: FactoryUser) => {
  const broker: Broker = await server.services.brokers.forUser({ userId: user.user.id, assetClass: 'us_equity', mode: 'paper' });
  const placeOrder = broker.placeOrder.bind(broker);
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  const spy = vi.spyOn(broker, 'placeOrder').mockImplementationOnce(async (request) => {
    await released;
    return placeOrder(request);
  });
  return { release, reachedBroker: () => waitFor(() => Promise.resolve(spy.mock.calls.length), (calls) => calls === 1) };
};

/** The next order placement at the fake Alpaca fails 503: the order may have reached it (outcome unknown). */
const failNextPlacement = (alpaca: FakeAlpaca) => alpaca.failNext(503, 'service unavailable', { method: 'POST', path: '/v2/orders' });

/** A placement's answer, or the error it ended with; `state.settled` once it has ended. */
const outcomeOf = (placement: Promise<unknown>) => {
  const state = { settled: false };
  const answer = placement
    .catch((error: unknown) => error)
    .finally(() => {
      state.settled = true;
    });
  return { state, answer };
};

/** The answer of a duplicate given an hour to wait: it has one within the test only if something woke it. */
const woken = async ({ state, answer }: ReturnType<typeof outcomeOf>) => {
  await waitFor(() => Promise.resolve(state.settled), (settled) => settled);
  return answer;
};

/** The 502 of an order whose outcome is unknown, as the HTTP answer or as the service's error. */
const expectUnconfirmed = (answer: unknown) => {
  const { message } = unconfirmedError();
  if (answer instanceof AppError) {
    expect({ status: answer.status, code: answer.code, message: answer.message }).toEqual({ status: 502, code: 'BROKER_UNAVAILABLE', message });
    return;
  }
  const http = answer as Pick<HttpResult, 'status' | 'body' | 'text'>;
  expect(http.status, http.text).toBe(502);
  expect(http.body).toMatchObject({ code: 'BROKER_UNAVAILABLE', message });
};

/** A few requests to the server: time in which a duplicate that polled would read the order. */
const someRoundTrips = async (server: TestServer) => {
  for (let n = 0; n < 5; n += 1) expect((await server.http('GET', '/health')).status).toBe(200);
};

/**
 * Lets the held original through and checks both answers: the original accepted, the copy the
 * same order (one at the broker). Answers how often `db` read the order from the release on.
 */
const releaseAndAnswer = async (run: { held: { release: () => void }; original: Promise<Pick<HttpResult, 'status' | 'body' | 'text'>>; duplicate: Promise<HttpResult>; alpaca: FakeAlpaca; keyId: string; db: Db; clientOrderId: string; }) => {
  const { clientOrderId } = run;
  const readsWhileHeld = readsOf(run.db, clientOrderId);
  run.held.release();
  const [first, copy] = await Promise.all([run.original, run.duplicate]);
  expect(first.status, first.text).toBe(201);
  expect(first.body).toMatchObject({ client_order_id: clientOrderId, status: 'accepted' });
  expect(copy.status, copy.text).toBe(201);
  expect(copy.body).toMatchObject({ client_order_id: clientOrderId, broker_order_id: first.body.broker_order_id, qty: 1, limit_price: 150 });
  // A replay answers the order as it stands: the broker's stream may have made it open since.
  expect(['accepted', 'open']).toContain(copy.body.status);
  expect(run.alpaca.books.listOrders(run.keyId, { status: 'all', nested: false }).filter((placed) => placed.client_order_id === clientOrderId)).toHaveLength(1);
  return readsOf(run.db, clientOrderId) - readsWhileHeld;
};

describe('a duplicate while its original is held at the broker, on one instance', () => {
  const key = newKey();
  const otherKey = newKey();
  const thirdKey = newKey();
  let alpaca: FakeAlpaca;
  let server: TestServer;
  beforeAll(async () => {
    alpaca = await startFakeAlpaca({ accounts: [key, otherKey, thirdKey].map((account) => ({ ...account, cash: '100000' })), prices: { AAPL: '200' } });
    server = await startTestServer(realEnv(alpaca));
  });
  afterAll(async () => {
    await server?.stop();
    await alpaca?.close();
  });

  it('placed by the same order service: answers the original’s result once the broker answers it, and reads nothing meanwhile', async () => {
    const user = await trader(server, alpaca, key);
    const held = await holdNextPlacement(server, user);
    const placeCalls = vi.spyOn(server.services.orders, 'place');
    const original = place(server, user, 'dup-held-1');
    await held.reachedBroker();
    const duplicate = place(server, user, 'dup-held-1');
    await waitFor(() => Promise.resolve(placeCalls.mock.calls.length), (calls) => calls === 2);
    const readsWhileHeld = readsOf(server.services.db, 'dup-held-1');
    await someRoundTrips(server);
    expect(readsOf(server.services.db, 'dup-held-1')).toBe(readsWhileHeld);
    // Once the original is answered, the copy runs as a replay: it reads the order once.
    expect(await releaseAndAnswer({ held, original, duplicate, alpaca, keyId: key.keyId, db: server.services.db, clientOrderId: 'dup-held-1' })).toBe(1);
    placeCalls.mockRestore();
  });

  /**
   * Another instance's order service, as far as this one's can tell: its own placements under
   * way, the same database and event bus (on PGlite the bus of the one process).
   */
  const serviceElsewhere = (replayWaitMs?: number) => {
    const { db, clock, config, logger, metrics, instruments, brokers, alerts, events } = server.services;
    return createOrders({ db, clock, config, logger, metrics, instruments, forUser: brokers.forUser, alerts, events, submissionFor: () => remoteSubmission(), replayWaitMs });
  };

  it('placed by another order service on the database: waits for the order’s event through the event bus, and reads the order only when woken', async () => {
    const { db, events } = server.services;
    const elsewhere = serviceElsewhere();
    const user = await trader(server, alpaca, otherKey);
    const held = await holdNextPlacement(server, user);
    const original = elsewhere.place({ user: { id: user.user.id }, request: ZPlaceOrderRequest.parse(order('dup-service-1')) }).then((body) => ({ status: 201, body, text: JSON.stringify(body) }));
    await held.reachedBroker();
    const duplicate = place(server, user, 'dup-service-1');
    await waitFor(() => Promise.resolve(events.subscriptionsOf(user.user.id)), (count) => count === 1);
    const readsWhileHeld = readsOf(db, 'dup-service-1');
    await someRoundTrips(server);
    expect(readsOf(db, 'dup-service-1')).toBe(readsWhileHeld);
    expect(await releaseAndAnswer({ held, original, duplicate, alpaca, keyId: otherKey.keyId, db, clientOrderId: 'dup-service-1' })).toBe(1);
    expect(events.subscriptionsOf(user.user.id)).toBe(0);
    await elsewhere.idle();
  });

  it('waiting at another order service while its original fails with the outcome unknown: woken by the mark’s signal, answers the same 502', async () => {
    const { db, events } = server.services;
    // The copy's service waits an hour for an answer: only a wake-up answers it within the test.
    const elsewhere = serviceElsewhere(HOUR_MS);
    const user = await trader(server, alpaca, thirdKey);
    const held = await holdNextPlacement(server, user);
    const original = place(server, user, 'dup-unconfirmed-1');
    await held.reachedBroker();
    const duplicate = outcomeOf(elsewhere.place({ user: { id: user.user.id }, request: ZPlaceOrderRequest.parse(order('dup-unconfirmed-1')) }));
    await waitFor(() => Promise.resolve(events.subscriptionsOf(user.user.id)), (count) => count === 1);
    const readsWhileHeld = readsOf(db, 'dup-unconfirmed-1');
    failNextPlacement(alpaca);
    held.release();
    expectUnconfirmed(await original);
    expectUnconfirmed(await woken(duplicate));
    // One wake-up, one read: the mark's signal (it writes no order event).
    expect(readsOf(db, 'dup-unconfirmed-1') - readsWhileHeld).toBe(1);
    expect(events.subscriptionsOf(user.user.id)).toBe(0);
    await elsewhere.idle();
  });
});

describe.skipIf(!onPostgres)('a duplicate at one instance while its original, at another, is held at the broker', () => {
  const key = newKey();
  const otherKey = newKey();
  let alpaca: FakeAlpaca;
  let a: TestServer;
  let b: TestServer;
  // Instances share their secrets through settings (a generated secret is one DATA_DIR's own).
  const shared = { AUTH_SECRET_KEY: 'k'.repeat(24) + 'shared-across-instances', ENCRYPTION_SALT: 'shared-salt-for-both-instances' };
  beforeAll(async () => {
    alpaca = await startFakeAlpaca({ accounts: [key, otherKey].map((account) => ({ ...account, cash: '100000' })), prices: { AAPL: '200' } });
    a = await startTestServer({ ...realEnv(alpaca), ...shared });
    // b's duplicates wait an hour: one that answers within the test was woken.
    b = await startTestServer({ ...realEnv(alpaca), ...shared }, { dataDir: tempDir(), databaseUrl: a.databaseUrl }, { replayWaitMs: HOUR_MS });
  });
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
    await alpaca?.close();
  });

  it('waits for the order’s event through the event bus and answers the original’s result, reading the order only when woken', async () => {
    const user = await trader(a, alpaca, key);
    const held = await holdNextPlacement(a, user);
    const original = place(a, user, 'dup-elsewhere-1');
    await held.reachedBroker();
    const duplicate = place(b, user, 'dup-elsewhere-1');
    // The duplicate found the order pending and listens for its events (nobody else listens for this user on b).
    await waitFor(() => Promise.resolve(b.services.events.subscriptionsOf(user.user.id)), (count) => count === 1);
    const readsWhileHeld = readsOf(b.services.db, 'dup-elsewhere-1');
    await someRoundTrips(b);
    expect(readsOf(b.services.db, 'dup-elsewhere-1')).toBe(readsWhileHeld);
    // Woken once by the acceptance's event: one read of the order.
    expect(await releaseAndAnswer({ held, original, duplicate, alpaca, keyId: key.keyId, db: b.services.db, clientOrderId: 'dup-elsewhere-1' })).toBe(1);
    // And it no longer listens.
    expect(b.services.events.subscriptionsOf(user.user.id)).toBe(0);
  });

  it('answers the original’s 502 when the original fails with its outcome unknown, woken by the mark’s signal from the other instance', async () => {
    const user = await trader(a, alpaca, otherKey);
    const held = await holdNextPlacement(a, user);
    const original = place(a, user, 'dup-unconfirmed-elsewhere-1');
    await held.reachedBroker();
    const duplicate = outcomeOf(place(b, user, 'dup-unconfirmed-elsewhere-1'));
    await waitFor(() => Promise.resolve(b.services.events.subscriptionsOf(user.user.id)), (count) => count === 1);
    const readsWhileHeld = readsOf(b.services.db, 'dup-unconfirmed-elsewhere-1');
    failNextPlacement(alpaca);
    held.release();
    expectUnconfirmed(await original);
    expectUnconfirmed(await woken(duplicate));
    // One wake-up, one read: the mark's signal (it writes no order event).
    expect(readsOf(b.services.db, 'dup-unconfirmed-elsewhere-1') - readsWhileHeld).toBe(1);
    expect(b.services.events.subscriptionsOf(user.user.id)).toBe(0);
  });
});
