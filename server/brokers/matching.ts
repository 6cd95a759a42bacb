// The simulated broker's matching rules as pure functions: when one order fills against one
// price observation, the OCO children of a bracket, and the order status machine with its events.
import { Decimal } from 'decimal.js';
import { ontoGrid, type TOrderSide, type TTickSizeAt } from './fills.ts';
import { ExactDecimal } from '../decimal.ts';

/**
 * Order types as the broker layer sees them. stop_limit arrives collapsed to stop (the
 * interface's rule) with its limit kept in metadata.stop_limit_price: a stop without one is a
 * market order once triggered; with one it rests as a limit at that price (DESIGN §6). A
 * trailing_stop is a stop whose stop follows the price (`followTrail`): a market order once triggered.
 */
export type TBrokerOrderType = 'market' | 'limit' | 'stop' | 'trailing_stop';
export type TTimeInForce = 'day' | 'gtc' | 'ioc' | 'fok';

export interface MatchableOrder {
  side: TOrderSide;
  orderType: TBrokerOrderType;
  timeInForce: TTimeInForce;
  qty: Decimal;
  filledQty: Decimal;
  limitPrice?: Decimal | null | undefined;
  stopPrice?: Decimal | null | undefined;
  /** A stop_limit's limit (metadata.stop_limit_price): once triggered, the stop rests as a limit there. */
  stopLimit?: Decimal | null | undefined;
  /** Whether a stop_limit's stop has triggered already (it then is a limit, whatever the price does to the stop). */
  triggered?: boolean | undefined;
}

export interface PriceObservation {
  price: Decimal;
  /**
   * The most a resting order can take at this observation; undefined is unlimited. It bounds
   * limit orders and triggered stop_limits only (see `evaluate`).
   */
  liquidity?: Decimal | undefined;
  /** The instrument's lot size: a partial fill is cut down to whole lots. */
  lotSize?: Decimal | undefined;
}

export type TMatchOutcome =
  /**
   * Fill `fillQty` taken against `fillReference` (the fill arithmetic adds slippage and fees).
   * With `thenCancel` the unfilled rest is canceled; without it, a rest left over keeps resting.
   */
  | { kind: 'fill'; fillQty: Decimal; fillReference: Decimal; thenCancel?: 'ioc' }
  | { kind: 'cancel'; cancel: 'ioc' | 'fok' }
  | { kind: 'rest'; rest: true }
  /** A stop_limit's stop triggers with its limit out of reach: it rests as a limit from now on. */
  | { kind: 'trigger' };

const REST: TMatchOutcome = { kind: 'rest', rest: true };
const TRIGGER: TMatchOutcome = { kind: 'trigger' };

/** Whether the price reaches a limit on this side: a buy's at or below it, a sell's at or above it. */
const withinLimit = (side: TOrderSide, limit: Decimal, price: Decimal) => (side === 'buy' ? price.lte(limit) : price.gte(limit));
/** Whether the price reaches a stop: a buy's at or above it, a sell's at or below it. */
/** Whether a price reaches a stop: a buy's at or above it, a sell's at or below (the order emulator asks it too). */
export const reachesStop = (side: TOrderSide, stop: Decimal, price: Decimal): boolean => (side === 'buy' ? price.gte(stop) : price.lte(stop));
const stopReached = (order: MatchableOrder, price: Decimal) => reachesStop(order.side, requiredPrice(order, 'stopPrice'), price);
/** A stop that becomes a limit once triggered (a stop_limit), rather than a market order. */
const isStopLimit = (order: MatchableOrder): order is MatchableOrder & { stopLimit: Decimal } => order.orderType === 'stop' && order.stopLimit != null;

const requiredPrice = (order: MatchableOrder, field: 'limitPrice' | 'stopPrice'): Decimal => {
  const value = order[field];
  if (value == null) throw new Error(`a ${order.orderType} order needs ${field}`);
  return value;
};

/** Where this observation would fill the order, or undefined when it does not reach it. */
const reachablePrice = (order: MatchableOrder, price: Decimal): Decimal | undefined => {
  switch (order.orderType) {
    case 'market':
      return price;
    case 'limit':
      // Once the limit is reached the observed price is the better of the two: a price that gaps
      // through the limit fills there, not at the limit.
      return withinLimit(order.side, requiredPrice(order, 'limitPrice'), price) ? price : undefined;
    case 'stop':
    case 'trailing_stop': {
      if (!order.triggered && !stopReached(order, price)) return undefined;
      // Triggered, a stop_limit is a limit at its limit price: it never fills beyond it.
      if (isStopLimit(order)) return withinLimit(order.side, order.stopLimit, price) ? price : undefined;
      // Triggered, a stop is a market order: it fills at the observed price, which after a gap
      // is worse than the stop, as on a real exchange.
      return price;
    }
  }
};

