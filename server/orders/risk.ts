// The risk manager, gate 4 of an order placement (DESIGN §6): pure checks of one order attempt
// against the lock, the market calendar, the account and the risk settings, in DESIGN's order.
import { Decimal } from 'decimal.js';
import type { TAssetClass } from '../../contracts/common.ts';
import type { TAppErrorCode } from '../../contracts/errors.ts';
import { defaultProfileFor } from '../brokers/fees.ts';
import { computeFill, executionPrice, type Fill, type TOrderSide, type TTickSizeAt } from '../brokers/fills.ts';
import { ExactDecimal } from '../decimal.ts';
import type { Config } from '../config.ts';
import { AppError } from '../errors.ts';
import { krxTickSize } from '../instruments/ticks.ts';
import { marketSession } from '../markets/calendar.ts';
import { dailyPnlPct } from '../controls/day-start.ts';
import { buyRefusalMessage, sellableOf, sellRefusalMessage, type WorkingOrder } from '../brokers/funds.ts';
import { krxPriceLimits, type PriceLimits } from '../markets/krx-prices.ts';
import { offGridReason, offGridTrailReason } from './risk/price-grid.ts';
import { bracketStopOf, positionRisk, riskOf } from './risk/sizing.ts';
import type { TTrail } from '../brokers/matching.ts';

export type TOrderType = 'market' | 'limit' | 'stop' | 'stop_limit';

/** How an instrument's price increment is found: one fixed tick, or the KRX band table. */
export type TTickRule = 'fixed' | 'krx_bands';

export interface RiskAttempt {
  assetClass: TAssetClass;
  side: TOrderSide;
  qty: Decimal;
  orderType: TOrderType;
  limitPrice?: Decimal | undefined;
  stopPrice?: Decimal | undefined;
  /**
   * A trailing stop's trail as a price distance: on the tick grid in force at the reference price
   * (the stop moves by it from a price). The trailing stop itself is judged as a stop at its first stop.
   */
  trailPrice?: Decimal | undefined;
  /**
   * The bracket's legs; `stopLossLimit` makes the stop-loss child a stop-limit, `trail` a trailing
   * stop from the entry's fill. An oto leaves a leg out.
   */
  bracket?: { takeProfit?: Decimal | undefined; stopLoss?: Decimal | undefined; stopLossLimit?: Decimal | undefined; trail?: TTrail | null | undefined } | null | undefined;
  /** The broker's current price. */
  referencePrice: Decimal;
  /** The base of the KRX daily price limit; without it that check is skipped. */
  previousClose?: Decimal | undefined;
  tickRule: TTickRule;
  /** The instrument's tick; under 'krx_bands' the band table decides instead. */
  tickSize: Decimal;
  account: { equity: Decimal; buyingPower: Decimal };
  /** The quantity of the symbol held. */
  heldQty: Decimal;
  /**
   * The symbol's working orders (positionOf gives them from a snapshot): what working sells hold
   * of the position (a sell may take the rest) and what the position risks with its working buys.
   * Absent: none. `except` leaves out the order a replace changes (its own hold released).
   */
  position?: { symbol: string; working: readonly WorkingOrder[]; except?: string | undefined } | undefined;
  /** Equity at the account's first evaluation of the UTC day; absent means this is that evaluation. */
  dayStartEquity?: Decimal | undefined;
  /** Today's flows of the account (the equity its paper resets added or removed); absent is none. */
  dayFlows?: Decimal | undefined;
  lockedUntil?: Date | null | undefined;
  at: Date;
}

/** Every threshold of the risk manager; percentages as in the settings (2 means 2 %). */
export interface RiskSettings {
  marketHours: 'enforce' | 'ignore';
  defaultStopPct: Decimal;
  maxRiskPerTradePct: Decimal;
  dailyLossLimitPct: Decimal;
}

/** The checks in the order they run; the first refusal is the answer. */
export const RISK_CHECK_ORDER = ['emergency_lock', 'market_hours', 'price_limit', 'tick_size', 'funds', 'position_sizing', 'daily_loss'] as const;
export type TRiskRule = (typeof RISK_CHECK_ORDER)[number];

export type TRiskErrorCode = Extract<TAppErrorCode, 'RISK_RULE_VIOLATION' | 'MARKET_CLOSED' | 'INSUFFICIENT_FUNDS'>;

