// The one interface every broker adapter implements (the simulator, and later the US, KR and
// crypto adapters): what the order service, the key test and the events service call.
import type { TBar } from '../marketdata/bars.ts';
import type { TBrokerEvent, TBrokerOrderStatus, TTradingMode } from '../../contracts/brokers.ts';
import type { TAssetClass } from '../../contracts/common.ts';
import type { TOrderType } from '../../contracts/orders.ts';
import type { TBrokerOrderType } from './matching.ts';

export type { TBrokerEvent, TBrokerOrderStatus, TTradingMode };

/**
 * An order as the broker is asked to take it. stop_limit arrives collapsed to stop. A
 * trailing_stop names exactly one of metadata.trail_percent (0 < p ≤ 50) or metadata.trail_price
 * (> 0), decimal strings or numbers, and no stop, limit or bracket: the broker sets its stop.
 */
export interface BrokerOrderRequest {
  clientOrderId: string;
  symbol: string;
  side: 'buy' | 'sell';
  /** Decimal strings throughout. */
  qty: string;
  orderType: TBrokerOrderType;
  timeInForce: 'day' | 'gtc' | 'ioc' | 'fok';
  limitPrice?: string | null;
  stopPrice?: string | null;
  bracket?: BrokerBracket | null;
  /**
   * The legs' class where it is not implied: `oto` (an entry and one exit leg), `oco` (this sell
   * limit and the bracket's stop leg, working at once: one filling cancels the other). A bracket
   * without it is a `bracket`.
   */
  orderClass?: TBrokerOrderClass;
  /** Kept with the order: stop_limit_price of a collapsed stop_limit, report_uuid, ... */
  metadata?: Record<string, unknown>;
}

/** A trail, as a percent of its mark or a price distance (decimal text). */
export type TTrailText = { percent: string } | { price: string };

/**
 * The exits an entry's fill places: a take-profit limit sell and a stop leg (a stop at stopLoss,
 * a stop-limit with stopLossLimit, or a trailing stop by `trail` from the entry's fill price). A
 * `bracket` has both; an `oto` one of them. Decimal strings.
 */
export interface BrokerBracket {
  takeProfit: string | null;
  stopLoss: string | null;
  stopLossLimit: string | null;
  trail?: TTrailText | null | undefined;
}

/** Order classes beyond a simple order (DESIGN §6 "Advanced orders"). */
export type TBrokerOrderClass = 'bracket' | 'oto' | 'oco';

/** An order as the broker's books hold it. */
export interface BrokerOrder {
  brokerOrderId: string;
  clientOrderId: string;
  assetClass: TAssetClass;
  mode: TTradingMode;
  symbol: string;
  side: 'buy' | 'sell';
  /**
   * A trailing_stop reads as a stop at its current stop, its trail and mark in metadata
   * (trail_percent or trail_price, hwm), as a stop_limit reads as a stop with metadata.stop_limit_price.
   */
  orderType: Exclude<TBrokerOrderType, 'trailing_stop'>;
  timeInForce: 'day' | 'gtc' | 'ioc' | 'fok';
  qty: string;
  filledQty: string;
  avgFillPrice: string | null;
  limitPrice: string | null;
  stopPrice: string | null;
  status: TBrokerOrderStatus;
  /** Why the broker ended the order itself, where the adapter can say (its end event's reason). */
  endReason?: string;
  /** The entry of a bracket child. */
  parentId: string | null;
  /** A bracket entry's legs, where the broker reports them (its stop leg bounds the entry's risk). */
  bracket?: { takeProfit: string | null; stopLoss: string | null; trail?: TTrailText | null | undefined } | null;
  metadata: Record<string, unknown>;
  submittedAt: Date;
  updatedAt: Date;
}

export interface BrokerPosition {
  symbol: string;
  qty: string;
  avgEntryPrice: string;
  currentPrice: string;
  realizedPnl: string;
  currency: string;
}

export interface BrokerAccount {
  broker: string;
  paper: boolean;
  currency: string;
  cash: string;
  equity: string;
  buyingPower: string;
  asOf: Date;
  /**
   * When the account was last started over (the simulator's paper reset; real brokers leave it
   * out): the day's flows the daily P&L subtracts are read up to it (controls/day-flows.ts).
   */
  resetAt?: Date | null | undefined;
}

/** One account's equity as its broker reports it, exact decimal text (what the kill switch judges). */
export interface AccountEquity {
  userId: number;
  assetClass: TAssetClass;
  mode: TTradingMode;
  equity: string;
  /** The cash part of `equity`, when the broker gave it (stored with a day-start snapshot). */
  cash?: string | undefined;
  /** As BrokerAccount's: the account's last reset, answered with the equity. */
  resetAt?: Date | null | undefined;
}

/** An account with its positions and working orders, read together (what the risk gate judges an order on). */
export interface BrokerSnapshot {
  account: BrokerAccount;
  positions: BrokerPosition[];
  openOrders: BrokerOrder[];
}