const availableQty = ({ liquidity, lotSize }: PriceObservation): Decimal | undefined => {
  if (liquidity === undefined) return undefined;
  const positive = ExactDecimal.max(liquidity, 0);
  return lotSize === undefined ? positive : positive.toNearest(lotSize, Decimal.ROUND_DOWN);
};

/**
 * What one price observation does to one order (its unfilled rest).
 * - market: fills all of the rest at once, whatever the liquidity. The liquidity models depth
 *   resting at a price, which a market order walks through; its cost is the profile's slippage.
 *   A market order that rested would wait for nothing: it has no price to wait for.
 * - limit: fills when the price reaches the limit (buy: price ≤ limit, sell: price ≥ limit), at
 *   most `liquidity` per observation, so a large resting order fills across several ticks.
 * - stop: triggers when the price reaches the stop (buy: price ≥ stop, sell: price ≤ stop) and then
 *   fills as a market order; a stop_limit then is a limit at its limit price (`trigger` when the
 *   price is beyond it: it rests, triggered, and fills like a limit from the next observations).
 * - trailing_stop: as a stop, at the stop `followTrail` has moved it to for this observation.
 * - day and gtc rest alike here; ending a day order at the session close is the expiry job's
 *   part (the `expire` transition).
 * - ioc fills what it can at its first observation and cancels the rest; fok fills everything
 *   then or cancels. An ioc or fok stop that is not triggered at once therefore cancels: it could
 *   not fill immediately.
 */
export const evaluate = (order: MatchableOrder, observation: PriceObservation): TMatchOutcome => {
  const remaining = new ExactDecimal(order.qty).minus(order.filledQty);
  if (remaining.lte(0)) throw new Error('evaluate called on an order with nothing left to fill');
  const immediate = order.timeInForce === 'ioc' || order.timeInForce === 'fok' ? order.timeInForce : undefined;
  const fillReference = reachablePrice(order, observation.price);
  if (fillReference === undefined) {
    if (immediate) return { kind: 'cancel', cancel: immediate };
    return isStopLimit(order) && !order.triggered && stopReached(order, observation.price) ? TRIGGER : REST;
  }

  const available = order.orderType === 'limit' || isStopLimit(order) ? availableQty(observation) : undefined;
  const fillQty = available === undefined ? remaining : ExactDecimal.min(remaining, available);
  const complete = fillQty.eq(remaining);
  if (immediate === 'fok' && !complete) return { kind: 'cancel', cancel: 'fok' };
  if (fillQty.isZero()) return immediate ? { kind: 'cancel', cancel: immediate } : REST;
  if (immediate === 'ioc' && !complete) return { kind: 'fill', fillQty, fillReference, thenCancel: 'ioc' };
  return { kind: 'fill', fillQty, fillReference };
};

// ---------------------------------------------------------------------------------------------
// Trailing stops

/** A trailing stop's distance from its mark: a percent of the mark (0 < p ≤ 50), or a price. */
export type TTrail = { percent: Decimal } | { price: Decimal };

/** The most a trail_percent may be (DESIGN: advanced orders). */
export const MAX_TRAIL_PERCENT = 50;

/**
 * Where a trail puts the stop from its mark (a sell's highest price seen, a buy's lowest): a
 * sell's mark × (1 − p/100) or mark − trail, a buy's mark × (1 + p/100) or mark + trail. It goes
 * onto the grid away from the market (a sell's down, a buy's up), so it is never tighter than
 * asked. A sell's trail as large as its mark leaves no stop: 0, which no price reaches.
 */
export const trailStopOf = ({ side, mark, trail, tickSize }: { side: TOrderSide; mark: Decimal; trail: TTrail; tickSize: Decimal | TTickSizeAt }): Decimal => {
  const distance = 'percent' in trail ? new ExactDecimal(mark).times(trail.percent).dividedBy(100) : trail.price;
  const stop = side === 'sell' ? new ExactDecimal(mark).minus(distance) : new ExactDecimal(mark).plus(distance);
  return stop.lte(0) ? new ExactDecimal(0) : ontoGrid(stop, tickSize, side === 'sell' ? 'down' : 'up');
};