const CODE_OF: Record<TRiskRule, TRiskErrorCode> = {
  emergency_lock: 'RISK_RULE_VIOLATION',
  market_hours: 'MARKET_CLOSED',
  price_limit: 'RISK_RULE_VIOLATION',
  tick_size: 'RISK_RULE_VIOLATION',
  funds: 'INSUFFICIENT_FUNDS',
  position_sizing: 'RISK_RULE_VIOLATION',
  daily_loss: 'RISK_RULE_VIOLATION',
};

export interface RiskRefusal {
  ok: false;
  code: TRiskErrorCode;
  rule: TRiskRule;
  message: string;
}
export type RiskVerdict = { ok: true } | RiskRefusal;

/** Why a check refuses the attempt, or undefined to let it through. */
type Check = (attempt: RiskAttempt, settings: RiskSettings) => string | undefined;

const percentOf = (amount: Decimal, pct: Decimal): Decimal => new ExactDecimal(amount).times(pct).dividedBy(100);

/** Percentages out of a division can run to 40 digits; a message needs four places. */
const showPct = (pct: Decimal): string => pct.toDecimalPlaces(4).toFixed();

const tickAtOf = ({ tickRule, tickSize }: RiskAttempt): TTickSizeAt => (tickRule === 'krx_bands' ? krxTickSize : () => tickSize);

const isStopEntry = ({ orderType }: RiskAttempt): boolean => orderType === 'stop' || orderType === 'stop_limit';

interface NamedPrice {
  label: string;
  price: Decimal;
}

/** The prices an order enters at today, by its type; fields its type does not use are ignored. */
const entryPrices = (attempt: RiskAttempt): NamedPrice[] => {
  const { orderType, limitPrice, stopPrice } = attempt;
  const prices: NamedPrice[] = [];
  if ((orderType === 'stop' || orderType === 'stop_limit') && stopPrice) prices.push({ label: 'stop price', price: stopPrice });
  if ((orderType === 'limit' || orderType === 'stop_limit') && limitPrice) prices.push({ label: 'limit price', price: limitPrice });
  return prices;
};

/** Every price the order will put on the exchange: its entry and the bracket's children. */
const orderPrices = (attempt: RiskAttempt): NamedPrice[] => {
  const { bracket } = attempt;
  if (!bracket) return entryPrices(attempt);
  const legs: NamedPrice[] = [];
  if (bracket.takeProfit) legs.push({ label: 'take-profit price', price: bracket.takeProfit });
  if (bracket.stopLoss) legs.push({ label: 'stop-loss price', price: bracket.stopLoss });
  // A stop-limit stop-loss rests at its limit once triggered: the exchange takes that price too.
  if (bracket.stopLossLimit) legs.push({ label: 'stop-loss limit price', price: bracket.stopLossLimit });
  return [...entryPrices(attempt), ...legs];
};

// --- the checks, in RISK_CHECK_ORDER ---

const lockMessage = (lockedUntil: Date) =>
  `Trading is locked by the emergency lock until ${lockedUntil.toISOString()}; until then buys are refused (sells of what is held and closes are accepted)`;

/**
 * A lock refuses what adds risk, never an exit (DESIGN §6 "Kill switch"). Positions are long-only
 * and a sell may never exceed what is available to sell (the funds rule), so every sell that
 * passes the later checks reduces a position: the lock judges buys only.
 */
const checkEmergencyLock: Check = ({ lockedUntil, at, side }) => {
  if (side === 'sell' || !lockedUntil || at >= lockedUntil) return undefined;
  return lockMessage(lockedUntil);
};

const checkMarketHours: Check = ({ assetClass, at }, { marketHours }) => {
  if (marketHours === 'ignore') return undefined;
  const session = marketSession({ assetClass, at });
  if (session.open) return undefined;
  return `The ${assetClass} market is closed at ${at.toISOString()}; it next opens at ${session.opensAt.toISOString()}`;
};

const bandBreach = (price: Decimal, { lower, upper }: PriceLimits): string | undefined => {
  if (price.gt(upper)) return `above the upper price limit ${upper.toFixed()}`;
  if (price.lt(lower)) return `below the lower price limit ${lower.toFixed()}`;
  return undefined;
};

