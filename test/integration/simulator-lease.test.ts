// The price walk and the matching of resting orders run in one instance at a time, under a lease
// in Postgres: two simulators on one database, driven round by round on a manual clock, and the
// loop itself on its timer.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimulator, findLease, type Simulator, type SimulatorOptions } from '../../server/brokers/simulator/index.ts';
import { manualClock } from '../../server/clock.ts';
import { simPrices } from '../../server/db/schema/index.ts';
import { newUser } from '../support/factories.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

const clock = manualClock('2026-03-10T15:00:00.000Z');
const TTL_MS = 10_000;
let server: TestServer;
const simulators: Simulator[] = [];

beforeAll(async () => {
  server = await startTestServer({ SIM_TICK_INTERVAL_MS: '0' }, undefined, { clock });
});
afterAll(async () => {
  for (const sim of simulators) await sim.stop();
  await server?.stop();
});

const instance = async (instanceId: string, options: Partial<SimulatorOptions> = {}) => {
  const sim = await createSimulator({
    db: server.services.db,
    clock,
    logger: server.services.logger,
    changes: server.services.changes,
    initialCash: { crypto: '100000', us_equity: '100000', kr_equity: '100000000' },
    tickIntervalMs: 1_000,
    liquidityLotsPerTick: 0,
    marketHours: 'enforce',
    leaseName: 'simulator-lease-test',
    leaseTtlMs: TTL_MS,
    instanceId,
    ...options,
  });
  simulators.push(sim);
  return sim;
};

describe('the lease', () => {
  it('is held by one instance at a time; a clean stop hands it over at once', async () => {
    const a = await instance('instance-a');
    const b = await instance('instance-b');
    expect(await a.runLeased()).toBe(true);
    expect(await b.runLeased()).toBe(false);
    expect(await a.runLeased()).toBe(true);
    expect(await findLease(server.services.db, 'simulator-lease-test')).toEqual({ holder: 'instance-a', expiresAt: new Date(clock.now().getTime() + TTL_MS) });
    await a.stop();
    expect(await findLease(server.services.db, 'simulator-lease-test')).toBeUndefined();
    expect(await b.runLeased()).toBe(true);
    expect(b.holdsLease()).toBe(true);
    expect((await findLease(server.services.db, 'simulator-lease-test'))?.holder).toBe('instance-b');
  });

  it('is taken over when its holder dies (stops renewing) and the lease expires', async () => {
    const b = simulators.find((sim) => sim.instanceId === 'instance-b')!;
    const c = await instance('instance-c');
    expect(await c.runLeased()).toBe(false);
    clock.advance(TTL_MS - 1);
    expect(await c.runLeased()).toBe(false);
    clock.advance(1);
    // b said nothing for a whole TTL: c takes over, and b finds it lost.
    expect(await c.runLeased()).toBe(true);
    expect(await b.runLeased()).toBe(false);
    expect(b.holdsLease()).toBe(false);
    expect((await findLease(server.services.db, 'simulator-lease-test'))?.holder).toBe('instance-c');
    await c.stop();
  });

  it('runs the walk and the matching on its timer while held', async () => {
    const { user } = await newUser(server, { prefix: 'sim_lease' });
    const walker = await instance('instance-walker', { tickIntervalMs: 20, leaseName: 'simulator-walk-test' });
    const broker = walker.brokerFor({ userId: user.id, assetClass: 'crypto', mode: 'paper' });
    await walker.setPrice({ assetClass: 'crypto', symbol: 'SOL/USDT', price: '140' });
    const resting = await broker.placeOrder({ clientOrderId: 'walk-1', symbol: 'SOL/USDT', side: 'buy', qty: '1', orderType: 'limit', timeInForce: 'gtc', limitPrice: '130' });
    // Handing the symbol to the walk: no operator price, the last tick far under the limit.
    await walker.setPrice({ assetClass: 'crypto', symbol: 'SOL/USDT', price: null });
    await server.services.db.update(simPrices).set({ tickPrice: '120' }).where(eq(simPrices.symbol, 'SOL/USDT'));
    walker.start();
    const filled = await waitFor(() => broker.getOrder({ brokerOrderId: resting.brokerOrderId }), (order) => order?.status === 'filled');
    expect(Number(filled!.avgFillPrice)).toBeLessThan(130);
    // The walk moved the price off the tick it started from, on the grid.
    const price = await waitFor(() => walker.priceOf({ assetClass: 'crypto', symbol: 'SOL/USDT' }), (value) => value !== '120');
    expect(price).toMatch(/^\d+(\.\d{1,2})?$/);
    expect(walker.holdsLease()).toBe(true);
    await walker.stop();
    expect(await findLease(server.services.db, 'simulator-walk-test')).toBeUndefined();
  });
});
