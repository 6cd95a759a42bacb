// The owner's changes of a simulated account's books, inside the caller's transaction: the
// replace of a working order (its new terms checked by placement's rules), the cancel of one, and
// the reset of the account (recorded as a flow of the day).
import type { Decimal } from 'decimal.js';
import type { TBrokerEvent } from '../../../contracts/brokers.ts';
import { settled, type Tx } from '../../db/client.ts';
import type { InstrumentRow } from '../../db/schema/index.ts';
import { checkLot } from '../fills.ts';
import { utcDateOf } from '../../controls/day-start.ts';
import { recordResetFlow } from '../../controls/queries.ts';
import { validateBracket } from '../matching.ts';
import type { BrokerReplaceRequest } from '../types.ts';
import {
  deletePositions,
  insertAccountIfMissing,
  listActiveOrders,
  lockOrder,
  resetAccountRow,
  updateOrder,
  touchAccount,
  type AccountKey,
  type SimAccountRow,
  type SimOrderRow,
} from './queries.ts';
import { active, d, eventOf, keyOf, maybe, openSession, refuseTriggeredStop, rejected, text, type Session } from './books.ts';
import { availableToSell, insufficientFunds, insufficientPosition, positiveDecimal, worstBuyCost, worstBuyFill, type Terms } from './books-placement.ts';
import { buyingPowerOf } from '../funds.ts';
import { endOrder } from './books-status.ts';
import { bracketSpecOf, HWM, retrail } from './trailing.ts';

// ---------------------------------------------------------------------------------------------
// Replace

export interface ReplaceInput {
  key: AccountKey;
  request: BrokerReplaceRequest;
  /** The order's instrument: its lot size and tick grid. */
  instrument: InstrumentRow;
  /** The current price: a buy's worst cost and a market bracket entry's reference. */
  price: Decimal;
  at: Date;
}

/**
 * The new value of one of the order's prices: the row's when the request leaves it out. The
 * price its type uses cannot be removed, and a type that uses none takes none (null is fine).
 */
const replacedPrice = (row: SimOrderRow, field: 'limit_price' | 'stop_price', value: string | null | undefined): Decimal | null => {
  if (value === undefined) return maybe(field === 'limit_price' ? row.limitPrice : row.stopPrice);
  const uses = row.orderType === (field === 'limit_price' ? 'limit' : 'stop');
  if (!uses && value !== null) throw rejected(`a ${row.orderType} order takes no ${field}`);
  if (uses && value === null) throw rejected(`a ${row.orderType} order keeps needing its ${field}`);
  return uses ? positiveDecimal(field, value) : null;
};

/** The order's terms after the replace (the whole qty, filled part included), checked as a placement's are. */
const replacedTerms = (row: SimOrderRow, request: BrokerReplaceRequest, instrument: InstrumentRow): Terms => {
  if (request.qty === undefined && request.limitPrice === undefined && request.stopPrice === undefined && request.trail === undefined) {
    throw rejected('nothing to replace: give qty, limit_price, stop_price or a trail');
  }
  let qty = d(row.qty);
  if (request.qty !== undefined) {
    qty = positiveDecimal('qty', request.qty);
    const lotProblem = checkLot(qty, d(instrument.lotSize), instrument.fractional);
    if (lotProblem) throw rejected(lotProblem);
    if (!qty.gt(row.filledQty)) throw rejected(`qty ${text(qty)} must stay above the ${text(d(row.filledQty))} already filled`);
    // settleOco keeps the two legs selling the same units; a leg of another size would leave
    // part of the position unprotected once the other leg fills.
    if (row.ocoSiblingId !== null && !qty.eq(row.qty)) throw rejected("a bracket leg's qty follows the entry's fill: replace its price, not its qty");
  }
  return { qty, limitPrice: replacedPrice(row, 'limit_price', request.limitPrice), stopPrice: replacedPrice(row, 'stop_price', request.stopPrice) };
};

