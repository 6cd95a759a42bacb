// An order's status changes without a fill on the simulated broker's books (open, cancel, expire,
// reject), and its bracket's: the OCO pair that protects an entry finished with something
// filled, and one leg's fill settling the other leg.
import type { Decimal } from 'decimal.js';
import { bracketChildClientOrderId } from '../../../contracts/orders.ts';
import { bracketLegs, onChildFilled, transition, type BracketChild, type OcoPair, type TOrderTrigger } from '../matching.ts';
import { findInstrument } from '../../instruments/queries.ts';
import { tickSizeOf } from './prices.ts';
import { bracketSpecOf } from './trailing.ts';
import { insertOrder, lockBracketChildren, lockOrder, updateOrder, type SimOrderRow } from './queries.ts';
import { active, applied, d, eventOf, maybe, newBrokerOrderId, stateOf, text, type Session } from './books.ts';

/** Writes a change of an order, or keeps it in memory while the order itself is still to be written. */
const changeOrder = async (session: Session, row: SimOrderRow, fields: Parameters<typeof updateOrder>[2]): Promise<SimOrderRow> => {
  if (!session.unsaved.has(row.id)) return updateOrder(session.tx, row, fields);
  const changed: SimOrderRow = { ...row, ...fields };
  session.unsaved.set(row.id, changed);
  return changed;
};

type TEndTrigger = Extract<TOrderTrigger, { kind: 'cancel' | 'expire' | 'reject' | 'open' }>;

export const changeStatus = async (session: Session, row: SimOrderRow, trigger: TEndTrigger, reason: string | null): Promise<SimOrderRow> => {
  const next = applied(transition(stateOf(row), trigger));
  const updated = await changeOrder(session, row, {
    status: next.status as SimOrderRow['status'],
    metadata: reason === null ? row.metadata : { ...row.metadata, reason },
    updatedAt: session.at,
  });
  session.events.push(eventOf(updated, next.event, session.at, { reason }));
  return updated;
};

/**
 * A stop_limit whose stop triggered with its limit out of reach: it rests as a limit from now on,
 * whatever the price does to the stop, and a restart keeps it so (the mark is on its row). No
 * event: on paper an order has no `triggered` step (DESIGN §6); it stays open.
 */
export const markTriggered = (session: Session, row: SimOrderRow, key: string): Promise<SimOrderRow> =>
  changeOrder(session, row, { metadata: { ...row.metadata, [key]: session.at.toISOString() }, updatedAt: session.at });

/**
 * A trailing stop whose stop followed the price (`followTrail`): the stop and its mark on its row,
 * so a restart keeps them, and a `replaced` event with both: the broker's own change, which only
 * the event tells the order service. Written only when the stop moves. No touch of the account
 * row: the hold of a trailing buy only shrinks as its stop follows the price down.
 */
export const moveTrailingStop = async (session: Session, row: SimOrderRow, moved: { hwm: Decimal; stopPrice: Decimal }): Promise<SimOrderRow> => {
  const stopPrice = text(moved.stopPrice);
  const hwm = text(moved.hwm);
  const updated = await changeOrder(session, row, { stopPrice, metadata: { ...row.metadata, hwm }, updatedAt: session.at });
  session.events.push(eventOf(updated, 'replaced', session.at, { reason: `trailing stop: stop_price ${text(d(row.stopPrice ?? 0))} -> ${stopPrice} (hwm ${hwm})`, stop_price: stopPrice, hwm }));
  return updated;
};

interface EndOptions {
  reason: string | null;
  /** A cancel of one OCO leg by its owner ends the pair; a cancel caused by the other leg does not recurse. */
  withSibling: boolean;
  /** A reset removes the positions: no protective children for what an entry had filled. */
  protect: boolean;
}