/** Whether the price is beyond the mark: a new high for a sell's trail, a new low for a buy's. */
export const marksNew = (side: TOrderSide, mark: Decimal, price: Decimal): boolean => (side === 'sell' ? price.gt(mark) : price.lt(mark));

export interface TrailingState {
  side: TOrderSide;
  trail: TTrail;
  /** The mark that set `stopPrice`. */
  hwm: Decimal;
  stopPrice: Decimal;
}

/**
 * What one observation does to a trailing stop before it is matched (`evaluate`, at the stop
 * this answers): a new high (sell) or low (buy) moves the mark and the stop with it; anything
 * else leaves both. `undefined` when the stop does not move, so a flat or retreating price, or a
 * new mark the grid rounds to the same stop, changes nothing. The stop never loosens.
 */
export const followTrail = (state: TrailingState, price: Decimal, tickSize: Decimal | TTickSizeAt): { hwm: Decimal; stopPrice: Decimal } | undefined => {
  if (!marksNew(state.side, state.hwm, price)) return undefined;
  const stop = trailStopOf({ side: state.side, mark: price, trail: state.trail, tickSize });
  const tighter = state.side === 'sell' ? stop.gt(state.stopPrice) : stop.lt(state.stopPrice);
  return tighter ? { hwm: price, stopPrice: stop } : undefined;
};

// ---------------------------------------------------------------------------------------------
// Brackets

export interface BracketSpec {
  /** The take-profit leg's limit; null for a bracket (an OTO) with only a stop leg. */
  takeProfit: Decimal | null;
  /** The stop leg's stop; null where the leg trails (`trail`) or there is none (an OTO with only a take-profit). */
  stopLoss: Decimal | null;
  stopLossLimit?: Decimal | null | undefined;
  /** A trailing stop leg's trail, from the entry's fill (DESIGN §6: what Alpaca cannot do inside a bracket). */
  trail?: TTrail | null | undefined;
}

/**
 * Why a bracket cannot protect this entry, or undefined when it can. Long-only: brackets go on
 * buys, with stop_loss < entry reference < take_profit. The entry reference is the price the
 * entry is expected at: its limit, its stop, or the current price for a market order. Either leg
 * may be left out (an OTO), not both; a trailing stop leg has no price to place yet.
 */
export const validateBracket = ({ side, entryReference, bracket }: { side: TOrderSide; entryReference: Decimal; bracket: BracketSpec }): string | undefined => {
  if (side !== 'buy') return 'a bracket protects a long entry: only buy orders take one';
  const { takeProfit, stopLoss, stopLossLimit, trail } = bracket;
  if (takeProfit === null && stopLoss === null && !trail) return 'a bracket needs a take_profit or a stop leg';
  if (stopLoss !== null && trail) return 'a bracket stop leg is a stop_loss or a trail, not both';
  if (stopLoss?.lte(0) || takeProfit?.lte(0)) return 'bracket prices must be greater than 0';
  if (stopLossLimit != null && stopLossLimit.lte(0)) return 'bracket stop_loss_limit must be greater than 0';
  if (stopLossLimit != null && stopLoss === null) return 'bracket stop_loss_limit belongs to a stop_loss';
  if (stopLoss && !stopLoss.lt(entryReference)) return `bracket stop_loss ${stopLoss.toFixed()} must be below the entry price ${entryReference.toFixed()}`;
  if (takeProfit && !takeProfit.gt(entryReference)) return `bracket take_profit ${takeProfit.toFixed()} must be above the entry price ${entryReference.toFixed()}`;
  return undefined;
};

export type TBracketLeg = 'take_profit' | 'stop_loss';

export interface BracketChild {
  leg: TBracketLeg;
  side: 'sell';
  orderType: 'limit' | 'stop' | 'trailing_stop';
  qty: Decimal;
  limitPrice: Decimal | null;
  /** A trailing leg's first stop: its trail from the mark. */
  stopPrice: Decimal | null;
  timeInForce: 'gtc';
  /** stop_limit_price as a decimal string when the stop-loss came with a limit; a trailing leg's trail and mark. */
  metadata: { stop_limit_price?: string; trail_percent?: string; trail_price?: string; hwm?: string };
}

export interface OcoPair {
  takeProfit: BracketChild;
  stopLoss: BracketChild;
}