const unfilled = (terms: Terms, row: SimOrderRow): Terms => ({ ...terms, qty: terms.qty.minus(row.filledQty) });
const termsOf = (row: SimOrderRow): Terms => ({ qty: d(row.qty), limitPrice: maybe(row.limitPrice), stopPrice: maybe(row.stopPrice) });

/** A bracket entry's new price must still sit between its stop-loss and take-profit. */
const checkBracketEntry = (row: SimOrderRow, terms: Terms, price: Decimal) => {
  if (!row.bracket) return;
  const bracket = bracketSpecOf(row.bracket);
  const problem = validateBracket({ side: row.side, entryReference: terms.limitPrice ?? terms.stopPrice ?? price, bracket });
  if (problem) throw rejected(problem);
};

/**
 * Placement's funds rule for what the buy still has to fill, with its own reservation released:
 * the buying power left by the account's other working buys. Only a replace that raises the
 * worst cost is checked: one that lowers it goes through even when the cash has fallen since.
 */
const checkBuyFunds = async (session: Session, row: SimOrderRow, terms: Terms, market: { instrument: InstrumentRow; price: Decimal }) => {
  const priced = { ...market, assetClass: row.assetClass };
  const after = worstBuyFill(unfilled(terms, row), priced);
  if (!after.cashDelta.negated().gt(worstBuyCost(unfilled(termsOf(row), row), priced))) return;
  const others = (await listActiveOrders(session.tx, keyOf(row))).filter((order) => order.id !== row.id);
  const buyingPower = buyingPowerOf(row.assetClass, session.cash, others, (symbol) => (symbol === row.symbol ? market.price : undefined));
  if (buyingPower.lt(after.cashDelta.negated())) throw insufficientFunds(session, after, buyingPower);
};

/** A sell that grows must still find its units in the position (no short selling). */
const checkSellPosition = async (session: Session, row: SimOrderRow, terms: Terms) => {
  const remaining = terms.qty.minus(row.filledQty);
  if (remaining.lte(d(row.qty).minus(row.filledQty))) return;
  const sellable = await availableToSell(session, row.symbol, row.id);
  if (remaining.gt(sellable.available)) throw insufficientPosition(remaining, row.symbol, sellable);
};

/** What changed, for the event's reason (the event itself carries no qty or prices). */
const describeChange = (row: SimOrderRow, updated: SimOrderRow): string => {
  const fields = [
    ['qty', row.qty, updated.qty],
    ['limit_price', row.limitPrice, updated.limitPrice],
    ['stop_price', row.stopPrice, updated.stopPrice],
  ] as const;
  const shown = (value: string | null) => (value == null ? 'none' : text(d(value)));
  const changes = fields.filter(([, before, after]) => shown(before) !== shown(after)).map(([name, before, after]) => `${name} ${shown(before)} -> ${shown(after)}`);
  return changes.length > 0 ? `replaced: ${changes.join(', ')}` : 'replaced: no change';
};

/**
 * The owner's replace of a working order's qty, limit or stop, under the same id; its status,
 * fills and expiry stay. Refusals (finished, unknown, or the new terms fail a placement rule)
 * throw BrokerRejectedError and write nothing. A bracket leg's sibling is left as it is.
 */