/** Cancels, expires or rejects a working order; a bracket entry that filled in part gets its children. */
export const endOrder = async (session: Session, row: SimOrderRow, trigger: Extract<TEndTrigger, { kind: 'cancel' | 'expire' | 'reject' }>, options: EndOptions): Promise<SimOrderRow> => {
  const updated = await changeStatus(session, row, trigger, options.reason);
  if (options.protect) await protectEntry(session, updated);
  if (options.withSibling && updated.ocoSiblingId) {
    const sibling = await lockOrder(session.tx, { userId: updated.userId, id: updated.ocoSiblingId });
    if (sibling && active(sibling)) await changeStatus(session, sibling, { kind: 'cancel' }, 'oco: the other leg was canceled');
  }
  return updated;
};

const childRow = (entry: SimOrderRow, child: BracketChild, ids: { id: string; siblingId: string | null }, pair: number, at: Date) => ({
  userId: entry.userId,
  id: ids.id,
  clientOrderId: bracketChildClientOrderId(entry.clientOrderId, child.leg, pair),
  assetClass: entry.assetClass,
  mode: entry.mode,
  symbol: entry.symbol,
  side: child.side,
  orderType: child.orderType,
  timeInForce: child.timeInForce,
  qty: text(child.qty),
  filledQty: '0',
  limitPrice: child.limitPrice && text(child.limitPrice),
  stopPrice: child.stopPrice && text(child.stopPrice),
  status: 'open' as const,
  parentId: entry.id,
  ocoSiblingId: ids.siblingId,
  metadata: { ...child.metadata, leg: child.leg },
  expiresAt: null,
  createdAt: at,
  updatedAt: at,
});

const pairIds = (entry: SimOrderRow, pair: number) => [bracketChildClientOrderId(entry.clientOrderId, 'take_profit', pair), bracketChildClientOrderId(entry.clientOrderId, 'stop_loss', pair)];

/**
 * The entry's last OCO pair (locked) and its number, or none when it has none yet. A pair ends
 * whole (a leg's fill or cancel ends the other), so a later pair exists only after one ended.
 */
const lastPairOf = async (session: Session, entry: SimOrderRow): Promise<{ pair: number; legs: SimOrderRow[] } | undefined> => {
  let last: { pair: number; legs: SimOrderRow[] } | undefined;
  for (let pair = 1; ; pair += 1) {
    const legs = await lockBracketChildren(session.tx, entry, pairIds(entry, pair));
    if (legs.length === 0) return last;
    last = { pair, legs };
    if (legs.some(active)) return last;
  }
};

/**
 * A bracket entry's children follow its fills (DESIGN §6): its first fill makes the OCO pair for
 * the filled quantity, and each later fill (`fillQty`) grows both working legs by what it filled,
 * so what is bought is protected while the rest of the entry still works. A fill after the pair
 * ended (a leg sold what it protected, or its owner canceled it) makes a new pair for what that
 * fill bought, as the bracket promised for every unit of the entry. An entry that ends keeps the
 * pairs of its filled part (made then if it had none, as an entry filled before children
 * followed fills).
 */
export const protectEntry = async (session: Session, entry: SimOrderRow, fillQty?: Decimal): Promise<void> => {
  const { bracket } = entry;
  if (!bracket || d(entry.filledQty).lte(0)) return;
  // The entry's first fill: no children yet, nothing to read.
  if (fillQty && d(entry.filledQty).eq(fillQty)) return makeChildren(session, entry, bracket, 1, fillQty);
  const last = await lastPairOf(session, entry);
  if (!last) return makeChildren(session, entry, bracket, 1, d(entry.filledQty));
  if (!fillQty) return;
  const working = last.legs.filter(active);
  if (working.length === 0) return makeChildren(session, entry, bracket, last.pair + 1, fillQty);
  for (const child of working) {
    // The broker's own change, which its owner did not ask for: the event says the new quantity.
    const grown = await updateOrder(session.tx, child, { qty: text(d(child.qty).plus(fillQty)), updatedAt: session.at });
    session.events.push(eventOf(grown, 'replaced', session.at, { reason: `bracket: the entry filled ${text(fillQty)} more`, qty: text(d(grown.qty)) }));
  }
};

