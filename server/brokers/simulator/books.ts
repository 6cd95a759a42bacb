// The simulated broker's books as one transaction holds them, shared by the modules that change
// them (books-placement.ts, books-matching.ts, books-status.ts, books-actions.ts): the session of
// one locked account, an order row as the broker answers it and as an event, and small helpers.
// Every change takes the account's row lock first (then order rows), so one account's changes
// never interleave, and returns the broker events to emit after commit. The arithmetic is
// fills.ts's and the rules are matching.ts's; these modules only apply them.
import { randomUUID } from 'node:crypto';
import type { Decimal } from 'decimal.js';
import type { TBrokerEvent, TBrokerEventType } from '../../../contracts/brokers.ts';
import type { Tx } from '../../db/client.ts';
import { ExactDecimal } from '../../decimal.ts';
import { isTerminal, type TTransition } from '../matching.ts';
import { BrokerRejectedError, type BrokerOrder } from '../types.ts';
import type { SimBracket } from '../../db/schema/index.ts';
import { findPosition, lockAccount, type writeFill, type AccountKey, type SimAccountRow, type SimOrderRow, type SimPositionRow } from './queries.ts';

/** The broker name in events (TBrokerEvent.broker). */
export const BROKER_NAME = 'simulator';

export const d = (value: Decimal.Value) => new ExactDecimal(value);
export const text = (value: Decimal) => value.toFixed();
export const maybe = (value: string | null | undefined) => (value == null ? null : d(value));
export const active = (row: SimOrderRow) => !isTerminal(row.status);
export const keyOf = (row: Pick<SimOrderRow, 'userId' | 'assetClass' | 'mode'>): AccountKey => ({ userId: row.userId, assetClass: row.assetClass, mode: row.mode });

export const newBrokerOrderId = () => `sim_${randomUUID().replaceAll('-', '')}`;

/** A bracket entry's legs as the broker interface reads them (a trailing leg's trail in place of its stop_loss). */
const brokerBracketOf = (bracket: SimBracket): NonNullable<BrokerOrder['bracket']> => ({
  takeProfit: bracket.take_profit === null ? null : text(d(bracket.take_profit)),
  stopLoss: bracket.stop_loss === null ? null : text(d(bracket.stop_loss)),
  ...(bracket.trail_percent !== undefined ? { trail: { percent: bracket.trail_percent } } : bracket.trail_price !== undefined ? { trail: { price: bracket.trail_price } } : {}),
});

export const toBrokerOrder = (row: SimOrderRow): BrokerOrder => ({
  brokerOrderId: row.id,
  clientOrderId: row.clientOrderId,
  assetClass: row.assetClass,
  mode: row.mode,
  symbol: row.symbol,
  side: row.side,
  // A trailing stop reads as a stop at its current stop, its trail and mark in its metadata (as a
  // stop_limit reads as a stop with its limit there): the order service's records know no
  // trailing_stop yet.
  orderType: row.orderType === 'trailing_stop' ? 'stop' : row.orderType,
  timeInForce: row.timeInForce,
  qty: text(d(row.qty)),
  filledQty: text(d(row.filledQty)),
  avgFillPrice: row.avgFillPrice == null ? null : text(d(row.avgFillPrice)),
  limitPrice: row.limitPrice == null ? null : text(d(row.limitPrice)),
  stopPrice: row.stopPrice == null ? null : text(d(row.stopPrice)),
  status: row.status,
  parentId: row.parentId,
  // Only where there is one, so orders without a bracket read as before.
  ...(row.bracket ? { bracket: brokerBracketOf(row.bracket) } : {}),
  metadata: row.metadata,
  submittedAt: row.createdAt,
  updatedAt: row.updatedAt,
});

export const eventOf = (
  row: SimOrderRow,
  type: TBrokerEventType,
  at: Date,
  extra: { fill?: TBrokerEvent['fill']; reason?: string | null } & Pick<TBrokerEvent, 'qty' | 'stop_price' | 'hwm'> = {},
): TBrokerEvent => ({
  type,
  user_id: row.userId,
  asset_class: row.assetClass,
  mode: row.mode,
  broker: BROKER_NAME,
  broker_order_id: row.id,
  client_order_id: row.clientOrderId,
  symbol: row.symbol,
  status: row.status,
  filled_qty: text(d(row.filledQty)),
  avg_fill_price: row.avgFillPrice == null ? null : text(d(row.avgFillPrice)),
  fill: extra.fill ?? null,
  reason: extra.reason ?? null,
  ...(extra.qty === undefined ? {} : { qty: extra.qty }),
  ...(extra.stop_price === undefined ? {} : { stop_price: extra.stop_price }),
  ...(extra.hwm === undefined ? {} : { hwm: extra.hwm }),
  at: at.toISOString(),
});

/** One transaction's hold on one account: its locked cash and the events the changes emit. */
export interface Session {
  tx: Tx;
  at: Date;
  account: SimAccountRow;
  cash: Decimal;
  events: TBrokerEvent[];
  /** The positions read or written in this session, by symbol (null: none held); the lock keeps them current. */
  positions: Map<string, SimPositionRow | null>;
  /**
   * Orders taken in this session and not written yet, in their latest state: a placement writes
   * its order once, in the state its first match leaves it in (filled, say), instead of an insert
   * and an update of the same row.
   */
  unsaved: Map<string, SimOrderRow>;
  /** The fills of orders not written yet, in their order: the first one's statement writes the order too (saveOrder). */
  heldFills: Map<string, FillWrite[]>;
}

export type FillWrite = Parameters<typeof writeFill>[1];

export const sessionOf = (tx: Tx, account: SimAccountRow, at: Date): Session => ({
  tx,
  at,
  account,
  cash: d(account.cash),
  events: [],
  positions: new Map(),
  unsaved: new Map(),
  heldFills: new Map(),
});

export const openSession = async (tx: Tx, key: AccountKey, at: Date): Promise<Session | undefined> => {
  const account = await lockAccount(tx, key);
  return account && sessionOf(tx, account, at);
};

/** The account's position in a symbol, read once per session. */
export const positionIn = async (session: Session, symbol: string): Promise<SimPositionRow | null> => {
  const known = session.positions.get(symbol);
  if (known !== undefined) return known;
  const read = (await findPosition(session.tx, { ...keyOf(session.account), symbol })) ?? null;
  session.positions.set(symbol, read);
  return read;
};

export const applied = (result: TTransition): Extract<TTransition, { ok: true }> => {
  // The callers check the status first; a refused transition here is a bug in this module.
  if (!result.ok) throw new Error(result.reason);
  return result;
};

export const stateOf = (row: SimOrderRow) => ({ status: row.status, qty: d(row.qty), filledQty: d(row.filledQty) });

export const rejected = (reason: string) => new BrokerRejectedError(reason);

/**
 * A stop that would trigger at once, a buy stop at or below the price or a sell stop at or above
 * it, is refused as a broker refuses it (DESIGN §6): it is a market order in disguise, and
 * accepted it would fill at a price its owner did not mean.
 */
export const refuseTriggeredStop = (side: 'buy' | 'sell', stop: Decimal | null, price: Decimal): void => {
  if (stop === null) return;
  if (side === 'buy' ? stop.lte(price) : stop.gte(price)) {
    throw rejected(`would trigger immediately: a ${side} stop at ${text(stop)} with the price at ${text(price)}`);
  }
};
