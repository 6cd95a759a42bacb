// A paper account driven through a test's days (reset-flows, portfolio-history): the service's
// work after an order or a price waited for, and an operator's price of BTC/USDT set through the API.
import { expect } from 'vitest';
import type { TestServer } from './server.ts';

/** Once the simulator, the order service and the kill switch have done what the last step started. */
export const tradingSettled = async (server: TestServer): Promise<void> => {
  await server.services.simulator.idle();
  await server.services.orders.idle();
  await new Promise((resolve) => setImmediate(resolve));
  await server.services.killSwitch.idle();
};

/** An operator's BTC/USDT price, in force once what it started has settled. */
export const setBtcPrice = async (server: TestServer, adminToken: string, price: number): Promise<void> => {
  const res = await server.http('POST', '/api/admin/sim/prices', { token: adminToken, body: { asset_class: 'crypto', symbol: 'BTC/USDT', price } });
  expect(res.status, res.text).toBe(200);
  await tradingSettled(server);
};
