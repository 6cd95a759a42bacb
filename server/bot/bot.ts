// The per-user trading bot as users and operators reach it: start (checked as an order would be:
// strategy, params, symbols, the flags, a lock, the broker), stop, status, the operator's force
// stop, the kill switch's halt, and the fills and positions that backfill /ws/live. Each change
// of the bot's row is written with its audit record and its `bot_status` frame in one
// transaction; the runner (runner.ts) does the trading.
import { randomUUID } from 'node:crypto';
import type { TTradingMode } from '../../contracts/brokers.ts';
import type { RunningBot, TBotPosition, TBotStartRequest, TBotStatus, TBotTradeList, TBotTradeQuery } from '../../contracts/bot.ts';
import { ZAssetClass, type TAssetClass } from '../../contracts/common.ts';
import { recordAudit, type RequestOrigin } from '../audit/log.ts';
import { resolveStrategy } from '../backtest/strategies/index.ts';
import type { Broker } from '../brokers/types.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { controlsOf } from '../controls/queries.ts';
import type { Db, Queryable } from '../db/client.ts';
import type { BotRow } from '../db/schema/index.ts';
import { AppError } from '../errors.ts';
import type { EventBus } from '../events/bus.ts';
import type { Instruments } from '../instruments/instruments.ts';
import { checkTradingFlags } from '../orders/gates.ts';
import type { Orders } from '../orders/orders.ts';
import { findUserById } from '../users/queries.ts';
import { createBotRuns } from './runs.ts';
import { endBotRun, findBot, insertBotRun, listBotFills, listRunningBotsWithUsers, recordRunEnded, saveStartedBot } from './queries.ts';

export interface BotDeps {
  db: Db;
  clock: Clock;
  config: Config;
  instruments: Pick<Instruments, 'resolve'>;
  events: Pick<EventBus, 'append' | 'wake'>;
  orders: Pick<Orders, 'positions'>;
  forUser: (account: { userId: number; assetClass: TAssetClass; mode: TTradingMode }) => Promise<Broker>;
}

export type Bots = ReturnType<typeof createBots>;

type StopCause = 'user' | 'admin' | 'lock';

const statusOf = (row: BotRow | undefined, at: Date): TBotStatus => ({
  is_running: row?.status === 'running',
  is_halted: row?.status === 'halted',
  halt_reason: row?.status === 'halted' ? row.haltReason : null,
  asset_class: row?.assetClass ?? null,
  symbols: row?.symbols ?? [],
  strategy_name: row?.strategyName ?? null,
  strategy_params: row?.strategyParams ?? null,
  live_mode: row?.liveMode ?? false,
  timeframe: row?.timeframe ?? null,
  started_at: row?.startedAt.toISOString() ?? null,
  stopped_at: row?.status === 'running' ? null : (row?.stoppedAt?.toISOString() ?? null),
  stopped_by: row?.status === 'running' ? null : (row?.stoppedBy ?? null),
  ts: at.toISOString(),
});

const invalid = (path: string, message: string, code: 'VALIDATION_ERROR' | 'INVALID_SYMBOL' = 'VALIDATION_ERROR') =>
  new AppError(code, `${path}: ${message}`, { errors: [{ path, message }] });