/** A broker's answer to a placement and the events it sent with it (a fill on arrival, say). */
export interface BrokerAnswer {
  order: BrokerOrder;
  events: readonly TBrokerEvent[];
}

/**
 * What we meant to place, as the order's intent records it: a broker that keeps no client order id
 * (KIS) finds an order whose placement answer was lost by these, among its orders of that day.
 */
export interface OrderIntent {
  symbol: string;
  side: 'buy' | 'sell';
  /** A decimal string. */
  qty: string;
  /** When the intent was written, just before the broker was called (the order's submitted_at). */
  sentAt: Date;
}

/** By our client order id, with the intent for a broker that can only match it by its details. */
export type OrderLookup = { brokerOrderId: string } | { clientOrderId: string; intent?: OrderIntent };

/** What a replace changes; a field left out keeps its value. Decimal strings. */
export interface BrokerReplaceRequest {
  brokerOrderId: string;
  /** Our client order id of the order: a broker whose successor needs an id of its own (Alpaca) derives it from this. */
  clientOrderId?: string;
  qty?: string;
  /** null only where the order type takes no limit price (a limit order keeps needing one). */
  limitPrice?: string | null;
  /** null only where the order type takes no stop price (a stop order keeps needing one). */
  stopPrice?: string | null;
  /** A trailing stop's new trail (its stop is set again from its mark); no other type takes one. */
  trail?: { percent: string } | { price: string };
}

/** The type a broker is sent: a stop_limit travels as a stop with its limit in metadata. */
export const brokerOrderTypeOf = (orderType: TOrderType): TBrokerOrderType => (orderType === 'stop_limit' ? 'stop' : orderType);

/** Every order class: a broker that holds brackets, otos and ocos as its own (Alpaca, the simulator). */
export const ALL_ORDER_CLASSES: ReadonlySet<TBrokerOrderClass> = new Set(['bracket', 'oto', 'oco']);
export const NO_ORDER_CLASSES: ReadonlySet<TBrokerOrderClass> = new Set();

/** The order types every broker holds. */
export const UNTRIGGERED_ORDER_TYPES: ReadonlySet<TBrokerOrderType> = new Set(['market', 'limit']);
/** Market, limit and stop (a stop_limit travels as a stop with its limit in metadata). */
export const BASIC_ORDER_TYPES: ReadonlySet<TBrokerOrderType> = new Set([...UNTRIGGERED_ORDER_TYPES, 'stop']);
/** The basic types and a trailing stop (the simulator, Alpaca). */
export const TRAILING_ORDER_TYPES: ReadonlySet<TBrokerOrderType> = new Set([...BASIC_ORDER_TYPES, 'trailing_stop']);

export interface Broker {
  readonly name: string;
  readonly assetClass: TAssetClass;
  readonly mode: TTradingMode;
  /**
   * The order types this broker holds natively (a stop_limit is sent as a stop with its limit in
   * metadata). The order service refuses another type before it calls the broker (422
   * BROKER_REJECTED naming the type).
   */
  readonly nativeOrderTypes: ReadonlySet<TBrokerOrderType>;
  /**
   * Where what the broker holds depends on the market (an exchange whose markets list their own
   * order types): whether it holds a stop (a stop market order) and a stop-limit for this symbol,
   * in place of `nativeOrderTypes`' word on `stop`. Throws BrokerRejectedError for an unknown symbol.
   */
  nativeStopsOf?(symbol: string): Promise<{ stop: boolean; stopLimit: boolean }>;
  /** The order classes it holds natively (a bracket's legs placed by the broker on the entry's fill); an `oto` or a trailing leg it lacks is refused as a type is. */
  readonly nativeOrderClasses: ReadonlySet<TBrokerOrderClass>;
  /** Whether a bracket's stop leg may trail: Alpaca holds trailing stops and brackets, but not one inside the other. */
  readonly nativeTrailingLegs: boolean;
  /**
   * Whether the broker refuses a sell of more than the account holds free of its working sells (a
   * spot exchange; a cash account at KIS), as the funds rule does: a margin account that may sell
   * short (Alpaca) leaves it absent. The order emulator's sell children lean on it (risk-gate.ts).
   */
  readonly sellsOnlyHeld?: boolean;
  /** Throws BrokerRejectedError (a refusal: unknown symbol, funds) or BrokerUnavailableError. */
  placeOrder(request: BrokerOrderRequest): Promise<BrokerOrder>;
  /** Throws BrokerRejectedError when the order is finished or unknown. */
  cancelOrder(lookup: { brokerOrderId: string }): Promise<BrokerOrder>;
  /**
   * Replaces the qty, limit or stop of a working order (accepted, open or partially filled) and
   * answers the order as replaced; the broker reports a `replaced` event. The simulator keeps the
   * broker order id; a real broker may answer with a new one, which the returned order carries.
   * Throws BrokerRejectedError (nothing changed) when the order is finished, unknown or another
   * account's; when the new qty is not above what already filled or breaks the lot size; when a
   * limit order would lose its limit price or a stop order its stop price; when a buy's new worst
   * cost is more than the cash (the placement's funds rule). BrokerUnavailableError while the
   * asset class is down.
   */
  replaceOrder(request: BrokerReplaceRequest): Promise<BrokerOrder>;
  getOrder(lookup: OrderLookup): Promise<BrokerOrder | undefined>;
  listOpenOrders(): Promise<BrokerOrder[]>;
  positions(): Promise<BrokerPosition[]>;
  account(): Promise<BrokerAccount>;
  /**
   * The account, positions and working orders at once: one round of reads where the broker allows.
   * With a focus, the working orders are at least the focus symbol's: a broker that weighs a read
   * of every symbol's orders heavily (an exchange's per-IP budget) may read only that symbol's.
   */
  snapshot(focus?: { symbol: string }): Promise<BrokerSnapshot>;
  /**
   * Daily bars of the symbol from `from` to `to` (YYYY-MM-DD, both included, the exchange's local
   * dates), oldest first, where the broker serves them (the simulator does not: its bars are ours).
   */
  dailyBars?(symbol: string, from: string, to: string): Promise<TBar[]>;
  /** The price the broker would trade the symbol at now; throws BrokerRejectedError for an unknown symbol. */
  quote(symbol: string): Promise<string>;
  /** This account's events from now on, until the signal aborts. */
  events(signal: AbortSignal): AsyncIterable<TBrokerEvent>;
  /**
   * The symbols' trade prices from now on, as the broker's market data stream sends them, until
   * the signal aborts; the stream keeps itself alive (a watchdog, reconnects backing off with
   * jitter). What the order emulator watches its triggers on (DESIGN §6 "Advanced orders"); a new
   * set of symbols is a new call. Absent where the broker streams no prices (the simulator, whose
   * prices are ours).
   */
  quotes?(symbols: readonly string[], signal: AbortSignal): AsyncIterable<BrokerQuote>;
}

