// Subscriptions for typed clients over /trpc's WebSocket: the event feeds (server/events/feeds.ts,
// which the /ws channels run too), with each durable frame tracked by its event id so tRPC's
// client resumes after a reconnect by itself. Served on the socket only, where its rules hold
// (closed when the token's right to it ends, capped per socket); never as a stream over HTTP.
import { tracked } from '@trpc/server';
import { ZEventsInput, type THelloFrame, type TLiveFrame, type TOrderEventFrame } from '../../contracts/events.ts';
import { AppError } from '../errors.ts';
import type { StopFeed } from '../events/feeds.ts';
import { feedIterable, SlowConsumerError } from '../events/stream.ts';
import type { Context, SocketScope } from '../trpc/context.ts';
import { authedProcedure, router } from '../trpc/init.ts';

const afterIdOf = (input: { lastEventId?: string | null | undefined } | undefined) => (input?.lastEventId ? Number(input.lastEventId) : undefined);

/** A frame with an event_id goes out tracked by it; a hello or a tick as it is. */
async function* withTracking<T extends { type: string }>(frames: AsyncGenerator<T>) {
  for await (const frame of frames) {
    const eventId = 'event_id' in frame && typeof frame.event_id === 'string' ? frame.event_id : undefined;
    yield eventId === undefined ? frame : tracked(eventId, frame);
  }
}

/** The socket of the call, or a refusal: over HTTP a subscription would outlive every rule of the socket. */
const socketOf = (ctx: Context): SocketScope => {
  if (!ctx.socket) throw new AppError('METHOD_NOT_ALLOWED', "Subscriptions are served over /trpc's WebSocket only");
  return ctx.socket;
};

/**
 * Frames that give the socket's slot back when they end (the slot also goes when the signal
 * aborts). A reader that fell too far behind them closes its socket (1013), as a full send buffer
 * does: the client reconnects and resumes, where an error would end its subscription.
 */
async function* holding<T>(socket: SocketScope, release: () => void, frames: AsyncGenerator<T>) {
  try {
    yield* frames;
  } catch (error) {
    if (!(error instanceof SlowConsumerError)) throw error;
    socket.tooSlow();
  } finally {
    release();
  }
}

/** Takes a slot of the socket at once (past the cap the subscription is refused before it starts), then runs the feed. */
const subscription = <T extends { type: string }>(ctx: Context, signal: AbortSignal | undefined, start: (feeds: SocketScope['feeds'], send: (frame: T) => void) => Promise<StopFeed>) => {
  const socket = socketOf(ctx);
  const release = socket.holdSubscription(signal);
  return holding(socket, release, withTracking(feedIterable<T>((send) => start(socket.feeds, send), { maxQueued: socket.maxQueuedFrames, signal })));
};

export const eventsRouter = router({
  /** A hello naming the asset classes the user can trade, then the user's order events. */
  orders: authedProcedure
    .meta({ apiKeyScope: 'read' })
    .input(ZEventsInput)
    .subscription(({ ctx, input, signal }) => subscription<THelloFrame | TOrderEventFrame>(ctx, signal, (feeds, send) => feeds.orders({ user: ctx.user, afterId: afterIdOf(input), send }))),

  /** The user's trades, and ticks of the instruments it holds or has working orders in. */
  live: authedProcedure
    .meta({ apiKeyScope: 'read' })
    .input(ZEventsInput)
    .subscription(({ ctx, input, signal }) => subscription<TLiveFrame>(ctx, signal, (feeds, send) => feeds.live({ user: ctx.user, afterId: afterIdOf(input), send }))),
});