/**
 * The legs protecting a filled long entry, sized to the quantity actually filled (an entry that
 * ended partly filled is protected for what it holds): a take-profit limit sell and a stop-loss
 * sell (a stop, a stop-limit, or a trailing stop whose mark starts at `mark`, the entry's fill
 * price), either of which an OTO leaves out; two legs are an OCO pair. Children are gtc whatever
 * the entry's time in force: a protective exit must not lapse at the session close while the
 * position stays open.
 */
export const bracketLegs = (entry: { side: TOrderSide; filledQty: Decimal }, bracket: BracketSpec, { mark, tickSize }: { mark: Decimal; tickSize: Decimal | TTickSizeAt }): BracketChild[] => {
  if (entry.side !== 'buy') throw new Error('bracket children protect a long entry: the entry must be a buy');
  if (entry.filledQty.lte(0)) throw new Error('bracket children need a filled entry');
  const legs: BracketChild[] = [];
  if (bracket.takeProfit) legs.push({ side: 'sell', qty: entry.filledQty, timeInForce: 'gtc', leg: 'take_profit', orderType: 'limit', limitPrice: bracket.takeProfit, stopPrice: null, metadata: {} });
  const stop = stopLegOf(entry.filledQty, bracket, { mark, tickSize });
  if (stop) legs.push(stop);
  return legs;
};

/**
 * A sell's stop leg of `qty`: a stop at stopLoss (a stop-limit with stopLossLimit), or a trailing
 * stop whose mark starts at `mark`; none when the spec has neither. A bracket's (its mark the
 * entry's fill) and an OCO's (its mark the price at placement).
 */
export const stopLegOf = (qty: Decimal, bracket: BracketSpec, { mark, tickSize }: { mark: Decimal; tickSize: Decimal | TTickSizeAt }): BracketChild | undefined => {
  const common = { side: 'sell', qty, timeInForce: 'gtc', leg: 'stop_loss', limitPrice: null } as const;
  if (bracket.trail) {
    const { trail } = bracket;
    const kept = 'percent' in trail ? { trail_percent: trail.percent.toFixed() } : { trail_price: trail.price.toFixed() };
    return { ...common, orderType: 'trailing_stop', stopPrice: trailStopOf({ side: 'sell', mark, trail, tickSize }), metadata: { ...kept, hwm: mark.toFixed() } };
  }
  if (!bracket.stopLoss) return undefined;
  return { ...common, orderType: 'stop', stopPrice: bracket.stopLoss, metadata: bracket.stopLossLimit == null ? {} : { stop_limit_price: bracket.stopLossLimit.toFixed() } };
};

/**
 * Why an OCO cannot be placed, or undefined when it can (DESIGN §6: two exits of a held
 * position, in Alpaca's shape): a sell limit, the take-profit, with one stop leg below it, which
 * must not trigger at once (a trailing leg's stop is set below the price by its trail).
 */
export const validateOco = ({ side, limitPrice, price, bracket }: { side: TOrderSide; limitPrice: Decimal | null; price: Decimal; bracket: BracketSpec }): string | undefined => {
  if (side !== 'sell' || !limitPrice) return 'an oco is a sell limit (the take-profit) with a stop leg';
  if (bracket.takeProfit) return 'an oco takes its take-profit as its limit_price, not in bracket.take_profit';
  if (!bracket.stopLoss && !bracket.trail) return 'an oco needs a stop leg: stop_loss, or a trail';
  if (bracket.stopLoss && bracket.trail) return 'an oco stop leg is a stop_loss or a trail, not both';
  if (bracket.stopLoss?.lte(0)) return 'bracket prices must be greater than 0';
  if (bracket.stopLoss && !bracket.stopLoss.lt(limitPrice)) return `the oco stop_loss ${bracket.stopLoss.toFixed()} must be below its limit_price ${limitPrice.toFixed()}`;
  if (bracket.stopLoss && !bracket.stopLoss.lt(price)) return `the oco stop_loss ${bracket.stopLoss.toFixed()} would trigger immediately at the price ${price.toFixed()}`;
  return undefined;
};

export type TOcoAction = { action: 'cancel'; sibling: BracketChild } | { action: 'resize'; sibling: BracketChild; qty: Decimal };

/**
 * What a fill of one leg does to the other. A full fill closes the protected quantity, so the
 * sibling is canceled. A partial fill (a take-profit limit filling across ticks) shrinks the
 * sibling to what is still held, so the rest of the position stays protected and the two legs
 * can never sell more than is held.
 */
