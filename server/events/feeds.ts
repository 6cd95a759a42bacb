// The two event feeds, the one source of what a user's real-time clients receive. A feed pushes
// frames to `send`: the WebSocket channels send each straight to the socket, and the tRPC
// subscriptions (events.orders, events.live) read them as an async iterable (feedIterable).
// Each subscribes first (with any backfill), then sends what comes first, then streams until the
// returned stop is called.
import type { THelloFrame, TLiveFrame, TOrderEventFrame, TTickFrame } from '../../contracts/events.ts';
import type { Bots } from '../bot/bot.ts';
import type { ExchangeKeys } from '../keys/keys.ts';
import type { Orders } from '../orders/orders.ts';
import type { BusEvent, EventBus } from './bus.ts';

export interface FeedOptions<TFrame> {
  events: EventBus;
  user: { id: number };
  /** Resume after this event id (the client's last one). */
  afterId?: number | undefined;
  send: (frame: TFrame) => void;
}

/** Ends a feed: its subscriptions are dropped. */
export type StopFeed = () => void;

/** The per-user feeds of one instance, shared by the WebSocket channels and the tRPC subscriptions. */
export interface Feeds {
  /** A hello naming the asset classes the user can trade, then the user's order events. */
  orders(options: Omit<FeedOptions<THelloFrame | TOrderEventFrame>, 'events'>): Promise<StopFeed>;
  /**
   * The user's trades, its bot's signals and status, its reports' progress, and the ticks of the
   * instruments it follows: held, with working orders, or traded by its running bot.
   */
  live(options: Omit<FeedOptions<TLiveFrame>, 'events'>): Promise<StopFeed>;
}

const withEventId = (event: BusEvent) => ({ ...event.frame, event_id: String(event.id) });

/** A hello naming the asset classes the user can trade, then the user's order events. */
export const startOrderFeed = async ({ events, keys, user, afterId, send }: FeedOptions<THelloFrame | TOrderEventFrame> & { keys: Pick<ExchangeKeys, 'assetClassesOf'> }): Promise<StopFeed> => {
  // Events that arrive before the hello is sent wait for it.
  let waiting: TOrderEventFrame[] | undefined = [];
  const stop = await events.subscribe({
    userId: user.id,
    channel: 'orders',
    afterId,
    listener: (event) => {
      const frame = withEventId(event) as TOrderEventFrame;
      if (waiting) waiting.push(frame);
      else send(frame);
    },
  });
  try {
    send({ type: 'hello', asset_classes: await keys.assetClassesOf({ user }), user_id: user.id });
  } catch (error) {
    stop();
    throw error;
  }
  const held = waiting;
  waiting = undefined;
  for (const frame of held) send(frame);
  return stop;
};

/**
 * The user's trades, its bot's signals and status, and the ticks of the instruments it follows:
 * held, with working orders (read again after each order event), or traded by its running bot
 * (read again at each bot_status).
 */
export const startLiveFeed = async ({
  events,
  orders,
  bots,
  user,
  afterId,
  send,
}: FeedOptions<TLiveFrame> & { orders: Pick<Orders, 'watchedSymbols'>; bots?: Pick<Bots, 'watchedSymbols'> | undefined }): Promise<StopFeed> => {
  let watched = new Set<string>();
  /** What the user holds or has working orders in, and what its running bot trades. */
  const readWatched = async () => {
    const [ordered, traded] = await Promise.all([orders.watchedSymbols({ user }), bots?.watchedSymbols({ user }) ?? new Set<string>()]);
    return new Set([...ordered, ...traded]);
  };
  const refresh = () => {
    readWatched().then(
      (next) => (watched = next),
      () => undefined, // keep the last known set; the next order event tries again
    );
  };
  const stops: StopFeed[] = [];
  const stopAll = () => {
    for (const stop of stops.splice(0)) stop();
  };
  try {
    stops.push(await events.subscribe({ userId: user.id, channel: 'orders', listener: refresh }));
    watched = await readWatched();
    stops.push(
      events.onTick((tick) => {
        if (!watched.has(`${tick.assetClass}:${tick.symbol}`)) return;
        const frame: TTickFrame = { type: 'tick', symbol: tick.symbol, asset_class: tick.assetClass, last: Number(tick.price), ts: tick.at };
        send(frame);
      }),
    );
    stops.push(
      await events.subscribe({
        userId: user.id,
        channel: 'live',
        afterId,
        listener: (event) => {
          // The bot started or stopped: the symbols it trades join or leave the ticks.
          if (event.frame.type === 'bot_status') refresh();
          send(withEventId(event) as TLiveFrame);
        },
      }),
    );
  } catch (error) {
    stopAll();
    throw error;
  }
  return stopAll;
};
