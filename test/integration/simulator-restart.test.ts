// The simulator's books live in the database: an order resting when the service stops is still
// resting after a restart on the same database, and fills when the price comes.
import { and, eq } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import type { TBrokerEvent } from '../../contracts/brokers.ts';
import { createSimulator, type Simulator } from '../../server/brokers/simulator/index.ts';
import { simFills, simOrders } from '../../server/db/schema/index.ts';
import { newUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

const env = { SIM_TICK_INTERVAL_MS: '0' };
const simulatorOf = (server: TestServer) =>
  createSimulator({
    db: server.services.db,
    clock: server.services.clock,
    logger: server.services.logger,
    changes: server.services.changes,
    initialCash: { crypto: '100000', us_equity: '100000', kr_equity: '100000000' },
    tickIntervalMs: 0,
    liquidityLotsPerTick: 0,
    marketHours: 'enforce',
  });

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe('restart', () => {
  it('keeps a resting order across a restart; the new instance fills it when the price crosses', async () => {
    const first = await startTestServer(env);
    // Closing is idempotent; this drops the database and the temporary DATA_DIR at the very end.
    cleanups.push(() => first.stop());
    let sim: Simulator = await simulatorOf(first);
    const { user } = await newUser(first, { prefix: 'sim_restart' });
    const account = { userId: user.id, assetClass: 'crypto', mode: 'paper' } as const;
    await sim.setPrice({ assetClass: 'crypto', symbol: 'ETH/USDT', price: '3000' });
    const resting = await sim.brokerFor(account).placeOrder({
      clientOrderId: 'restart-1',
      symbol: 'ETH/USDT',
      side: 'buy',
      qty: '0.5',
      orderType: 'limit',
      timeInForce: 'gtc',
      limitPrice: '2900',
    });
    await waitFor(async () => (await sim.brokerFor(account).getOrder({ brokerOrderId: resting.brokerOrderId }))?.status, (status) => status === 'open');
    await sim.stop();
    await first.close();

    const second = await startTestServer(env, { dataDir: first.dataDir, databaseUrl: first.databaseUrl });
    cleanups.push(() => second.stop());
    // The server's own simulator runs one matching round as it starts: let it end first, so the
    // price below is matched by this test's simulator alone, whose events the test reads.
    await second.services.simulator.idle();
    sim = await simulatorOf(second);
    cleanups.push(() => sim.stop());
    const broker = sim.brokerFor(account);
    expect(await broker.listOpenOrders()).toMatchObject([{ brokerOrderId: resting.brokerOrderId, clientOrderId: 'restart-1', status: 'open', qty: '0.5', limitPrice: '2900' }]);
    // The operator's price survived too.
    expect(await sim.priceOf({ assetClass: 'crypto', symbol: 'ETH/USDT' })).toBe('3000');

    const events: TBrokerEvent[] = [];
    const controller = new AbortController();
    cleanups.push(() => Promise.resolve(controller.abort()));
    const stream = broker.events(controller.signal);
    void (async () => {
      for await (const event of stream) events.push(event);
    })();
    await sim.setPrice({ assetClass: 'crypto', symbol: 'ETH/USDT', price: '2899.99' });
    const fill = await waitFor(() => Promise.resolve(events.find((event) => event.type === 'fill')), (found) => found !== undefined);
    expect(fill).toMatchObject({ broker_order_id: resting.brokerOrderId, status: 'filled', filled_qty: '0.5' });
    const { db } = second.services;
    expect((await db.select().from(simOrders).where(and(eq(simOrders.userId, user.id), eq(simOrders.id, resting.brokerOrderId))))[0]?.status).toBe('filled');
    expect(await db.select().from(simFills).where(and(eq(simFills.userId, user.id), eq(simFills.orderId, resting.brokerOrderId)))).toHaveLength(1);
    expect((await broker.positions())[0]).toMatchObject({ symbol: 'ETH/USDT', qty: '0.5' });
  });
});