export const createBots = ({ db, clock, config, instruments, events, orders, forUser }: BotDeps) => {
  const runs = createBotRuns({ db, clock, instruments });
  /** Called after a start or a stop commits, so this instance's runner picks it up at once. */
  let onChange: () => void = () => undefined;

  /** The bot_status frame of a row, in the caller's transaction: delivered if and when it commits. */
  const announce = (tx: Queryable, userId: number, status: TBotStatus, at: Date) =>
    events.append(tx, [{ userId, channel: 'live', frame: { type: 'bot_status', is_running: status.is_running, is_halted: status.is_halted, halt_reason: status.halt_reason, ts: status.ts }, at }]);

  /** The strategy and its validated params (defaults filled in), as a backtest checks them, for an asset class it trades. */
  const strategyOf = (name: string, given: Record<string, unknown> | null | undefined, assetClass: TAssetClass) => {
    const resolved = resolveStrategy(name, given);
    if (!resolved.strategy.assetClasses.includes(assetClass)) throw invalid('asset_class', `${resolved.strategy.name} does not trade ${assetClass}`);
    return resolved;
  };

  const start = async ({ user, request, origin }: { user: { id: number }; request: TBotStartRequest; origin: RequestOrigin }): Promise<TBotStatus> => {
    const assetClass = request.asset_class;
    const { strategy, params } = strategyOf(request.strategy_name, request.strategy_params, assetClass);
    const symbols: string[] = [];
    for (const [index, given] of request.symbols.entries()) {
      const instrument = await instruments.resolve({ symbol: given, assetClass });
      if (!instrument) throw invalid(`symbols.${index}`, `${given} is not a registered ${assetClass} instrument`, 'INVALID_SYMBOL');
      if (symbols.includes(instrument.symbol)) throw invalid(`symbols.${index}`, `${given} names ${instrument.symbol} twice`);
      symbols.push(instrument.symbol);
    }
    // What every order of the bot would meet first, answered now rather than at its first signal.
    const mode: TTradingMode = request.live_mode ? 'live' : 'paper';
    const { flags, locks } = await controlsOf(db, { userId: user.id });
    checkTradingFlags({ mode, assetClass, liveEnabled: flags.some((flag) => flag.assetClass === assetClass && flag.liveEnabled) }, config);
    const now = clock.now();
    const lock = locks.find((row) => row.assetClass === assetClass && row.lockedUntil > now);
    if (lock) throw new AppError('RISK_RULE_VIOLATION', `Trading ${assetClass} is locked by the emergency lock until ${lock.lockedUntil.toISOString()}`);
    await forUser({ userId: user.id, assetClass, mode });

    const status = await db.transaction(async (tx) => {
      const at = clock.now();
      const row = await saveStartedBot(tx, {
        userId: user.id,
        runId: randomUUID().replaceAll('-', '').slice(0, 12),
        assetClass,
        symbols,
        strategyName: strategy.name,
        strategyParams: params,
        liveMode: request.live_mode,
        timeframe: request.timeframe,
        status: 'running',
        haltReason: null,
        stoppedBy: null,
        startedAt: at,
        stoppedAt: null,
        updatedAt: at,
      });
      if (!row) throw new AppError('CONFLICT', 'Your bot is already running; stop it first (POST /api/bot/stop)');
      await insertBotRun(tx, row);
      await recordAudit(tx, { action: 'bot.started', actorUserId: user.id, subjectUserId: user.id, origin, at, data: { run_id: row.runId, asset_class: assetClass, symbols, strategy_name: strategy.name, strategy_params: params, live_mode: request.live_mode, timeframe: request.timeframe } });
      const answer = statusOf(row, at);
      await announce(tx, user.id, answer, at);
      return answer;
    });
    events.wake();
    onChange();
    return status;
  };

  /** Ends the user's running bot (if any), audited and announced; the status after it. */
  const end = async ({ userId, cause, actorId, origin, haltReason = null, assetClass }: { userId: number; cause: StopCause; actorId: number | null; origin?: RequestOrigin; haltReason?: string | null; assetClass?: TAssetClass }) => {
    const result = await db.transaction(async (tx) => {
      const at = clock.now();
      const ended = await endBotRun(tx, { userId, status: cause === 'lock' ? 'halted' : 'stopped', stoppedBy: cause, haltReason, at, assetClass });
      if (ended) await recordRunEnded(tx, ended);
      const row = ended ?? (await findBot(tx, { userId }));
      const action = cause === 'admin' ? 'admin.bot_stopped' : cause === 'lock' ? 'bot.halted' : 'bot.stopped';
      // An operator's force stop is audited whether or not the bot ran; a user's no-op stop is not a change.
      if (ended || cause === 'admin') await recordAudit(tx, { action, actorUserId: actorId, subjectUserId: userId, origin, at, data: { was_running: Boolean(ended), run_id: row?.runId ?? null, ...(haltReason ? { halt_reason: haltReason } : {}) } });
      const status = statusOf(row, at);
      if (ended) await announce(tx, userId, status, at);
      return { status, ended: Boolean(ended), row };
    });
    if (result.ended) {
      events.wake();
      onChange();
    }
    return result;
  };

  const stop = async ({ user, origin }: { user: { id: number }; origin: RequestOrigin }): Promise<TBotStatus> => (await end({ userId: user.id, cause: 'user', actorId: user.id, origin })).status;

  const forceStop = async ({ actor, userId, origin }: { actor: { id: number }; userId: number; origin: RequestOrigin }) => {
    if (!(await findUserById(db, userId))) throw new AppError('NOT_FOUND', 'User not found');
    return { user_id: userId, ...(await end({ userId, cause: 'admin', actorId: actor.id, origin })).status };
  };

  /**
   * The kill switch's lock of a user's asset class: stops the bot trading that asset class, which
   * announces `bot_status` with is_halted true and the reason. A bot trading another asset class
   * is left alone; the kill switch itself tells a user without a running bot.
   */
  const haltForLock = async (userId: number, assetClass: TAssetClass, reason: string): Promise<{ halted: boolean }> => {
    const { ended } = await end({ userId, cause: 'lock', actorId: null, haltReason: reason, assetClass });
    return { halted: ended };
  };

  const status = async ({ user }: { user: { id: number } }): Promise<TBotStatus> => statusOf(await findBot(db, { userId: user.id }), clock.now());

  /** The user's bot as GET /api/bot/status shows it, or null when the user never started one (an operator's view). */
  const statusIfAny = async ({ userId }: { userId: number }): Promise<TBotStatus | null> => {
    const row = await findBot(db, { userId });
    return row ? statusOf(row, clock.now()) : null;
  };

  const trades = async ({ user, query }: { user: { id: number }; query: TBotTradeQuery }): Promise<TBotTradeList> => {
    const { rows, total } = await listBotFills(db, { userId: user.id, assetClass: query.asset_class, limit: query.size, offset: (query.page - 1) * query.size });
    return {
      items: rows.map((row) => ({ symbol: row.symbol, asset_class: row.assetClass, side: row.side, amount: Number(row.qty), price: Number(row.price), fee: Number(row.fee), ts: row.at.toISOString(), client_order_id: row.clientOrderId })),
      total,
      page: query.page,
      size: query.size,
    };
  };

  /**
   * Positions for /ws/live's backfill: of the asset class asked for, else of every asset class the
   * user has a broker for; in the mode asked for, else the bot's (paper without a bot).
   */
  const positions = async ({ user, query }: { user: { id: number }; query: { asset_class?: TAssetClass | undefined; mode?: TTradingMode | undefined } }): Promise<{ items: TBotPosition[] }> => {
    const mode = query.mode ?? ((await findBot(db, { userId: user.id }))?.liveMode ? 'live' : 'paper');
    if (query.asset_class) return orders.positions({ user, assetClass: query.asset_class, mode });
    const items: TBotPosition[] = [];
    for (const assetClass of ZAssetClass.options) {
      const held = await orders.positions({ user, assetClass, mode }).catch((error: unknown) => {
        if (error instanceof AppError && error.code === 'BROKER_NOT_CONFIGURED') return { items: [] };
        throw error;
      });
      items.push(...held.items);
    }
    return { items };
  };

  /** The instruments the user's running bot trades, as `asset_class:symbol` (its /ws/live ticks). */
  const watchedSymbols = async ({ user }: { user: { id: number } }): Promise<Set<string>> => {
    const row = await findBot(db, { userId: user.id });
    return new Set(row?.status === 'running' ? row.symbols.map((symbol) => `${row.assetClass}:${symbol}`) : []);
  };

  /** Running bots for the operator overview, longest-running first. */
  const runningBots = async (): Promise<RunningBot[]> =>
    (await listRunningBotsWithUsers(db)).map((row) => ({ user_id: row.userId, username: row.username, asset_class: row.assetClass, strategy_name: row.strategyName, live_mode: row.liveMode, started_at: row.startedAt.toISOString() }));

  return {
    start,
    stop,
    status,
    statusIfAny,
    forceStop,
    haltForLock,
    trades,
    positions,
    runningBots,
    watchedSymbols,
    /** The user's runs, and a run's drift report (runs.ts). */
    runs: runs.list,
    drift: runs.drift,
    /** The runner of this instance asks to hear of starts and stops made here. */
    onChange: (listener: () => void) => {
      onChange = listener;
    },
  };
};
