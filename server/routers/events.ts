// Subscriptions for typed clients over /trpc's WebSocket: the event feeds (server/events/feeds.ts,
// which the /ws channels run too), with each durable frame tracked by its event id so tRPC's
// client resumes after a reconnect by itself.
import { tracked } from '@trpc/server';
import { ZEventsInput, type THelloFrame, type TLiveFrame, type TOrderEventFrame } from '../../contracts/events.ts';
import { startLiveFeed, startOrderFeed } from '../events/feeds.ts';
import { feedIterable } from '../events/stream.ts';
import { authedProcedure, router } from '../trpc/init.ts';

const afterIdOf = (input: { lastEventId?: string | null | undefined } | undefined) => (input?.lastEventId ? Number(input.lastEventId) : undefined);

/** A frame with an event_id goes out tracked by it; a hello or a tick as it is. */
async function* withTracking<T extends { type: string }>(frames: AsyncGenerator<T>) {
  for await (const frame of frames) {
    const eventId = 'event_id' in frame && typeof frame.event_id === 'string' ? frame.event_id : undefined;
    yield eventId === undefined ? frame : tracked(eventId, frame);
  }
}

export const eventsRouter = router({
  /** A hello naming the asset classes the user can trade, then the user's order events. */
  orders: authedProcedure.input(ZEventsInput).subscription(({ ctx, input, signal }) =>
    withTracking(feedIterable<THelloFrame | TOrderEventFrame>((send) => startOrderFeed({ events: ctx.events, keys: ctx.keys, user: ctx.user, afterId: afterIdOf(input), send }), signal)),
  ),

  /** The user's trades, and ticks of the instruments it holds or has working orders in. */
  live: authedProcedure.input(ZEventsInput).subscription(({ ctx, input, signal }) =>
    withTracking(feedIterable<TLiveFrame>((send) => startLiveFeed({ events: ctx.events, orders: ctx.orders, bots: ctx.bots, user: ctx.user, afterId: afterIdOf(input), send }), signal)),
  ),
});
