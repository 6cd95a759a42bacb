// Subscriptions: the one source of real-time events. /ws/equity/orders and /ws/live forward
// these as plain JSON frames; /trpc over WebSocket serves them to typed clients, resumable with
// tracked ids. Each subscribes first (with any backfill), then sends what comes first, then streams.
import { tracked } from '@trpc/server';
import { ZEventsInput, type THelloFrame, type TLiveFrame, type TOrderEventFrame, type TTickFrame } from '../../contracts/events.ts';
import { openEventStream } from '../events/stream.ts';
import { authedProcedure, router } from '../trpc/init.ts';

const afterIdOf = (input: { lastEventId?: string | null | undefined } | undefined) => (input?.lastEventId ? Number(input.lastEventId) : undefined);

export const eventsRouter = router({
  /** The user's order events, after a hello naming the asset classes it can trade. */
  orders: authedProcedure.input(ZEventsInput).subscription(async function* ({ ctx, input, signal }) {
    const stream = await openEventStream(ctx.events, { userId: ctx.user.id, channel: 'orders', afterId: afterIdOf(input), signal });
    try {
      const hello: THelloFrame = { type: 'hello', asset_classes: await ctx.keys.assetClassesOf({ user: ctx.user }), user_id: ctx.user.id };
      yield hello;
      for await (const { id, frame } of stream) {
        const eventId = String(id);
        yield tracked(eventId, { ...frame, event_id: eventId } as TOrderEventFrame);
      }
    } finally {
      stream.close();
    }
  }),

  /**
   * The user's trades (and, once the bot runs, its signals and status), and the ticks of the
   * instruments it follows: held, or with working orders (read again after each order event).
   */
  live: authedProcedure.input(ZEventsInput).subscription(async function* ({ ctx, input, signal }) {
    const stream = await openEventStream(ctx.events, { userId: ctx.user.id, channel: 'live', afterId: afterIdOf(input), signal });
    let watched = new Set<string>();
    const refresh = () => {
      ctx.orders.watchedSymbols({ user: ctx.user }).then(
        (next) => (watched = next),
        () => undefined, // keep the last known set; the next order event tries again
      );
    };
    const stopOrders = await ctx.events.subscribe({ userId: ctx.user.id, channel: 'orders', listener: refresh });
    const stopTicks = ctx.events.onTick((tick) => {
      if (!watched.has(`${tick.assetClass}:${tick.symbol}`)) return;
      const frame: TTickFrame = { type: 'tick', symbol: tick.symbol, asset_class: tick.assetClass, last: Number(tick.price), ts: tick.at };
      stream.inject(frame);
    });
    try {
      watched = await ctx.orders.watchedSymbols({ user: ctx.user });
      for await (const { id, frame } of stream) {
        if (id === undefined) {
          yield frame as TLiveFrame;
          continue;
        }
        const eventId = String(id);
        yield tracked(eventId, { ...frame, event_id: eventId } as TLiveFrame);
      }
    } finally {
      stopTicks();
      stopOrders();
      stream.close();
    }
  }),
});