/**
 * The prices the band judges: a market order's is the one it would fill at (the exchange fills
 * nothing outside the band, so a market buy priced past the upper limit could never fill there).
 */
const bandPrices = (attempt: RiskAttempt): NamedPrice[] => {
  if (attempt.orderType !== 'market') return entryPrices(attempt);
  const { side, referencePrice, assetClass } = attempt;
  return [{ label: 'expected fill price', price: executionPrice({ side, referencePrice, tickSize: tickAtOf(attempt), profile: defaultProfileFor(assetClass) }) }];
};

/** KRX refuses order prices outside the day's band, so the order could never rest there. */
const checkPriceLimit: Check = (attempt) => {
  const { assetClass, previousClose } = attempt;
  if (assetClass !== 'kr_equity' || !previousClose) return undefined;
  const limits = krxPriceLimits(previousClose, tickAtOf(attempt));
  // Bracket children are left out: they are placed after the entry fills, maybe on a later day.
  for (const { label, price } of bandPrices(attempt)) {
    const breach = bandBreach(price, limits);
    if (breach) return `The ${label} ${price.toFixed()} is ${breach} of the day (previous close ${previousClose.toFixed()} ± 30 %)`;
  }
  return undefined;
};

/** A trail as a price distance: the order's own (a trailing stop) or its bracket's trailing leg's. */
const trailPriceOf = ({ trailPrice, bracket }: RiskAttempt): Decimal | undefined => trailPrice ?? (bracket?.trail && 'price' in bracket.trail ? bracket.trail.price : undefined);

const checkTickSize: Check = (attempt) => {
  const trailPrice = trailPriceOf(attempt);
  return offGridReason(attempt, orderPrices(attempt)) ?? (trailPrice && offGridTrailReason(attempt, trailPrice, attempt.referencePrice));
};

/**
 * A buy priced as the simulator would fill it: slippage, the tick grid and the asset class's
 * fees. A limit caps the price; a stop buy enters at its stop, or at the market when that is
 * already higher. A stop_limit's limit is not applied: the broker layer collapses it to a stop.
 */
const expectedBuyFill = (attempt: RiskAttempt): Fill => {
  const { referencePrice, stopPrice } = attempt;
  return computeFill({
    side: 'buy',
    qty: attempt.qty,
    referencePrice: isStopEntry(attempt) && stopPrice ? Decimal.max(stopPrice, referencePrice) : referencePrice,
    tickSize: tickAtOf(attempt),
    profile: defaultProfileFor(attempt.assetClass),
    limitPrice: attempt.orderType === 'limit' ? attempt.limitPrice : undefined,
  });
};

const checkBuyingPower = (attempt: RiskAttempt): string | undefined => {
  const fill = expectedBuyFill(attempt);
  const { buyingPower } = attempt.account;
  if (fill.notional.plus(fill.fee).lte(buyingPower)) return undefined;
  return buyRefusalMessage(fill, buyingPower);
};

/** The symbol's working orders, the one a replace changes left out. */
const workingOf = ({ position }: RiskAttempt): readonly WorkingOrder[] => (position ? position.working.filter((order) => order.id !== position.except) : []);

/** No shorting: a sell may use what is held and not already held by working sells (an OCO pair once). */
const checkHeldQty = (attempt: RiskAttempt): string | undefined => {
  const symbol = attempt.position?.symbol ?? '';
  const sellable = sellableOf(attempt.heldQty, workingOf(attempt), symbol);
  if (attempt.qty.lte(sellable.available)) return undefined;
  return sellRefusalMessage(attempt.qty, symbol, sellable);
};

const checkFunds: Check = (attempt) => (attempt.side === 'buy' ? checkBuyingPower(attempt) : checkHeldQty(attempt));

/**
 * Sizing per position: the buy's risk (against its bracket's stop leg; its own stop_price is its
 * entry, never its protection) added to what the position risks already with its held quantity
 * and working buys. Sells shrink a long-only position, so they are never refused here, nor is a
 * buy that adds no risk, even to a position over the cap.
 */
