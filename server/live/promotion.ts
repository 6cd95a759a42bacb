// Live promotion (DESIGN §6 "Live promotion"): readiness from the paper record, the confirm token
// (issued, delivered by e-mail or once to the log, consumed by enable), the bot check on enable,
// and the user's live flag set with its audit record in the token's transaction.
import type { TAssetClass } from '../../contracts/common.ts';
import type { TConfirmIssued, TLiveEnabled, TLiveReadiness } from '../../contracts/live.ts';
import type { Alerts } from '../alerts/index.ts';
import type { Mailer } from '../alerts/email.ts';
import { recordAudit, type RequestOrigin } from '../audit/log.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { setLiveEnabled } from '../controls/queries.ts';
import type { Db } from '../db/client.ts';
import { AppError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import { findUserById } from '../users/queries.ts';
import type { EventBus } from '../events/bus.ts';
import { noticeEvent } from '../notifications/events.ts';
import type { BotCheck } from './botcheck.ts';
import { CONFIRM_TOKEN_TTL_MS, confirmTokenHash, isSignedConfirmToken, makeConfirmToken } from './confirm-token.ts';
import { consumeToken, issueToken, paperRecordOf, withdrawToken } from './queries.ts';

const DAY_MS = 86_400_000;

export interface PromotionDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'RISK_PAPER_MIN_DAYS' | 'RISK_PAPER_MIN_TRADES' | 'LIVE_CONFIRM_SECRET'>;
  logger: Logger;
  alerts: Alerts;
  botCheck: BotCheck;
  /** The mail relay when SMTP_HOST is set; without it the token goes to the log. */
  mailer: Mailer | undefined;
  /** A promotion's notice to the user's notification channels. */
  events: Pick<EventBus, 'append' | 'wake'>;
}

export type Promotion = ReturnType<typeof createPromotion>;

export const createPromotion = ({ db, clock, config, logger, alerts, botCheck, mailer, events }: PromotionDeps) => {
  const readiness = async ({ user, assetClass }: { user: { id: number }; assetClass: TAssetClass }): Promise<TLiveReadiness> => {
    const { firstAt, filled } = await paperRecordOf(db, { userId: user.id, assetClass });
    const days = firstAt ? Math.max(0, Math.floor((clock.now().getTime() - firstAt.getTime()) / DAY_MS)) : 0;
    const reasons: string[] = [];
    if (days < config.RISK_PAPER_MIN_DAYS) {
      reasons.push(firstAt ? `${days} days of paper trading; ${config.RISK_PAPER_MIN_DAYS} required` : `no paper order in ${assetClass} yet; ${config.RISK_PAPER_MIN_DAYS} days of paper trading required`);
    }
    if (filled < config.RISK_PAPER_MIN_TRADES) reasons.push(`${filled} filled paper orders; ${config.RISK_PAPER_MIN_TRADES} required`);
    return {
      ok: reasons.length === 0,
      asset_class: assetClass,
      paper_days: days,
      paper_trades: filled,
      required_days: config.RISK_PAPER_MIN_DAYS,
      required_trades: config.RISK_PAPER_MIN_TRADES,
      reasons,
    };
  };

  const deliver = async ({ to, token, assetClass, expiresAt }: { to: string; token: string; assetClass: TAssetClass; expiresAt: Date }) => {
    await mailer!.send({
      to: [to],
      subject: `Your live trading confirmation for ${assetClass}`,
      text:
        `Someone (we hope you) asked to enable live ${assetClass} trading on your account.\n\n` +
        `Confirmation token: ${token}\n\nIt works once, until ${expiresAt.toISOString()}. If this was not you, ignore this message and change your password.\n`,
    });
  };

  const issue = async ({ user, assetClass, origin }: { user: { id: number }; assetClass: TAssetClass; origin: RequestOrigin }): Promise<TConfirmIssued> => {
    const ready = await readiness({ user, assetClass });
    if (!ready.ok) throw new AppError('PAPER_VALIDATION_REQUIRED', `Paper validation is not passed for ${assetClass}: ${ready.reasons.join('; ')}`);
    const account = await findUserById(db, user.id);
    if (!account) throw new AppError('UNAUTHORIZED');
    const at = clock.now();
    const expiresAt = new Date(at.getTime() + CONFIRM_TOKEN_TTL_MS);
    const token = makeConfirmToken(config.LIVE_CONFIRM_SECRET);
    const delivery = mailer ? 'email' : 'log';
    const id = await db.transaction(async (tx) => {
      const made = await issueToken(tx, { userId: user.id, assetClass, tokenHash: confirmTokenHash(token), expiresAt, delivery, at });
      await recordAudit(tx, { action: 'live.confirm_issued', actorUserId: user.id, subjectUserId: user.id, origin, data: { asset_class: assetClass, delivery, expires_at: expiresAt.toISOString() }, at });
      return made;
    });
    if (mailer) {
      try {
        await deliver({ to: account.email, token, assetClass, expiresAt });
      } catch (error) {
        // A token nobody received must not stay active: the user asks again.
        await withdrawToken(db, { userId: user.id, id, at: clock.now() });
        logger.error({ userId: user.id, failure: mailer.scrub(error instanceof Error ? error.message : String(error)) }, 'could not e-mail a live confirm token');
        throw new AppError('DELIVERY_FAILED', 'The confirmation e-mail could not be sent; ask for a new token');
      }
    } else {
      // The interface's one secret in a log: only without mail settings, once, under this key
      // (the logger's redaction leaves `live_confirm_token` alone and no other token key).
      logger.warn({ live_confirm_token: token, userId: user.id, assetClass, expiresAt: expiresAt.toISOString() }, 'live confirm token issued (no SMTP settings: delivered to this log only)');
    }
    return { asset_class: assetClass, expires_at: expiresAt.toISOString(), delivery };
  };

  const enable = async ({ user, confirmToken, botcheckToken, origin }: { user: { id: number }; confirmToken: string; botcheckToken: string | undefined; origin: RequestOrigin }): Promise<TLiveEnabled> => {
    await botCheck.verify({ token: botcheckToken, remoteIp: origin.address });
    const invalid = () => new AppError('CONFIRM_TOKEN_INVALID', 'The confirm token is not valid (wrong, expired, already used or replaced by a newer one)');
    if (!isSignedConfirmToken(config.LIVE_CONFIRM_SECRET, confirmToken)) throw invalid();
    const at = clock.now();
    const assetClass = await db.transaction(async (tx) => {
      const consumed = await consumeToken(tx, { userId: user.id, tokenHash: confirmTokenHash(confirmToken), at });
      if (!consumed) return undefined;
      await setLiveEnabled(tx, { userId: user.id, assetClass: consumed, enabled: true, at });
      await recordAudit(tx, { action: 'live.enabled', actorUserId: user.id, subjectUserId: user.id, origin, data: { asset_class: consumed }, at });
      await events.append(tx, [noticeEvent(user.id, { type: 'live_enabled', asset_class: consumed }, at)]);
      return consumed;
    });
    if (!assetClass) throw invalid();
    events.wake();
    alerts.info({ kind: 'live_enabled', title: `User ${user.id} enabled live ${assetClass} trading`, text: `User ${user.id} confirmed and enabled live ${assetClass} trading.`, data: { user_id: user.id, asset_class: assetClass } });
    return { asset_class: assetClass, live_enabled: true };
  };

  return { readiness, issue, enable };
};
