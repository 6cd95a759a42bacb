// The kill switch (DESIGN §6 "Kill switch"): daily P&L % per account against its day-start
// snapshot, evaluated after fills (coalesced per user and asset class, off the order path) and by
// a sweep of every account each minute. At or below −4 %: one critical alert per user, asset class
// and UTC day. At or below −5 %: lock the user and asset class for 24 h, cancel open orders (working
// buys only, unless liquidating), liquidate at market with KILL_SWITCH_LIQUIDATE, halt the bot
// (a bot_status frame, and onLock listeners), notify operators and the user. Every "once" is a
// unique key in the database, so two evaluations anywhere lock, alert and cancel once.
// The P&L is measured less today's flows (paper resets): a reset is no loss, and hides none.
import { performance } from 'node:perf_hooks';
import { Decimal } from 'decimal.js';
import type { TAssetClass } from '../../contracts/common.ts';
import type { TTradingMode } from '../../contracts/brokers.ts';
import type { Alerts } from '../alerts/index.ts';
import type { Mailer } from '../alerts/email.ts';
import { recordAudit } from '../audit/log.ts';
import type { AccountEquity, Broker } from '../brokers/types.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { dailyPnlPct, utcDateOf } from '../controls/day-start.ts';
import { createDayFlows } from '../controls/day-flows.ts';
import { LOCK_PCT, WARN_PCT } from '../controls/kill-switch-lines.ts';
import { listActiveLocks, setLock, takeDayStarts } from '../controls/queries.ts';
import type { Db } from '../db/client.ts';
import type { EventBus } from '../events/bus.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { marketSession } from '../markets/calendar.ts';
import { createListeners } from '../listeners.ts';
import type { Logger } from '../observability/logger.ts';
import type { Orders } from '../orders/orders.ts';
import { findUserById } from '../users/queries.ts';
import { recordCriticalAlert } from './kill-switch-queries.ts';
import { noticeEvent } from '../notifications/events.ts';

export const LOCK_MS = 24 * 3_600_000;
/** The pg-boss queue of liquidations that wait for a closed market's open. */
export const LIQUIDATE_QUEUE = 'kill-switch-liquidate';

export type LockListener = (userId: number, assetClass: TAssetClass, lockedUntil: Date) => void;

/** An account's equity now beside its day-start snapshot and today's flows (paper resets). */
type EvaluatedAccount = AccountEquity & { dayStartEquity: string; flows: string };

export interface KillSwitchDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'KILL_SWITCH_LIQUIDATE' | 'RISK_MARKET_HOURS'>;
  logger: Logger;
  alerts: Alerts;
  events: EventBus;
  orders: Pick<Orders, 'cancel' | 'place' | 'list'>;
  forUser: (account: { userId: number; assetClass: TAssetClass; mode: TTradingMode }) => Promise<Broker>;
  /** Every account's equity now (or one user's asset class): the broker's bulk read. */
  equities: (only?: { userId: number; assetClass: TAssetClass }) => Promise<AccountEquity[]>;
  jobs: JobQueue;
  /** The user's own notice by e-mail, when SMTP is set. */
  mailer: Mailer | undefined;
  /** The least time between two evaluations of one user's asset class after fills (default 100 ms). */
  evaluationGapMs?: number;
}

/**
 * After fills, one user's asset class is evaluated at most this often: a burst of fills (a bot, a
 * client placing hundreds of orders a second) costs ten evaluations a second, not one per fill,
 * and the fill that breaches the line is still acted on within this time.
 */
const EVALUATION_GAP_MS = 100;

export interface SweepResult {
  accounts: number;
  warned: number;
  locked: number;
}

export type KillSwitch = ReturnType<typeof createKillSwitch>;

const showPct = (pct: Decimal) => pct.toDecimalPlaces(2).toFixed(2);

/** The −4 % warning's title (its alert and its critical-alert row), never the lock's. */
const warningTitle = (account: { userId: number; assetClass: TAssetClass; mode: string }, pct: string) => `Daily loss ${pct} % on user ${account.userId}'s ${account.assetClass} (${account.mode})`;