const checkPositionSizing: Check = (attempt, { defaultStopPct, maxRiskPerTradePct }) => {
  if (attempt.side === 'sell') return undefined;
  const entry = expectedBuyFill(attempt).price;
  const own = riskOf(attempt.qty, entry, bracketStopOf(attempt.bracket, entry), defaultStopPct);
  if (own.amount.lte(0)) return undefined;
  const symbol = attempt.position?.symbol ?? '';
  const before = positionRisk({ heldQty: attempt.heldQty, currentPrice: attempt.referencePrice, working: workingOf(attempt) }, symbol, defaultStopPct);
  const after = before.plus(own.amount);
  const { equity } = attempt.account;
  const allowed = percentOf(equity, maxRiskPerTradePct);
  if (after.lte(allowed)) return undefined;
  const cap = `more than ${maxRiskPerTradePct.toFixed()} % of the equity ${equity.toFixed()} (${allowed.toFixed()})`;
  if (before.isZero()) return `The buy risks ${own.amount.toFixed()} (${own.formula}), ${cap}`;
  return (
    `The position would risk ${after.toFixed()} with the buy (the buy ${own.amount.toFixed()}: ${own.formula}; ` +
    `what is held and the working buys ${before.toFixed()}), ${cap}`
  );
};

/**
 * The daily loss bound (RISK_DAILY_LOSS_LIMIT_PCT, 5 by default): an operator's setting that refuses
 * new buys at placement. It is not the kill switch's −4 %/−5 % lines (controls/kill-switch-lines.ts),
 * which the interface fixes and which act on the account after fills (alert, lock, liquidation):
 * both read the same day-start snapshot and today's flows, and tuning this bound must not move the
 * kill switch.
 */
const checkDailyLoss: Check = ({ side, account, dayStartEquity, dayFlows }, { dailyLossLimitPct }) => {
  if (side === 'sell') return undefined;
  // Without a snapshot this is the day's first evaluation: its equity is the start, flows and all.
  const pnlPct = dayStartEquity ? dailyPnlPct({ equity: account.equity, dayStartEquity, flows: dayFlows ?? 0 }) : null;
  if (pnlPct === null || pnlPct.gt(dailyLossLimitPct.negated())) return undefined;
  return `Today's P&L is ${showPct(pnlPct)} %, at or below the daily loss limit of -${dailyLossLimitPct.toFixed()} %; new buys are refused until 00:00 UTC`;
};

const CHECKS: Record<TRiskRule, Check> = {
  emergency_lock: checkEmergencyLock,
  market_hours: checkMarketHours,
  price_limit: checkPriceLimit,
  tick_size: checkTickSize,
  funds: checkFunds,
  position_sizing: checkPositionSizing,
  daily_loss: checkDailyLoss,
};

/** Runs the checks in order and answers the first refusal, or ok. */
export const checkRisk = (attempt: RiskAttempt, settings: RiskSettings): RiskVerdict => {
  for (const rule of RISK_CHECK_ORDER) {
    const reason = CHECKS[rule](attempt, settings);
    if (reason !== undefined) return { ok: false, code: CODE_OF[rule], rule, message: reason };
  }
  return { ok: true };
};

/** The error the order gate throws for a refusal (422 with the refusal's code). */
export const riskRefusalError = ({ code, message }: RiskRefusal): AppError => new AppError(code, message);

/** The refusal of a running emergency lock, where it is found outside checkRisk (the intent's own check). */
export const emergencyLockError = (lockedUntil: Date): AppError => riskRefusalError({ ok: false, code: CODE_OF.emergency_lock, rule: 'emergency_lock', message: lockMessage(lockedUntil) });

export type RiskConfig = Pick<Config, 'RISK_MARKET_HOURS' | 'RISK_DEFAULT_STOP_PCT' | 'RISK_MAX_RISK_PER_TRADE_PCT' | 'RISK_DAILY_LOSS_LIMIT_PCT'>;

/** The settings from the validated configuration (its percentages are exact decimal text). */
export const riskSettingsFromConfig = (config: RiskConfig): RiskSettings => ({
  marketHours: config.RISK_MARKET_HOURS,
  defaultStopPct: new ExactDecimal(config.RISK_DEFAULT_STOP_PCT),
  maxRiskPerTradePct: new ExactDecimal(config.RISK_MAX_RISK_PER_TRADE_PCT),
  dailyLossLimitPct: new ExactDecimal(config.RISK_DAILY_LOSS_LIMIT_PCT),
});
