// The two event feeds, the one source of what a user's real-time clients receive. A feed pushes
// frames to `send`: the WebSocket channels send each straight to the socket, and the tRPC
// subscriptions (events.orders, events.live) read them as an async iterable (feedIterable).
// Each subscribes first (with any backfill), then sends what comes first, then streams until the
// returned stop is called. What the live feeds of one user read to follow ticks is shared.
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

/** What the live feed reads to know which ticks a user follows. */
export interface WatchedSources {
  orders: Pick<Orders, 'watchedSymbols'>;
  bots?: Pick<Bots, 'watchedSymbols'> | undefined;
}

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

/**
 * What one user follows, kept once per user in this instance however many live feeds the user
 * has open: one subscription to its order events, one read of the watched symbols after each
 * (never two at once: events that come during a read cost one more read after it), and one tick
 * listener whose matches go to every feed of the user.
 */
interface Watcher {
  feeds: number;
  watched: Set<string>;
  /** The feeds' tick senders. */
  ticks: Set<(frame: TTickFrame) => void>;
  /** Subscribed, read once and listening to ticks; rejects when any of it failed. */
  ready: Promise<void>;
  /** The newest bot_status this watcher has read again for (every feed of the user sees each). */
  botStatusId: number;
  /** Reads the watched symbols again; an order event's own instrument is watched at once. */
  refresh: (event?: BusEvent) => void;
  stop: () => void;
}

/** `asset_class:symbol` of an order event's instrument, as the watched set keys it. */
const watchedKeyOf = ({ frame }: BusEvent): string | undefined =>
  frame.type === 'order_event' && typeof frame.asset_class === 'string' && typeof frame.symbol === 'string' ? `${frame.asset_class}:${frame.symbol}` : undefined;

export const createFeeds = ({ events, keys, orders, bots }: { events: EventBus; keys: Pick<ExchangeKeys, 'assetClassesOf'> } & WatchedSources): Feeds => {
  const watchers = new Map<number, Watcher>();

  const openWatcher = (user: { id: number }): Watcher => {
    const stops: StopFeed[] = [];
    let stopped = false;
    const hold = (stop: StopFeed) => {
      if (stopped) stop();
      else stops.push(stop);
    };
    /** What the user holds or has working orders in, and what its running bot trades. */
    const read = async () => {
      const [ordered, traded] = await Promise.all([orders.watchedSymbols({ user }), bots?.watchedSymbols({ user }) ?? new Set<string>()]);
      return new Set([...ordered, ...traded]);
    };
    let reading = false;
    let again = false;
    /** Symbols order events named while a read was under way: the read may have missed them. */
    let namedDuringRead = new Set<string>();
    /** Reads until no order event came during the last read; only the first read's failure is thrown. */
    const readWhileAsked = async (first: boolean) => {
      reading = true;
      try {
        do {
          again = false;
          namedDuringRead = new Set();
          try {
            const followed = await read();
            for (const key of namedDuringRead) followed.add(key);
            watcher.watched = followed;
          } catch (error) {
            if (first) throw error;
            // keep the last known set; the next order event tries again
          }
          first = false;
        } while (again && !stopped);
      } finally {
        reading = false;
      }
    };
    const watcher: Watcher = {
      feeds: 0,
      watched: new Set(),
      ticks: new Set(),
      ready: Promise.resolve(),
      botStatusId: 0,
      refresh: (event) => {
        // The event's instrument is followed at once, before the event reaches any socket: a
        // client that sees its fill and then the price move gets the tick, even while the read
        // that settles what the user follows (a sell may end a holding) is still under way.
        const key = event ? watchedKeyOf(event) : undefined;
        if (key) {
          watcher.watched.add(key);
          if (reading) namedDuringRead.add(key);
        }
        if (reading) again = true;
        else void readWhileAsked(false);
      },
      stop: () => {
        stopped = true;
        for (const stop of stops.splice(0)) stop();
      },
    };
    watcher.ready = (async () => {
      hold(await events.subscribe({ userId: user.id, channel: 'orders', listener: watcher.refresh }));
      await readWhileAsked(true);
      hold(
        events.onTick((tick) => {
          if (!watcher.watched.has(`${tick.assetClass}:${tick.symbol}`)) return;
          const frame: TTickFrame = { type: 'tick', symbol: tick.symbol, asset_class: tick.assetClass, last: Number(tick.price), ts: tick.at };
          for (const send of watcher.ticks) send(frame);
        }),
      );
    })();
    // A watcher that failed to start is dropped at once: the next feed of the user starts afresh.
    watcher.ready.catch(() => {
      if (watchers.get(user.id) === watcher) watchers.delete(user.id);
      watcher.stop();
    });
    return watcher;
  };

  const acquire = (user: { id: number }): Watcher => {
    let watcher = watchers.get(user.id);
    if (!watcher) watchers.set(user.id, (watcher = openWatcher(user)));
    watcher.feeds += 1;
    return watcher;
  };

  const release = (user: { id: number }, watcher: Watcher) => {
    watcher.feeds -= 1;
    if (watcher.feeds > 0) return;
    if (watchers.get(user.id) === watcher) watchers.delete(user.id);
    watcher.stop();
  };

  return {
    orders: (options) => startOrderFeed({ ...options, events, keys }),
    live: async ({ user, afterId, send }) => {
      const watcher = acquire(user);
      const sendTick = (frame: TTickFrame) => send(frame);
      let stopLive: StopFeed | undefined;
      let stopped = false;
      const stop = () => {
        if (stopped) return;
        stopped = true;
        stopLive?.();
        watcher.ticks.delete(sendTick);
        release(user, watcher);
      };
      try {
        await watcher.ready;
        watcher.ticks.add(sendTick);
        stopLive = await events.subscribe({
          userId: user.id,
          channel: 'live',
          afterId,
          listener: (event) => {
            // The bot started or stopped: the symbols it trades join or leave the ticks (read once for all the user's feeds).
            if (event.frame.type === 'bot_status' && event.id > watcher.botStatusId) {
              watcher.botStatusId = event.id;
              watcher.refresh();
            }
            send(withEventId(event) as TLiveFrame);
          },
        });
      } catch (error) {
        stop();
        throw error;
      }
      return stop;
    },
  };
};