export const createKillSwitch = ({ db, clock, config, logger, alerts, events, orders, forUser, equities, jobs, mailer, evaluationGapMs = EVALUATION_GAP_MS }: KillSwitchDeps) => {
  const log = logger.child({ area: 'kill_switch' });
  const listeners = createListeners<Parameters<LockListener>>((error) => log.error({ err: error }, 'kill switch lock listener failed'));

  const notifyUser = async (userId: number, subject: string, text: string) => {
    if (!mailer) return;
    const user = await findUserById(db, userId);
    if (!user) return;
    await mailer.send({ to: [user.email], subject, text }).catch((error: unknown) => {
      log.warn({ userId, failure: mailer.scrub(error instanceof Error ? error.message : String(error)) }, 'could not e-mail the user about the kill switch');
    });
  };

  const warn = async (worst: EvaluatedAccount & { pct: Decimal }, day: string) => {
    const title = warningTitle(worst, showPct(worst.pct));
    const data = { user_id: worst.userId, asset_class: worst.assetClass, mode: worst.mode, pnl_pct: showPct(worst.pct), equity: worst.equity, day_start_equity: worst.dayStartEquity, day_flows: worst.flows };
    const at = clock.now();
    // The day's alert row and the user's notice commit together: one notice per alert.
    const first = await db.transaction(async (tx) => {
      if (!(await recordCriticalAlert(tx, { userId: worst.userId, assetClass: worst.assetClass, day, kind: 'daily_loss_warning', title, data, at }))) return false;
      await events.append(tx, [noticeEvent(worst.userId, { type: 'kill_switch_alert', asset_class: worst.assetClass, mode: worst.mode, pnl_pct: showPct(worst.pct) }, at)]);
      return true;
    });
    if (!first) return false;
    events.wake();
    alerts.critical({ kind: 'daily_loss_warning', title, text: `${title}: at or below −${WARN_PCT.abs().toFixed()} % of the day-start equity; the kill switch locks at −${LOCK_PCT.abs().toFixed()} %.`, data });
    return true;
  };

  /**
   * Cancels the user's working orders of the asset class, both modes: the buys (what adds risk),
   * and the sells too when `all` (a liquidation sells the whole position, so they must free it).
   */
  const cancelOpenOrders = async (userId: number, assetClass: TAssetClass, all: boolean) => {
    // Accepted, open or partially filled (the list's `open`), in both modes.
    const working = await orders.list({ user: { id: userId }, query: { asset_class: assetClass, status: 'open', page: 1, size: 1000 } });
    let canceled = 0;
    for (const order of working.items) {
      // A lock refuses what adds risk, never an exit: every working sell (a bracket's children
      // included) stays unless the position is sold.
      if (!all && order.side === 'sell') continue;
      try {
        await orders.cancel({ user: { id: userId }, brokerOrderId: order.broker_order_id, assetClass, by: 'kill_switch' });
        canceled++;
      } catch (error) {
        log.warn({ err: error, userId, clientOrderId: order.client_order_id }, 'kill switch could not cancel an order');
      }
    }
    return canceled;
  };

  /**
   * Sells every position of the user's asset class at market (both modes). A closed market's
   * liquidation waits for its open: a pg-boss job that starts then runs this again.
   */
  const liquidate = async ({ userId, assetClass }: { userId: number; assetClass: TAssetClass }): Promise<{ placed: number; deferredUntil: Date | null }> => {
    const at = clock.now();
    const session = marketSession({ assetClass, at });
    if (config.RISK_MARKET_HOURS === 'enforce' && !session.open) {
      const boss = await jobs.boss();
      await boss.createQueue(LIQUIDATE_QUEUE);
      await boss.send(LIQUIDATE_QUEUE, { userId, assetClass }, { startAfter: session.opensAt, singletonKey: `${userId}:${assetClass}:${session.opensAt.toISOString()}` });
      log.warn({ userId, assetClass, opensAt: session.opensAt.toISOString() }, 'market closed: liquidation waits for the open');
      return { placed: 0, deferredUntil: session.opensAt };
    }
    let placed = 0;
    for (const mode of ['paper', 'live'] as const) {
      const broker = await forUser({ userId, assetClass, mode }).catch(() => undefined);
      const positions = (await broker?.positions().catch(() => [])) ?? [];
      for (const position of positions) {
        if (!new Decimal(position.qty).gt(0)) continue;
        try {
          await orders.place({
            user: { id: userId },
            request: { asset_class: assetClass, symbol: position.symbol, side: 'sell', qty: Number(position.qty), order_type: 'market', time_in_force: 'gtc', live_mode: mode === 'live' },
            liquidation: true,
          });
          placed++;
        } catch (error) {
          log.error({ err: error, userId, assetClass, mode, symbol: position.symbol }, 'kill switch could not liquidate a position');
        }
      }
    }
    return { placed, deferredUntil: null };
  };

  /**
   * Locks the user's asset class once per UTC day: the lock, its critical-alert row, its audit
   * record and the bot_status frame commit together, and only the evaluation that wrote the
   * alert row goes on to cancel, liquidate and notify. An operator's clear therefore holds for
   * the rest of the day.
   */
  const lock = async (worst: EvaluatedAccount & { pct: Decimal }, day: string): Promise<boolean> => {
    const at = clock.now();
    const lockedUntil = new Date(at.getTime() + LOCK_MS);
    const { userId, assetClass } = worst;
    const pct = showPct(worst.pct);
    const title = `Kill switch: user ${userId}'s ${assetClass} locked until ${lockedUntil.toISOString()} (daily loss ${pct} %)`;
    const data = { user_id: userId, asset_class: assetClass, mode: worst.mode, pnl_pct: pct, equity: worst.equity, day_start_equity: worst.dayStartEquity, day_flows: worst.flows, locked_until: lockedUntil.toISOString(), liquidate: config.KILL_SWITCH_LIQUIDATE };
    const haltReason = `kill switch: daily loss ${pct} % in ${assetClass}; locked until ${lockedUntil.toISOString()}`;
    const won = await db.transaction(async (tx) => {
      if (!(await recordCriticalAlert(tx, { userId, assetClass, day, kind: 'kill_switch_lock', title, data, at }))) return false;
      // The lock's alert is the day's critical alert: no separate −4 % one after it. The warning's
      // row it records keeps the warning's own title (the loss it passed), not the lock's.
      await recordCriticalAlert(tx, { userId, assetClass, day, kind: 'daily_loss_warning', title: warningTitle(worst, pct), data, at });
      await setLock(tx, { userId, assetClass, lockedUntil, reason: haltReason, at });
      await recordAudit(tx, { action: 'kill_switch.locked', subjectUserId: userId, data, at });
      await events.append(tx, [
        { userId, channel: 'live', frame: { type: 'bot_status', is_running: false, is_halted: true, halt_reason: haltReason, ts: at.toISOString() }, at },
        noticeEvent(userId, { type: 'kill_switch_lock', asset_class: assetClass, pnl_pct: pct, locked_until: lockedUntil.toISOString() }, at),
      ]);
      return true;
    });
    if (!won) return false;
    events.wake();
    listeners.publish(userId, assetClass, lockedUntil);
    const canceled = await cancelOpenOrders(userId, assetClass, config.KILL_SWITCH_LIQUIDATE);
    const liquidation = config.KILL_SWITCH_LIQUIDATE ? await liquidate({ userId, assetClass }).catch((error: unknown) => (log.error({ err: error, userId, assetClass }, 'kill switch liquidation failed'), undefined)) : undefined;
    alerts.critical({
      kind: 'kill_switch_lock',
      title,
      text: `${title}. Open orders canceled: ${canceled}${liquidation ? `; liquidation orders: ${liquidation.placed}${liquidation.deferredUntil ? ` (waiting for the open at ${liquidation.deferredUntil.toISOString()})` : ''}` : ''}. Only an operator clears the lock early.`,
      data: { ...data, canceled_orders: canceled, liquidation_orders: liquidation?.placed ?? 0 },
    });
    await notifyUser(userId, `Trading locked: ${assetClass}`, `Your ${assetClass} trading is locked until ${lockedUntil.toISOString()}: the daily loss reached ${pct} % of the day's starting equity. Open orders were canceled${config.KILL_SWITCH_LIQUIDATE ? ' and positions sold at market' : ''}.\n`);
    log.warn({ userId, assetClass, pnlPct: pct, lockedUntil: lockedUntil.toISOString(), canceled }, 'kill switch locked an account');
    return true;
  };

  /** Acts on the accounts of one evaluation: per user and asset class, its worst account decides. */
  const act = async (evaluated: EvaluatedAccount[], day: string): Promise<{ warned: number; locked: number }> => {
    const worst = new Map<string, EvaluatedAccount & { pct: Decimal }>();
    for (const account of evaluated) {
      const pct = dailyPnlPct({ equity: new Decimal(account.equity), dayStartEquity: new Decimal(account.dayStartEquity), flows: account.flows });
      if (!pct) continue;
      const key = `${account.userId}:${account.assetClass}`;
      const held = worst.get(key);
      if (!held || pct.lt(held.pct)) worst.set(key, { ...account, pct });
    }
    let warned = 0;
    let locked = 0;
    for (const account of worst.values()) {
      try {
        if (account.pct.lte(LOCK_PCT)) {
          if (await lock(account, day)) locked++;
        } else if (account.pct.lte(WARN_PCT)) {
          if (await warn(account, day)) warned++;
        }
      } catch (error) {
        // One account's failure must not keep the sweep from the others.
        log.error({ err: error, userId: account.userId, assetClass: account.assetClass }, 'kill switch evaluation failed');
      }
    }
    return { warned, locked };
  };

  /**
   * Today's day-start equity of each account, once read: a snapshot never changes during its day
   * (one row per account and UTC day, first writer wins), so an evaluation after a fill reads the
   * account's equity and nothing else. Emptied when the UTC day turns.
   */
  const dayStarts = { day: '', byAccount: new Map<string, string>() };
  const flowsOf = createDayFlows(db);
  const accountKey = ({ userId, assetClass, mode }: { userId: number; assetClass: TAssetClass; mode: TTradingMode }) => `${userId}:${assetClass}:${mode}`;

  const evaluate = async (only?: { userId: number; assetClass: TAssetClass }): Promise<SweepResult> => {
    const at = clock.now();
    const day = utcDateOf(at);
    if (dayStarts.day !== day) dayStarts.byAccount = new Map();
    dayStarts.day = day;
    const known = dayStarts.byAccount;
    const accounts = await equities(only);
    // Accounts seen first today take their snapshot (or read the one another instance took).
    const unknown = accounts.filter((account) => !known.has(accountKey(account)));
    for (const start of await takeDayStarts(db, { accounts: unknown, day, at })) known.set(accountKey(start), start.dayStartEquity);
    // Read only for accounts reset today, and matched with the reset their equity shows.
    const flows = await Promise.all(accounts.map((account) => flowsOf({ ...account, day, resetAt: account.resetAt })));
    const evaluated = accounts.flatMap((account, i) => {
      const dayStartEquity = known.get(accountKey(account));
      return dayStartEquity === undefined ? [] : [{ ...account, dayStartEquity, flows: flows[i]! }];
    });
    return { accounts: accounts.length, ...(await act(evaluated, day)) };
  };

  /** Per user and asset class: the evaluation running or due, and whether another was asked for meanwhile. */
  const pending = new Map<string, { again: boolean; done: Promise<void> }>();
  /** Per user and asset class: when its last evaluation after a fill started (monotonic ms), kept for one gap. */
  const lastStarted = new Map<string, number>();
  /** Waits out what is left of the gap since the last evaluation of `key` (a timer of the event loop, not the clock: a pace, not a time of day). */
  const gapLeft = (key: string) => {
    const since = lastStarted.get(key);
    const left = since === undefined ? 0 : since + evaluationGapMs - performance.now();
    return left > 0 ? new Promise<void>((resolve) => setTimeout(resolve, left)) : undefined;
  };

  /**
   * After a fill: evaluates that user's asset class soon, off the caller's path. Fills that come
   * while an evaluation runs, or within the gap after one started, are coalesced into one more
   * evaluation at the gap's end, which reads them all.
   */
  const afterFill = ({ userId, assetClass }: { userId: number; assetClass: TAssetClass }): Promise<void> => {
    const key = `${userId}:${assetClass}`;
    const running = pending.get(key);
    if (running) {
      running.again = true;
      return running.done;
    }
    const entry = { again: false, done: Promise.resolve() };
    entry.done = (async () => {
      do {
        await gapLeft(key);
        // Fills that came during the wait are read by this evaluation.
        entry.again = false;
        const started = performance.now();
        lastStarted.set(key, started);
        await evaluate({ userId, assetClass }).catch((error: unknown) => log.error({ err: error, userId, assetClass }, 'kill switch evaluation after a fill failed'));
        // The gap's record is only needed for the gap: forgotten after it, unless a newer one replaced it.
        setTimeout(() => {
          if (lastStarted.get(key) === started) lastStarted.delete(key);
        }, evaluationGapMs).unref();
      } while (entry.again);
    })().finally(() => pending.delete(key));
    pending.set(key, entry);
    return entry.done;
  };

  /** How old a lock is before the sweep checks what its cancels left. */
  const ENFORCE_AFTER_MS = 60_000;

  /**
   * Every active lock once more: a buy that escaped its cancels (the process died between
   * the lock's commit and them, or the order was still on its way to the broker then) is canceled
   * by the next sweep. Locks are few, and an account without working orders costs one read.
   */
  const enforceLocks = async (): Promise<number> => {
    const at = clock.now();
    let canceled = 0;
    for (const held of await listActiveLocks(db, { at })) {
      // A fresh lock's own cancels may still be running (here or on another instance).
      if (at.getTime() - held.lockedAt.getTime() < ENFORCE_AFTER_MS) continue;
      canceled += await cancelOpenOrders(held.userId, held.assetClass, config.KILL_SWITCH_LIQUIDATE).catch((error: unknown) => {
        log.error({ err: error, userId: held.userId, assetClass: held.assetClass }, 'kill switch could not enforce a lock');
        return 0;
      });
    }
    return canceled;
  };

  return {
    /** One pass over every account, then over the active locks (the minute schedule runs this). */
    sweep: async (): Promise<SweepResult & { recanceled: number }> => {
      const result = await evaluate();
      return { ...result, recanceled: await enforceLocks() };
    },
    afterFill,
    liquidate,
    /** Resolves when the evaluations after fills asked so far have finished (tests, shutdown). */
    idle: async () => {
      while (pending.size > 0) await Promise.all([...pending.values()].map((entry) => entry.done));
    },
    /** Called on the instance that locked, after the lock commits (the bot stops on it). */
    onLock: (listener: LockListener) => listeners.add(listener),
  };
};
