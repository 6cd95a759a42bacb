// A user's order rows and fill rows as the database holds them, by client order id, and a wait
// for a row's status: what a real-mode test checks the broker's events against.
import { and, eq } from 'drizzle-orm';
import { orderFills, orders } from '../../server/db/schema/index.ts';
import type { TestServer } from './server.ts';
import { waitFor } from './wait.ts';

export const orderRowsOf = (server: TestServer, userId: number) => {
  const row = async (clientOrderId: string) => (await server.services.db.select().from(orders).where(and(eq(orders.userId, userId), eq(orders.clientOrderId, clientOrderId))))[0];
  return {
    row,
    /** The order's fills, oldest first as written. */
    fills: (clientOrderId: string) => server.services.db.select().from(orderFills).where(and(eq(orderFills.userId, userId), eq(orderFills.clientOrderId, clientOrderId))),
    /** The row once it has the status (the safety net of wait.ts otherwise). */
    untilStatus: (clientOrderId: string, status: string) =>
      waitFor(
        () => row(clientOrderId),
        (found) => found?.status === status,
      ),
  };
};