/** One trade price of a symbol from a broker's market data stream. */
export interface BrokerQuote {
  symbol: string;
  /** Decimal text, as the broker sent it (its shortest decimal form where it sent a number). */
  price: string;
  /** When the broker says the trade happened. */
  at: Date;
}

/** The broker refused the request (maps to 422 BROKER_REJECTED). */
export class BrokerRejectedError extends Error {
  override readonly name = 'BrokerRejectedError';
}

/**
 * A refusal the risk gate makes too: funds or units (a buy above the buying power, a sell above
 * what is available: INSUFFICIENT_FUNDS), or any other of its rules (RISK_RULE_VIOLATION,
 * MARKET_CLOSED) where the books judge them under the account's lock for the gate.
 * `gateMessage` is the gate's words for it, so a placement refused under the account's lock
 * answers as the gate does rather than as a broker refusal.
 */
export class FundsRejectedError extends BrokerRejectedError {
  readonly gateMessage: string;
  readonly gateCode: 'INSUFFICIENT_FUNDS' | 'RISK_RULE_VIOLATION' | 'MARKET_CLOSED';
  constructor(message: string, gateMessage: string, gateCode: FundsRejectedError['gateCode'] = 'INSUFFICIENT_FUNDS') {
    super(message);
    this.gateMessage = gateMessage;
    this.gateCode = gateCode;
  }
}

/**
 * The broker could not be reached or failed (maps to 502 BROKER_UNAVAILABLE). Unless `notTaken`
 * says otherwise, the request may have reached the broker and been carried out (a timeout, a
 * connection that broke after sending, a 5xx: exchanges document such a request's outcome as
 * unknown), so a placement that failed so is not known to be unplaced.
 */
export class BrokerUnavailableError extends Error {
  override readonly name = 'BrokerUnavailableError';
  /** The broker certainly did not carry the request out: it was never sent, or the broker refused it unseen (a 429). */
  readonly notTaken: boolean;
  constructor(message: string, options: { notTaken?: boolean } = {}) {
    super(message);
    this.notTaken = options.notTaken ?? false;
  }
}

/** A connection the broker's host refused: nothing was sent. */
export const wasRefusedConnection = (error: unknown): boolean => {
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  return cause?.code === 'ECONNREFUSED' || (error as { code?: unknown } | undefined)?.code === 'ECONNREFUSED';
};

/**
 * The broker has several orders that could be the one asked for, and nothing tells them apart (KIS
 * takes no client order id): no guess is made. `candidates` are their broker order ids.
 */
export class BrokerOrderAmbiguousError extends Error {
  override readonly name = 'BrokerOrderAmbiguousError';
  readonly candidates: readonly string[];
  constructor(message: string, candidates: readonly string[]) {
    super(message);
    this.candidates = candidates;
  }
}
