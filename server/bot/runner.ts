// Runs the users' bots: each running bot in one instance at a time, under its own lease in
// Postgres (`bot:<user id>`, renewed every sync round, taken over once its holder stops renewing).
// The holder builds the bot's bars from the price ticks every instance hears, and at each closed
// bar asks the strategy (decide.ts). A buy or sell is recorded first, in one transaction with the
// closed bar, the `signal` frame and its audit record, under a fixed client order id derived from
// the run, the symbol and the bar; then it is placed through the order service's five gates. A
// placement that did not happen (a crash, a closed market, a broker down) is tried again with the
// same id while its bar is the newest, so it is placed at most once.
import type { TAssetClass } from '../../contracts/common.ts';
import type { TTradingMode } from '../../contracts/brokers.ts';
import { recordAudit } from '../audit/log.ts';
import { findStrategy } from '../backtest/strategies/index.ts';
import type { StrategyRun } from '../backtest/types.ts';
import { ExactDecimal } from '../decimal.ts';
import { releaseLease, takeLease } from '../db/leases.ts';
import type { Broker } from '../brokers/types.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/client.ts';
import type { BotRow, InstrumentRow } from '../db/schema/index.ts';
import { AppError } from '../errors.ts';
import type { EventBus, PriceTick } from '../events/bus.ts';
import type { Instruments } from '../instruments/instruments.ts';
import { readRecentBars } from '../marketdata/queries.ts';
import type { Logger } from '../observability/logger.ts';
import type { Orders } from '../orders/orders.ts';
import { barDateOf, createBarBuilder, toBars, type BarBuilder, type BuiltBar } from './bars.ts';
import { buyQuantity, decideAtClose } from './decide.ts';
import { botBookQty, findBot, insertBotBar, insertBotOrder, listRunningBots, listUnplacedBotOrders, readBotBars } from './queries.ts';

export interface BotRunnerOptions {
  db: Db;
  clock: Clock;
  config: Config;
  logger: Logger;
  events: Pick<EventBus, 'append' | 'wake' | 'onTick'>;
  orders: Pick<Orders, 'place'>;
  instruments: Pick<Instruments, 'find'>;
  forUser: (account: { userId: number; assetClass: TAssetClass; mode: TTradingMode }) => Promise<Broker>;
  /** The service-wide halt: while it holds, bots keep their bars but signal and place nothing. */
  isHalted: () => boolean;
  /** This instance's holder id for the leases. */
  holder: string;
}

export interface BotRunner {
  /** One round: takes or renews the lease of every running bot, loads the ones won, drops the rest. */
  sync(): Promise<void>;
  /** A sync round now, if the runner is started (a start or stop made in this instance). */
  kick(): void;
  /** The users whose bots this instance runs now. */
  held(): number[];
  /** Resolves once the ticks received so far have been handled (tests, shutdown). */
  idle(): Promise<void>;
  start(): void;
  /** Stops the rounds and gives up every lease held. */
  stop(): Promise<void>;
}

interface SymbolState {
  instrument: InstrumentRow;
  builder: BarBuilder;
  history: BuiltBar[];
}

interface ActiveBot {
  row: BotRow;
  strategy: StrategyRun;
  size: number;
  symbols: Map<string, SymbolState>;
  /** The bot's work, one tick or retry at a time. */
  chain: Promise<void>;
}

const leaseName = (userId: number) => `bot:${userId}`;

/** `bot-<run>-<symbol>-<bar minute, base 36>-<b|s>`: at most 64 characters of the allowed set. */
const clientOrderIdOf = (runId: string, symbol: string, barStart: Date, side: 'buy' | 'sell') =>
  `bot-${runId}-${symbol.replace(/[^A-Za-z0-9]/g, '-')}-${Math.floor(barStart.getTime() / 60_000).toString(36)}-${side === 'buy' ? 'b' : 's'}`;

