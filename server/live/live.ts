// Live trading's controls around the order gates: what a user's live accounts look like (the
// flag, the first live order, an active lock, today's live orders against the daily limit), and
// the promotion routes (promotion.ts), the operator overview and live suspension, and the
// operator's switches (disable a user's live trading, clear a lock early), each audited in
// the transaction of its change.
import { ZAssetClass, type TAssetClass } from '../../contracts/common.ts';
import { ZCriticalAlertKind, type TAdminUserDetail, type TCriticalAlertList, type TCriticalAlertListQuery } from '../../contracts/admin.ts';
import type { TBotStatus } from '../../contracts/bot.ts';
import type { TLiveStatus } from '../../contracts/live.ts';
import { recordAudit, type RequestOrigin } from '../audit/log.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/client.ts';
import { AppError } from '../errors.ts';
import { utcDateOf } from '../controls/day-start.ts';
import { clearLock, controlsOf, setLiveEnabled } from '../controls/queries.ts';
import { liveScope } from '../orders/gates.ts';
import { findUserById } from '../users/queries.ts';
import { toAuthUser, toUserResponse } from '../users/users.ts';
import type { Halt } from '../system/halt.ts';
import { noRunningBots, readOverview, type TRunningBot } from './overview.ts';
import { listCriticalAlerts, liveOrderCountersOf } from './queries.ts';
import type { Promotion } from './promotion.ts';
import type { LiveSuspension } from './suspension.ts';

export type Live = ReturnType<typeof createLive>;

export interface LiveDeps {
  db: Db;
  clock: Clock;
  config: Config;
  promotion: Promotion;
  suspension: LiveSuspension;
  halt: Pick<Halt, 'isHalted'>;
  /** The bot area's running bots, for the overview (an empty list until it lands). */
  runningBots?: () => Promise<TRunningBot[]>;
  /** A user's bot as GET /api/bot/status shows it, or null without one: the operator's user detail. */
  botOf?: (userId: number) => Promise<TBotStatus | null>;
}

const userNotFound = () => new AppError('NOT_FOUND', 'User not found');

export const createLive = ({ db, clock, config, promotion, suspension, halt, runningBots = noRunningBots, botOf = () => Promise.resolve(null) }: LiveDeps) => {
  const existingUser = async (userId: number) => {
    if (!(await findUserById(db, userId))) throw userNotFound();
  };

  /** Each asset class's live state, with the active lock's reason (shown to operators only). */
  const accountsOf = async (userId: number): Promise<TAdminUserDetail['live']> => {
    const [{ flags, locks }, counters] = await Promise.all([controlsOf(db, { userId }), liveOrderCountersOf(db, { userId })]);
    const now = clock.now();
    const midnight = new Date(`${utcDateOf(now)}T00:00:00.000Z`);
    const of = (assetClass: TAssetClass) => {
      const flag = flags.find((row) => row.assetClass === assetClass);
      const lock = locks.find((row) => row.assetClass === assetClass && row.lockedUntil > now);
      // The daily counter counts from its window's start: a window begun before today is spent.
      const counter = counters.find((row) => row.scope === liveScope(assetClass) && row.windowStart >= midnight);
      return {
        live_enabled: flag?.liveEnabled ?? false,
        first_live_order_at: flag?.firstLiveOrderAt?.toISOString() ?? null,
        locked_until: lock ? lock.lockedUntil.toISOString() : null,
        lock_reason: lock ? lock.reason : null,
        live_orders_today: counter?.count ?? 0,
        daily_limit: config.LIVE_DAILY_TRADE_LIMIT,
      };
    };
    const [crypto, usEquity, krEquity] = ZAssetClass.options.map(of);
    return { crypto: crypto!, us_equity: usEquity!, kr_equity: krEquity! };
  };

  const status = async ({ user }: { user: { id: number } }): Promise<TLiveStatus> => {
    const { crypto, us_equity, kr_equity } = await accountsOf(user.id);
    const own = ({ lock_reason: _reason, ...account }: TAdminUserDetail['live']['crypto']) => account;
    return { crypto: own(crypto), us_equity: own(us_equity), kr_equity: own(kr_equity) };
  };

  /** GET /api/admin/users/{user_id}: the user, its live state per asset class and its bot. */
  const userDetail = async ({ userId }: { userId: number }): Promise<TAdminUserDetail> => {
    const row = await findUserById(db, userId);
    if (!row) throw userNotFound();
    const [live, bot] = await Promise.all([accountsOf(userId), botOf(userId)]);
    return { ...toUserResponse(toAuthUser(row)), live, bot };
  };

  type OperatorAction = { actor: { id: number }; userId: number; assetClass: TAssetClass; origin: RequestOrigin };

  const disable = async ({ actor, userId, assetClass, origin }: OperatorAction) => {
    await existingUser(userId);
    const at = clock.now();
    await db.transaction(async (tx) => {
      await setLiveEnabled(tx, { userId, assetClass, enabled: false, at });
      await recordAudit(tx, { action: 'admin.live_disabled', actorUserId: actor.id, subjectUserId: userId, origin, data: { asset_class: assetClass }, at });
    });
    return { user_id: userId, asset_class: assetClass, live_enabled: false as const };
  };

  const clear = async ({ actor, userId, assetClass, origin }: OperatorAction) => {
    await existingUser(userId);
    const at = clock.now();
    const cleared = await db.transaction(async (tx) => {
      const removed = await clearLock(tx, { userId, assetClass });
      await recordAudit(tx, { action: 'admin.lock_cleared', actorUserId: actor.id, subjectUserId: userId, origin, data: { asset_class: assetClass, cleared: removed }, at });
      return removed;
    });
    return { user_id: userId, asset_class: assetClass, locked_until: null, cleared };
  };

  /** GET /api/admin/alerts: the kill switch's critical alerts, newest first. */
  const alerts = async ({ query }: { query: TCriticalAlertListQuery }): Promise<TCriticalAlertList> => {
    const { rows, total } = await listCriticalAlerts(db, { userId: query.user_id, kind: query.kind, page: query.page, size: query.size });
    return {
      items: rows.map((row) => ({
        id: row.id,
        user_id: row.userId,
        asset_class: row.assetClass,
        day: row.day,
        // The column is text: a kind this contract does not know yet is a server bug, caught here.
        kind: ZCriticalAlertKind.parse(row.kind),
        title: row.title,
        data: row.data,
        at: row.createdAt.toISOString(),
      })),
      total,
      page: query.page,
      size: query.size,
    };
  };

  const overview = () => readOverview({ db, clock, isHalted: () => halt.isHalted(), isLiveSuspended: () => suspension.isSuspended(), runningBots });

  return {
    status,
    userDetail,
    alerts,
    disable,
    clearLock: clear,
    readiness: promotion.readiness,
    issueConfirm: promotion.issue,
    enable: promotion.enable,
    suspend: (opts: Parameters<LiveSuspension['set']>[0]) => suspension.set(opts),
    overview,
  };
};