export const replaceInBooks = async (tx: Tx, { key, request, instrument, price, at }: ReplaceInput): Promise<{ row: SimOrderRow; events: TBrokerEvent[] }> => {
  const session = await openSession(tx, key, at);
  const row = session && (await lockOrder(tx, { userId: key.userId, id: request.brokerOrderId }));
  if (!session || !row || row.assetClass !== key.assetClass || row.mode !== key.mode) throw rejected('unknown order');
  if (!active(row)) throw rejected(`order is ${row.status} and cannot be replaced`);
  const terms = replacedTerms(row, request, instrument);
  // A trailing stop's stop is the broker's: a replace changes its trail, which sets the stop again.
  const trailed = request.trail === undefined ? undefined : retrail(row, request.trail, instrument);
  if (trailed) terms.stopPrice = trailed.stopPrice;
  if (request.stopPrice !== undefined || trailed) refuseTriggeredStop(row.side, terms.stopPrice, price);
  if (request.limitPrice !== undefined || request.stopPrice !== undefined) checkBracketEntry(row, terms, price);
  if (row.side === 'buy') await checkBuyFunds(session, row, terms, { instrument, price });
  else await checkSellPosition(session, row, terms);
  await touchAccount(tx, key);
  const updated = await updateOrder(tx, row, {
    qty: text(terms.qty),
    limitPrice: terms.limitPrice && text(terms.limitPrice),
    stopPrice: terms.stopPrice && text(terms.stopPrice),
    ...(trailed ? { metadata: trailed.metadata } : {}),
    updatedAt: at,
  });
  // A trailing stop's event says its new stop and mark, as the stop's own moves do.
  const trailing = trailed && updated.stopPrice !== null ? { stop_price: text(d(updated.stopPrice)), hwm: String(updated.metadata[HWM]) } : {};
  session.events.push(eventOf(updated, 'replaced', at, { reason: describeChange(row, updated), ...trailing }));
  await settled(session.tx);
  return { row: updated, events: session.events };
};

// ---------------------------------------------------------------------------------------------
// Cancel, reset

/** The owner's cancel; a finished or unknown order is refused. Canceling one OCO leg ends the pair. */
export const cancelInBooks = async (tx: Tx, { key, brokerOrderId, at }: { key: AccountKey; brokerOrderId: string; at: Date }): Promise<{ row: SimOrderRow; events: TBrokerEvent[] }> => {
  const session = await openSession(tx, key, at);
  const row = session && (await lockOrder(tx, { userId: key.userId, id: brokerOrderId }));
  if (!session || !row || row.assetClass !== key.assetClass || row.mode !== key.mode) throw rejected('unknown order');
  if (!active(row)) throw rejected(`order is ${row.status} and cannot be canceled`);
  const updated = await endOrder(session, row, { kind: 'cancel' }, { reason: null, withSibling: true, protect: true });
  await settled(session.tx);
  return { row: updated, events: session.events };
};

/** The account's session, opening the account first when it is missing (its first order or reset). */
const openAccountSession = async (tx: Tx, key: AccountKey, opening: { currency: string; cash: string }, at: Date): Promise<Session> => {
  const existing = await openSession(tx, key, at);
  if (existing) return existing;
  await insertAccountIfMissing(tx, { ...key, ...opening, at });
  return (await openSession(tx, key, at))!;
};

/**
 * Cancels the working orders, removes the positions, and puts the cash back to `cash`. The change
 * of equity is recorded as the day's flow in the same transaction (DESIGN §6: a reset is no
 * trading result, and the day-start snapshot stays as it was): `equityOf` values the account
 * before the reset at the simulator's current prices, read within this transaction.
 */
export const resetInBooks = async (
  tx: Tx,
  {
    key,
    opening,
    at,
    equityOf,
  }: { key: AccountKey; opening: { currency: string; cash: string }; at: Date; equityOf: (tx: Tx, account: SimAccountRow) => Promise<string> },
): Promise<{ account: SimAccountRow; canceled: number; events: TBrokerEvent[] }> => {
  const session = await openAccountSession(tx, key, opening, at);
  const equityBefore = await equityOf(tx, session.account);
  const cashBefore = session.account.cash;
  const working = await listActiveOrders(tx, key);
  for (const order of working) {
    const row = await lockOrder(tx, order);
    if (row && active(row)) await endOrder(session, row, { kind: 'cancel' }, { reason: 'account reset', withSibling: false, protect: false });
  }
  await deletePositions(tx, key);
  session.positions.clear();
  const account = await resetAccountRow(tx, key, { cash: opening.cash, at });
  await recordResetFlow(tx, { ...key, day: utcDateOf(at), equityBefore, cashBefore, equityAfter: opening.cash, at });
  await settled(session.tx);
  return { account, canceled: working.length, events: session.events };
};