export const createBotRunner = ({ db, clock, config, logger: parentLogger, events, orders, instruments, forUser, isHalted, holder }: BotRunnerOptions): BotRunner => {
  const logger = parentLogger.child({ area: 'bot' });
  const active = new Map<number, ActiveBot>();
  /** When a client order id's placement may be tried again (retries of refused placements are spaced). */
  const retryAfter = new Map<string, number>();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const modeOf = (row: BotRow): TTradingMode => (row.liveMode ? 'live' : 'paper');

  /** The bot's history of one symbol: its own closed bars, after the stored daily bars for a daily bot. */
  const historyOf = async (row: BotRow, symbol: string): Promise<BuiltBar[]> => {
    const limit = config.BOT_HISTORY_BARS;
    const built = await readBotBars(db, { userId: row.userId, assetClass: row.assetClass, symbol, timeframe: row.timeframe, limit });
    if (row.timeframe === '1m') return built;
    // Daily bars up to yesterday (the exchange's date) seed the series; today's is being built.
    const today = barDateOf(row.assetClass, clock.now());
    const stored = (await readRecentBars(db, { assetClass: row.assetClass, symbol, limit: limit + 1 }))
      .filter((bar) => bar.date < today)
      .map((bar): BuiltBar => ({ start: new Date(`${bar.date}T00:00:00.000Z`), open: bar.open, high: bar.high, low: bar.low, close: bar.close }));
    const last = stored.at(-1)?.start.getTime() ?? Number.NEGATIVE_INFINITY;
    return [...stored, ...built.filter((bar) => bar.start.getTime() > last)].slice(-limit);
  };

  const load = async (row: BotRow): Promise<ActiveBot | undefined> => {
    const definition = findStrategy(row.strategyName);
    const params = definition?.params.safeParse(row.strategyParams);
    if (!definition || !params?.success) {
      logger.error({ userId: row.userId, strategy: row.strategyName }, 'the bot names a strategy or params this build does not accept; it is not run');
      return undefined;
    }
    const symbols = new Map<string, SymbolState>();
    for (const symbol of row.symbols) {
      const instrument = await instruments.find({ assetClass: row.assetClass, symbol });
      if (!instrument) continue;
      const history = await historyOf(row, symbol);
      symbols.set(symbol, { instrument, history, builder: createBarBuilder({ timeframe: row.timeframe, assetClass: row.assetClass, after: history.at(-1)?.start }) });
    }
    const size = typeof params.data.size === 'number' ? params.data.size : 1;
    return { row, strategy: definition.create(params.data), size, symbols, chain: Promise.resolve() };
  };

  /** Queues work on the bot's chain, so its ticks are handled one at a time, in order. */
  const enqueue = (bot: ActiveBot, work: () => Promise<void>) => {
    bot.chain = bot.chain.then(work).catch((error: unknown) => logger.error({ err: error, userId: bot.row.userId }, 'bot work failed'));
    return bot.chain;
  };

  /**
   * What the bot holds of the symbol: its own book (what its orders bought and sold since the
   * account's last reset), never more than the account holds (the user may have sold some by
   * hand). A position the user opened by hand is not the bot's: it neither sells it nor counts
   * as being in a position.
   */
  const heldQty = async (bot: ActiveBot, symbol: string) => {
    const { row } = bot;
    const broker = await forUser({ userId: row.userId, assetClass: row.assetClass, mode: modeOf(row) });
    const { account, positions } = await broker.snapshot({ symbol });
    const position = positions.find((held) => held.symbol === symbol);
    const book = await botBookQty(db, { userId: row.userId, assetClass: row.assetClass, symbol, live: row.liveMode, since: account.resetAt });
    return ExactDecimal.max(0, ExactDecimal.min(book, position?.qty ?? 0));
  };

  /** Places a recorded order through the five gates; a refusal is audited by the order service and left for a retry. */
  const place = async (bot: ActiveBot, order: { clientOrderId: string; symbol: string; side: 'buy' | 'sell'; qty: string }) => {
    const due = retryAfter.get(order.clientOrderId);
    if (due !== undefined && clock.now().getTime() < due) return;
    try {
      await orders.place({
        user: { id: bot.row.userId },
        request: {
          asset_class: bot.row.assetClass,
          symbol: order.symbol,
          side: order.side,
          qty: Number(order.qty),
          order_type: 'market',
          time_in_force: bot.row.assetClass === 'crypto' ? 'gtc' : 'day',
          client_order_id: order.clientOrderId,
          live_mode: bot.row.liveMode,
        },
        origin: { requestId: order.clientOrderId, address: 'bot' },
        source: 'bot',
      });
      retryAfter.delete(order.clientOrderId);
    } catch (error) {
      // Answered with the same code again on a replay: a rejected order is final; a refusal
      // before the broker left the id unused, and is tried again later while its bar is the newest.
      retryAfter.set(order.clientOrderId, clock.now().getTime() + config.BOT_RETRY_INTERVAL_MS);
      const code = error instanceof AppError ? error.code : 'INTERNAL_ERROR';
      logger.warn({ userId: bot.row.userId, clientOrderId: order.clientOrderId, code }, 'the bot’s order was not placed');
    }
  };

  /** At a closed bar: stores it and, when the strategy says buy or sell, records the signal; the order follows. */
  const onClosedBar = async (bot: ActiveBot, symbol: string, state: SymbolState, bar: BuiltBar, lastPrice: string) => {
    state.history.push(bar);
    if (state.history.length > config.BOT_HISTORY_BARS) state.history.splice(0, state.history.length - config.BOT_HISTORY_BARS);
    const { row } = bot;
    const key = { userId: row.userId, assetClass: row.assetClass, symbol, timeframe: row.timeframe };
    if (isHalted()) {
      await insertBotBar(db, key, bar);
      return;
    }
    const held = await heldQty(bot, symbol);
    const signal = decideAtClose(bot.strategy, toBars(state.history), held.gt(0));
    if (signal === 'hold') {
      await insertBotBar(db, key, bar);
      return;
    }
    let qty = held;
    if (signal === 'buy') {
      const broker = await forUser({ userId: row.userId, assetClass: row.assetClass, mode: modeOf(row) });
      const account = await broker.account();
      qty = buyQuantity({
        buyingPower: account.buyingPower,
        equity: account.equity,
        price: lastPrice,
        size: bot.size,
        defaultStopPct: config.RISK_DEFAULT_STOP_PCT,
        maxRiskPerTradePct: config.RISK_MAX_RISK_PER_TRADE_PCT,
        lotSize: state.instrument.lotSize,
        fractional: state.instrument.fractional,
      });
    }
    const side = signal;
    const clientOrderId = clientOrderIdOf(row.runId, symbol, bar.start, side);
    const recorded = await db.transaction(async (tx) => {
      // Under the bot's row lock: a stop that committed first means no signal and no order.
      const current = await findBot(tx, { userId: row.userId, forUpdate: true });
      await insertBotBar(tx, key, bar);
      if (current?.status !== 'running' || current.runId !== row.runId) return false;
      const at = clock.now();
      const frame = { type: 'signal', symbol, asset_class: row.assetClass, direction: side === 'buy' ? 'BUY' : 'SELL', confidence: 1, stop_loss: null, take_profit: null, ts: at.toISOString() };
      await events.append(tx, [{ userId: row.userId, channel: 'live', frame, at }]);
      await recordAudit(tx, { action: 'bot.signal', actorUserId: null, subjectUserId: row.userId, at, data: { run_id: row.runId, symbol, direction: frame.direction, bar_start: bar.start.toISOString(), close: bar.close, qty: qty.toFixed(), client_order_id: clientOrderId } });
      if (qty.lte(0)) return false;
      return insertBotOrder(tx, { userId: row.userId, clientOrderId, runId: row.runId, assetClass: row.assetClass, symbol, side, qty: qty.toFixed(), barStart: bar.start, createdAt: at });
    });
    // The signal's frame was written whether or not an order follows.
    events.wake();
    if (recorded) await place(bot, { clientOrderId, symbol, side, qty: qty.toFixed() });
    else if (qty.lte(0)) logger.info({ userId: row.userId, symbol, side }, 'the bot’s signal sizes to nothing: no order');
  };

  const onTick = (tick: PriceTick) => {
    for (const bot of active.values()) {
      if (bot.row.assetClass !== tick.assetClass) continue;
      const state = bot.symbols.get(tick.symbol);
      if (!state) continue;
      void enqueue(bot, async () => {
        if (active.get(bot.row.userId) !== bot) return; // dropped meanwhile
        const closed = state.builder.add(tick.price, new Date(tick.at));
        if (closed) await onClosedBar(bot, tick.symbol, state, closed, tick.price);
      });
    }
  };

  /** Orders recorded for the newest closed bar of each symbol but not placed yet: after a restart, or refused for now. */
  const retryUnplaced = async (bot: ActiveBot) => {
    if (isHalted()) return;
    for (const order of await listUnplacedBotOrders(db, { userId: bot.row.userId, runId: bot.row.runId })) {
      // A signal of an older bar is stale: the strategy has moved on.
      const newest = bot.symbols.get(order.symbol)?.history.at(-1)?.start.getTime();
      if (newest === undefined || order.barStart.getTime() !== newest) continue;
      await place(bot, { clientOrderId: order.clientOrderId, symbol: order.symbol, side: order.side, qty: order.qty });
    }
  };

  const drop = async (userId: number, release: boolean) => {
    active.delete(userId);
    if (release) await releaseLease(db, { name: leaseName(userId), holder }).catch((error: unknown) => logger.warn({ err: error, userId }, 'could not give a bot lease up; it expires by itself'));
  };

  let syncing: Promise<void> | undefined;
  let again = false;
  const syncOnce = async () => {
    const running = await listRunningBots(db);
    const byUser = new Map(running.map((row) => [row.userId, row]));
    for (const [userId, bot] of active) {
      // Stopped, or started again as a new run: this run ends here.
      if (byUser.get(userId)?.runId !== bot.row.runId) await drop(userId, true);
    }
    for (const row of running) {
      if (stopped) return;
      const held = await takeLease(db, { name: leaseName(row.userId), holder, now: clock.now(), ttlMs: config.BOT_LEASE_TTL_MS });
      if (!held) {
        if (active.has(row.userId)) logger.info({ userId: row.userId, holder }, 'bot lease lost');
        await drop(row.userId, false);
        continue;
      }
      let bot = active.get(row.userId);
      if (!bot) {
        bot = await load(row);
        if (!bot) continue;
        active.set(row.userId, bot);
        logger.info({ userId: row.userId, runId: row.runId, holder }, 'bot lease taken; running it');
      }
      const current = bot;
      await enqueue(current, () => retryUnplaced(current));
    }
  };
  const sync = (): Promise<void> => {
    if (syncing) {
      again = true;
      return syncing;
    }
    syncing = (async () => {
      do {
        again = false;
        await syncOnce();
      } while (again && !stopped);
    })().finally(() => {
      syncing = undefined;
    });
    return syncing;
  };

  const unlisten = events.onTick(onTick);

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      sync()
        .catch((error: unknown) => logger.error({ err: error }, 'bot sync round failed'))
        .finally(schedule);
    }, config.BOT_SYNC_INTERVAL_MS);
    timer.unref();
  };

  let started = false;
  return {
    sync,
    kick: () => {
      if (started && !stopped) void sync().catch((error: unknown) => logger.warn({ err: error }, 'bot sync round failed'));
    },
    held: () => [...active.keys()],
    idle: async () => {
      await syncing?.catch(() => undefined);
      await Promise.all([...active.values()].map((bot) => bot.chain));
    },
    start: () => {
      if (started || stopped) return;
      started = true;
      void sync().catch((error: unknown) => logger.error({ err: error }, 'bot sync round failed'));
      schedule();
    },
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      unlisten();
      await syncing?.catch(() => undefined);
      const bots = [...active.values()];
      await Promise.all(bots.map((bot) => bot.chain));
      for (const bot of bots) await drop(bot.row.userId, true);
    },
  };
};
