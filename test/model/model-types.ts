// The vocabulary of the account model (account-model.ts): the instrument and fee numbers, the
// rule switches, orders, requests and answers. Like the model, it imports nothing from server/.
import { Decimal } from 'decimal.js';

export const D = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_EVEN });

/** The instrument and profile the model trades: crypto (always open), the crypto_default fees. */
export const PARAMS = {
  tick: new D('0.01'),
  lot: new D('0.00001'),
  /** crypto_default: a 0.1 % taker fee on both sides, exact (no rounding), no sell tax. */
  commission: new D('0.001'),
  /** Five basis points against the taker, then onto the tick grid away from the taker. */
  slippage: new D('0.0005'),
  initialCash: new D('100000'),
  defaultStopPct: new D('5'),
  maxRiskPct: new D('2'),
} as const;

/**
 * One switch per DESIGN rule the service may not follow yet. Off, the test's generators steer
 * around every command whose answer or resulting state the rule decides (see `blockers`), so the
 * random suite passes; on, the model holds the service to it. Turning a rule on is one line in
 * account.model.test.ts.
 */
export interface Rules {
  /** Buying power reserves working buys (cash − Σ remaining × reserve price + fee). */
  reservation: boolean;
  /** Quantity available to sell counts a bracket's OCO pair once. */
  ocoAvailability: boolean;
  /** A lock refuses buys, never exits: sells and closes under a lock meet the other checks only. */
  lockExits: boolean;
  /** A close cancels the symbol's working sells (bracket children too), then sells all at market. */
  closeCancelsSells: boolean;
  /** A replace is judged as the order it would become by every gate (lock, funds, sizing). */
  replaceGates: boolean;
  /** A stop that would trigger at once is refused by the broker (BROKER_REJECTED). */
  stopTriggerReject: boolean;
  /** Position sizing holds per position (held + working buys), not per order. */
  positionSizing: boolean;
  /** Prices off the instrument's tick grid are 422 RISK_RULE_VIOLATION for crypto too. */
  tickGrid: boolean;
  /** The lock cancels every working buy and keeps every working sell (not only bracket children). */
  lockKeepsSells: boolean;
  /** Trailing stops (sell and buy, percent and price trails): placed at their trail from the price, tightened by new highs (lows), triggered at market. */
  trailingStops: boolean;
  /** A bracket whose stop leg trails from the entry's fill (`bracket.trail_*` in place of `stop_loss`). */
  trailingLegs: boolean;
  /** order_class oco: a held position's sell limit and its stop leg (a stop or a trail), working at once, counted once, ending together. */
  ocoOrders: boolean;
  /** order_class oto: an entry and one exit leg (take-profit only, or a stop leg only). */
  otoOrders: boolean;
  /** A replace of a trailing stop's trail: the stop set again from its mark (refused when it would trigger at once). */
  trailReplace: boolean;
  /** A replace of one leg of an OCO pair releases the pair's hold (its own), not only the leg's: the sibling's units are the leg's. */
  pairLegReplace: boolean;
}
export type TRule = keyof Rules;

export type TSide = 'buy' | 'sell';
/** `trailing` is the wire's `trailing_stop`. */
export type TKind = 'market' | 'limit' | 'stop' | 'trailing';
/** A trailing stop's distance from its mark: a percent of it, or a price. */
export type Trail = { percent: Decimal } | { price: Decimal };
/** An order class beyond simple and bracket (a bracket is implied by its `bracket`). */
export type TClass = 'oto' | 'oco';
/** A bracket's legs: a take-profit, a stop leg (a stop_loss, or a trail from the entry's fill); an oto has one of the two, an oco's take-profit is its limit. */
export interface BracketTerms {
  tp: Decimal | null;
  sl: Decimal | null;
  trail: Trail | null;
}
/** Working = accepted or open at the service (the model does not tell them apart). */
export type TStatus = 'working' | 'filled' | 'canceled' | 'rejected';
export type TLeg = 'tp' | 'sl';

export interface ModelOrder {
  id: string;
  side: TSide;
  kind: TKind;
  qty: Decimal;
  limit: Decimal | null;
  stop: Decimal | null;
  bracket: BracketTerms | null;
  status: TStatus;
  filledQty: Decimal;
  leg?: TLeg;
  sibling?: string;
  /** An oto entry, or an oco's limit (its stop leg is `${id}:sl`). */
  cls?: TClass;
  /** A trailing stop's trail and mark (a sell's highest price seen, a buy's lowest); its current stop is `stop`. */
  trail?: Trail;
  hwm?: Decimal;
}

export interface PlaceRequest {
  id: string;
  side: TSide;
  kind: TKind;
  qty: Decimal;
  limit?: Decimal | undefined;
  stop?: Decimal | undefined;
  bracket?: BracketTerms | undefined;
  /** A trailing stop's trail (kind `trailing`). */
  trail?: Trail | undefined;
  cls?: TClass | undefined;
}

export interface ReplaceRequest {
  id: string;
  qty?: Decimal | undefined;
  limit?: Decimal | undefined;
  stop?: Decimal | undefined;
  /** A trailing stop's new trail. */
  trail?: Trail | undefined;
}

/** What the service answers: accepted, or refused with the error code (a broker refusal also leaves a rejected order). */
export type TOutcome = { ok: true } | { ok: false; code: string };

/** A verdict and the rules it (or the state it leaves) depends on beyond what the service already does. */
export interface Judgement {
  outcome: TOutcome;
  blockers: TRule[];
}
