// Subscriptions: the one source of real-time events. /ws/equity/orders and /ws/live forward
// these as plain JSON frames; /trpc over WebSocket serves them to typed clients, resumable with
// tracked ids. Each subscribes first (with any backfill), then sends what comes first, then streams.
import { tracked } from '@trpc/server';
import { ZEventsInput, type THelloFrame, type TLiveFrame, type TOrderEventFrame } from '../../contracts/events.ts';
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
      for await (const event of stream) {
        const eventId = String(event.id);
        yield tracked(eventId, { ...event.frame, event_id: eventId } as TOrderEventFrame);
      }
    } finally {
      stream.close();
    }
  }),

  /** The user's trades (and, once the bot runs, its signals and status). */
  live: authedProcedure.input(ZEventsInput).subscription(async function* ({ ctx, input, signal }) {
    const stream = await openEventStream(ctx.events, { userId: ctx.user.id, channel: 'live', afterId: afterIdOf(input), signal });
    try {
      for await (const event of stream) {
        const eventId = String(event.id);
        yield tracked(eventId, { ...event.frame, event_id: eventId } as TLiveFrame);
      }
    } finally {
      stream.close();
    }
  }),
});