/**
 * The legs protecting `qty` of what the entry has filled: a take-profit limit and a stop-loss (a
 * stop, or a trailing stop whose mark starts at the entry's fill price), an OCO pair; an OTO's one leg alone.
 */
const makeChildren = async (session: Session, entry: SimOrderRow, bracket: NonNullable<SimOrderRow['bracket']>, pair: number, qty: Decimal): Promise<void> => {
  const spec = bracketSpecOf(bracket);
  // A trailing leg's first stop goes onto the instrument's grid: read only for such a leg.
  const instrument = spec.trail ? await findInstrument(session.tx, { assetClass: entry.assetClass, symbol: entry.symbol }) : undefined;
  const tickSize = instrument ? tickSizeOf(instrument) : d(0);
  const legs = bracketLegs({ side: entry.side, filledQty: qty }, spec, { mark: d(entry.avgFillPrice ?? 0), tickSize });
  const ids = legs.map(() => newBrokerOrderId());
  for (const [index, child] of legs.entries()) {
    const siblingId = legs.length === 2 ? ids[1 - index]! : null;
    const row = await insertOrder(session.tx, childRow(entry, child, { id: ids[index]!, siblingId }, pair, session.at));
    // Accepted and working at once: the broker takes the children on the entry's fill.
    session.events.push(eventOf({ ...row, status: 'accepted' }, 'accepted', session.at), eventOf(row, 'open', session.at));
  }
};

/** An OCO's stop leg, working beside its limit at once (DESIGN §6), named as a bracket's stop child of it (`X:sl`). */
export const placeOcoStopLeg = async (session: Session, limit: SimOrderRow, leg: BracketChild, id: string): Promise<void> => {
  const row = await insertOrder(session.tx, childRow(limit, leg, { id, siblingId: limit.id }, 1, session.at));
  session.events.push(eventOf({ ...row, status: 'accepted' }, 'accepted', session.at), eventOf(row, 'open', session.at));
};

const legOf = (row: SimOrderRow): 'take_profit' | 'stop_loss' => (row.metadata.leg === 'stop_loss' ? 'stop_loss' : 'take_profit');

const asChild = (row: SimOrderRow, qty: Decimal): BracketChild => ({
  leg: legOf(row),
  side: 'sell',
  orderType: row.orderType === 'stop' || row.orderType === 'trailing_stop' ? row.orderType : 'limit',
  qty,
  limitPrice: maybe(row.limitPrice),
  stopPrice: maybe(row.stopPrice),
  timeInForce: 'gtc',
  metadata: {},
});

/** One leg filled (`remainingBefore` was its unfilled quantity): cancel the other leg, or shrink it to what is still held. */
export const settleOco = async (session: Session, leg: SimOrderRow, remainingBefore: Decimal, fillQty: Decimal): Promise<void> => {
  if (!leg.ocoSiblingId) return;
  const sibling = await lockOrder(session.tx, { userId: leg.userId, id: leg.ocoSiblingId });
  if (!sibling || !active(sibling)) return;
  const siblingRemaining = d(sibling.qty).minus(sibling.filledQty);
  const filled = asChild(leg, remainingBefore);
  const other = asChild(sibling, siblingRemaining);
  const pair: OcoPair = legOf(leg) === 'take_profit' ? { takeProfit: filled, stopLoss: other } : { takeProfit: other, stopLoss: filled };
  const action = onChildFilled({ pair, leg: legOf(leg), filledQty: fillQty });
  if (action.action === 'cancel') {
    await changeStatus(session, sibling, { kind: 'cancel' }, 'oco: the other leg filled');
    return;
  }
  // The broker's own change, which its owner did not ask for: the event says the new quantity, so
  // that the order service's record of the leg (and its clients) shrinks with it.
  const shrunk = await updateOrder(session.tx, sibling, { qty: text(d(sibling.filledQty).plus(action.qty)), updatedAt: session.at });
  session.events.push(eventOf(shrunk, 'replaced', session.at, { reason: `oco: the other leg filled ${text(fillQty)}`, qty: text(d(shrunk.qty)) }));
};