export const onChildFilled = ({ pair, leg, filledQty }: { pair: OcoPair; leg: TBracketLeg; filledQty: Decimal }): TOcoAction => {
  const filled = leg === 'take_profit' ? pair.takeProfit : pair.stopLoss;
  const sibling = leg === 'take_profit' ? pair.stopLoss : pair.takeProfit;
  if (filledQty.lte(0) || filledQty.gt(filled.qty)) throw new Error(`filled quantity ${filledQty.toFixed()} is outside the leg's ${filled.qty.toFixed()}`);
  const stillHeld = new ExactDecimal(filled.qty).minus(filledQty);
  return stillHeld.isZero() ? { action: 'cancel', sibling } : { action: 'resize', sibling, qty: stillHeld };
};

// ---------------------------------------------------------------------------------------------
// Status

export type TOrderStatus = 'pending' | 'accepted' | 'open' | 'partially_filled' | 'filled' | 'canceled' | 'rejected' | 'expired';

/**
 * Broker events, one per transition. The WebSocket layer sends `expired` as event_type
 * `canceled` with status `expired` (DESIGN §6); this is the broker's own word.
 */
export type TBrokerEventType = 'accepted' | 'open' | 'partial_fill' | 'fill' | 'canceled' | 'rejected' | 'expired';

export type TOrderTrigger =
  | { kind: 'accept' }
  | { kind: 'open' }
  | { kind: 'fill'; fillQty: Decimal }
  | { kind: 'cancel' }
  | { kind: 'reject' }
  | { kind: 'expire' };

export interface OrderState {
  status: TOrderStatus;
  qty: Decimal;
  filledQty: Decimal;
}

export type TTransition = { ok: true; status: TOrderStatus; filledQty: Decimal; event: TBrokerEventType } | { ok: false; reason: string };

const TERMINAL: ReadonlySet<TOrderStatus> = new Set(['filled', 'canceled', 'rejected', 'expired']);

/** A finished order takes no further transition (and cannot be canceled). */
export const isTerminal = (status: TOrderStatus): boolean => TERMINAL.has(status);

// Where each trigger may come from. A fill may arrive on an accepted order (the simulator fills
// a market order before anything else happens); a broker may still reject an order it had
// accepted, but not one already working on the book. A pending order is still on its way to the
// broker: it is canceled once the broker has answered, not before.
const ALLOWED_FROM: Record<TOrderTrigger['kind'], readonly TOrderStatus[]> = {
  accept: ['pending'],
  open: ['accepted'],
  fill: ['accepted', 'open', 'partially_filled'],
  cancel: ['accepted', 'open', 'partially_filled'],
  reject: ['pending', 'accepted'],
  expire: ['accepted', 'open', 'partially_filled'],
};

/**
 * The order after one trigger, with the event that the transition emits; `ok: false` with a
 * reason when the trigger does not apply (a fill on a canceled order, a fill beyond the order's
 * quantity, a cancel of a finished order). A canceled or expired order keeps what it filled.
 */
export const transition = (state: OrderState, trigger: TOrderTrigger): TTransition => {
  if (!ALLOWED_FROM[trigger.kind].includes(state.status)) {
    return { ok: false, reason: `cannot ${trigger.kind} an order that is ${state.status}` };
  }
  switch (trigger.kind) {
    case 'accept':
      return { ok: true, status: 'accepted', filledQty: state.filledQty, event: 'accepted' };
    case 'open':
      return { ok: true, status: 'open', filledQty: state.filledQty, event: 'open' };
    case 'fill': {
      if (trigger.fillQty.lte(0)) return { ok: false, reason: 'a fill must have a positive quantity' };
      const filledQty = new ExactDecimal(state.filledQty).plus(trigger.fillQty);
      if (filledQty.gt(state.qty)) {
        return { ok: false, reason: `fill of ${trigger.fillQty.toFixed()} would exceed the order quantity ${state.qty.toFixed()}` };
      }
      return filledQty.eq(state.qty)
        ? { ok: true, status: 'filled', filledQty, event: 'fill' }
        : { ok: true, status: 'partially_filled', filledQty, event: 'partial_fill' };
    }
    case 'cancel':
      return { ok: true, status: 'canceled', filledQty: state.filledQty, event: 'canceled' };
    case 'reject':
      return { ok: true, status: 'rejected', filledQty: state.filledQty, event: 'rejected' };
    case 'expire':
      return { ok: true, status: 'expired', filledQty: state.filledQty, event: 'expired' };
  }
};
