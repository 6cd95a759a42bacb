// The order emulator across instances (DESIGN §6 "Advanced orders"; on PostgreSQL): a trigger
// placed through an instance that does not hold the account's lease is watched by the one that
// does, woken by a signal rather than by its own look (which both instances here make only every
// ten minutes, so that nothing but the signal can start the watch); a cancel through the other
// instance ends the watch's quote stream.
import { rmSync } from 'node:fs';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orders } from '../../server/db/schema/index.ts';
import { startFakeKis, type FakeKis } from '../../server/fakes/kis.ts';
import { newUser, type FactoryUser } from '../support/factories.ts';
import { kisKeyBody, kisRealModeEnv, newKisKey } from '../support/kis-keys.ts';
import { startTestServer, tempDir, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

const kisKey = newKisKey('inst', '50000003');
const SYMBOL = '005930';
const env = (kisUrl: string) => ({
  ...kisRealModeEnv(kisUrl),
  // Instances share their secrets through settings (a generated secret is one DATA_DIR's own).
  AUTH_SECRET_KEY: 'k'.repeat(24) + 'shared-across-instances',
  ENCRYPTION_SALT: 'shared-salt-for-both-instances',
});
/** Only a signal wakes an idle watch within a test's time. */
const TEN_MINUTES = 600_000;

describe.skipIf(!process.env.DATABASE_URL)('emulated triggers on two instances of one database', () => {
  let kis: FakeKis;
  let a: TestServer;
  let b: TestServer;
  let user: FactoryUser;
  /** The instance that holds the account's lease (its events and its triggers' watch), and the other. */
  let holder: TestServer;
  let other: TestServer;

  beforeAll(async () => {
    kis = await startFakeKis({ mode: 'paper', accounts: [{ ...kisKey, cash: '100000000' }], prices: { [SYMBOL]: '96500' } });
    a = await startTestServer(env(kis.url), undefined, { triggerIdleReloadMs: TEN_MINUTES });
    b = await startTestServer(env(kis.url), { dataDir: tempDir(), databaseUrl: a.databaseUrl }, { triggerIdleReloadMs: TEN_MINUTES });
    user = await newUser(a, { prefix: 'emu_inst' });
  });
  afterAll(async () => {
    await b?.stop();
    if (b) rmSync(b.dataDir, { recursive: true, force: true });
    await a?.stop();
    await kis?.close();
  });

  const call = (server: TestServer, method: string, path: string, body?: unknown) => server.http(method, path, { token: user.tokens.access_token, ...(body === undefined ? {} : { body }) });
  const orderRow = async (clientOrderId: string) => (await a.services.db.select().from(orders).where(and(eq(orders.userId, user.user.id), eq(orders.clientOrderId, clientOrderId))))[0];
  const watchedSymbols = () => Promise.resolve(kis.quotes.sessions().flat());

  it('holds the account on one instance, with a position to sell', async () => {
    const created = await call(a, 'POST', '/api/exchange-keys', kisKeyBody(kisKey, kis.url));
    expect(created.status, created.text).toBe(201);
    const holders = await waitFor(
      () => Promise.resolve([a, b].filter((server) => (server.services.brokerEvents?.consuming() ?? []).includes(created.body.id))),
      (found) => found.length === 1,
    );
    holder = holders[0]!;
    other = holder === a ? b : a;
    const bought = await call(holder, 'POST', '/api/equity/orders', { asset_class: 'kr_equity', symbol: SYMBOL, side: 'buy', qty: 3, order_type: 'market', client_order_id: 'inst-buy-1' });
    expect(bought.status, bought.text).toBe(201);
    await waitFor(
      () => orderRow('inst-buy-1'),
      (row) => row?.status === 'filled',
    );
    expect(await watchedSymbols()).not.toContain(SYMBOL);
  });

  it('watches a trigger placed through the other instance at once, and sells through its stop', async () => {
    const placed = await call(other, 'POST', '/api/equity/orders', { asset_class: 'kr_equity', symbol: SYMBOL, side: 'sell', qty: 2, order_type: 'trailing_stop', trail_price: 1000, time_in_force: 'gtc', client_order_id: 'inst-trail-1' });
    expect(placed.status, placed.text).toBe(201);
    expect(placed.body).toMatchObject({ stop_price: 95500, metadata: { emulated: true } });
    // The holder's watch was idle, with ten minutes to its next look: the signal woke it.
    await waitFor(watchedSymbols, (symbols) => symbols.includes(SYMBOL));
    // Sent until it is seen: a watch whose set of triggers changed opens a new quote stream.
    const filled = await waitFor(
      async () => {
        kis.setPrice(SYMBOL, '95400');
        return orderRow('inst-trail-1');
      },
      (row) => row?.status === 'filled',
    );
    expect(filled).toMatchObject({ filledQty: '2', avgFillPrice: '95400' });
  });

  it('stops watching when the other instance cancels the account’s last trigger', async () => {
    const placed = await call(other, 'POST', '/api/equity/orders', { asset_class: 'kr_equity', symbol: SYMBOL, side: 'sell', qty: 1, order_type: 'trailing_stop', trail_price: 5000, time_in_force: 'gtc', client_order_id: 'inst-trail-2' });
    expect(placed.status, placed.text).toBe(201);
    await waitFor(watchedSymbols, (symbols) => symbols.includes(SYMBOL));
    const canceled = await call(other, 'DELETE', `/api/equity/orders/${placed.body.broker_order_id}?asset_class=kr_equity`);
    expect(canceled.status, canceled.text).toBe(204);
    // The watch reads its triggers again (at the signal, or at its next look while it watches): none left, so its quote stream ends.
    await waitFor(watchedSymbols, (symbols) => !symbols.includes(SYMBOL));
  });
});
