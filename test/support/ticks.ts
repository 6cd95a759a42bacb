// Waiting for a price tick the way the bot receives it: ticks travel through the database's
// notifications (LISTEN/NOTIFY on PostgreSQL), after the price route has answered, so on a busy
// machine they arrive later than the answer. A listener registered after the bot's is called after
// it: once it has heard the tick, the bot has queued its work on it (which botRunner.idle() awaits).
import type { TestServer } from './server.ts';

/** Resolves once this instance's event bus delivers a tick of `symbol` at `price`; call it before setting the price. */
export const tickHeard = (server: TestServer, symbol: string, price: number): Promise<void> =>
  new Promise<void>((resolve) => {
    const off = server.services.events.onTick((tick) => {
      if (tick.symbol !== symbol || Number(tick.price) !== price) return;
      off();
      resolve();
    });
  });
