// One price observation applied to an order on the simulated broker's books, inside the caller's
// transaction: a fill (the fill row, the position, the cash, the order, and the bracket it
// touches), a cancel (ioc, fok, funds gone) or an accepted order opening; and a day order's expiry.
import type { Decimal } from 'decimal.js';
import type { TBrokerEvent } from '../../../contracts/brokers.ts';
import { defer, settled, type Tx } from '../../db/client.ts';
import type { InstrumentRow } from '../../db/schema/index.ts';
import { defaultProfileFor } from '../fees.ts';
import { applyFill, computeFill } from '../fills.ts';
import { evaluate, followTrail, marksNew, transition, type MatchableOrder } from '../matching.ts';
import { tickSizeOf } from './prices.ts';
import { writeFill, lockOrder, type SimOrderRow } from './queries.ts';
import { active, applied, BROKER_NAME, d, eventOf, keyOf, maybe, openSession, positionIn, stateOf, text, type FillWrite, type Session } from './books.ts';
import { changeStatus, endOrder, markTriggered, moveTrailingStop, protectEntry, settleOco } from './books-status.ts';
import { trailingStateOf } from './trailing.ts';
import { fillBound, intoBand, type MarketState } from './exchange-rules.ts';

/** Where a triggered stop_limit keeps when its stop triggered (its metadata, on the broker's books). */
const TRIGGERED_AT = 'triggered_at';

/** A stop_limit's limit, kept in its metadata by the broker layer's collapse to stop; null for every other order. */
const stopLimitOf = (row: SimOrderRow) => {
  const limit = row.metadata.stop_limit_price;
  return row.orderType === 'stop' && (typeof limit === 'string' || typeof limit === 'number') ? d(String(limit)) : null;
};

const matchableOf = (row: SimOrderRow): MatchableOrder => ({
  side: row.side,
  orderType: row.orderType,
  timeInForce: row.timeInForce,
  qty: d(row.qty),
  filledQty: d(row.filledQty),
  limitPrice: maybe(row.limitPrice),
  stopPrice: maybe(row.stopPrice),
  stopLimit: stopLimitOf(row),
  triggered: row.metadata[TRIGGERED_AT] !== undefined,
});

/**
 * What one observation offers a resting order: the price (inside a KRX stock's band: the exchange
 * trades nowhere else), the liquidity of one tick in lots, and whether the market trades at all.
 */
export const observationFor = (instrument: InstrumentRow, price: Decimal, liquidityLotsPerTick: number, market: MarketState) => {
  const lotSize = d(instrument.lotSize);
  return { price: intoBand(price, market.band), lotSize, liquidity: liquidityLotsPerTick > 0 ? lotSize.times(liquidityLotsPerTick) : undefined, market };
};

type Observation = ReturnType<typeof observationFor>;

/** Whether the observation is a trailing stop's new mark (a sell's new high, a buy's new low), which may move its stop. */
const marksTrail = (row: SimOrderRow, price: Decimal): boolean => {
  const state = trailingStateOf(row);
  return state !== undefined && marksNew(state.side, state.hwm, price);
};

/** Whether an observation would change this order: the cheap test before taking any lock. */
export const wouldAct = (row: SimOrderRow, observation: Observation): boolean =>
  row.status === 'accepted' || (observation.market.open && (marksTrail(row, observation.price) || evaluate(matchableOf(row), observation).kind !== 'rest'));

/** A trailing stop's stop after the observation (moved and written when a new mark moves it); any other order as it is. */
const followed = async (session: Session, row: SimOrderRow, instrument: InstrumentRow, price: Decimal): Promise<SimOrderRow> => {
  const state = trailingStateOf(row);
  const moved = state && followTrail(state, price, tickSizeOf(instrument));
  return moved ? moveTrailingStop(session, row, moved) : row;
};

/**
 * A fill's execution id, known before its row is written: the order and the quantity filled in
 * all after it, which grows with every fill of the order, so no two fills share one.
 */
const executionIdOf = (filled: Pick<SimOrderRow, 'id' | 'filledQty'>) => `${BROKER_NAME}-${filled.id}-${text(d(filled.filledQty))}`;

/**
 * Fills `fillQty` of the order against `reference`: the fill row, the position, the cash and the
 * order, then the OCO sibling and a bracket's children. `refused` (nothing written) when the
 * account cannot pay for a buy or no longer holds what a sell sells.
 */
const fillOrder = async (session: Session, row: SimOrderRow, instrument: InstrumentRow, fillQty: Decimal, reference: Decimal, band: MarketState['band']): Promise<{ row: SimOrderRow } | { refused: string }> => {
  const { tx, at } = session;
  const key = keyOf(row);
  const fill = computeFill({
    side: row.side,
    qty: fillQty,
    referencePrice: reference,
    tickSize: tickSizeOf(instrument),
    profile: defaultProfileFor(row.assetClass),
    limitPrice: fillBound(row.side, row.orderType === 'limit' ? maybe(row.limitPrice) : stopLimitOf(row), band),
  });
  if (row.side === 'buy' && session.cash.plus(fill.cashDelta).lt(0)) return { refused: 'insufficient funds' };
  const position = await positionIn(session, row.symbol);
  if (row.side === 'sell' && d(position?.qty ?? 0).lt(fillQty)) return { refused: 'insufficient position' };

  const next = applyFill(position ? { qty: d(position.qty), avgEntryPrice: d(position.avgEntryPrice), realizedPnl: d(position.realizedPnl) } : undefined, fill);
  session.cash = session.cash.plus(fill.cashDelta);
  const before = stateOf(row);
  const step = applied(transition(before, { kind: 'fill', fillQty }));
  // The volume-weighted price of everything filled so far.
  const avgFillPrice = d(row.avgFillPrice ?? 0).times(before.filledQty).plus(fill.notional).dividedBy(step.filledQty);
  const saved = { qty: text(next.qty), avgEntryPrice: text(next.avgEntryPrice), realizedPnl: text(next.realizedPnl), at };
  session.positions.set(row.symbol, { ...key, symbol: row.symbol, qty: saved.qty, avgEntryPrice: saved.avgEntryPrice, realizedPnl: saved.realizedPnl, updatedAt: at });
  const updated: SimOrderRow = { ...row, status: step.status as SimOrderRow['status'], filledQty: text(step.filledQty), avgFillPrice: text(avgFillPrice), updatedAt: at };
  // An order not written yet takes this state when it is, and its fill is written with it.
  const orderWritten = !session.unsaved.has(row.id);
  const write: FillWrite = { order: updated, orderWritten, fill: { qty: text(fill.qty), price: text(fill.price), fee: text(fill.fee) }, position: saved, cash: text(session.cash), at };
  if (orderWritten) defer(tx, writeFill(tx, write));
  else {
    session.unsaved.set(row.id, updated);
    session.heldFills.set(row.id, [...(session.heldFills.get(row.id) ?? []), write]);
  }
  session.events.push(
    eventOf(updated, step.event, at, {
      fill: { execution_id: executionIdOf(updated), qty: text(fill.qty), price: text(fill.price), fee: text(fill.fee), tax: text(fill.tax) },
    }),
  );
  await settleOco(session, updated, before.qty.minus(before.filledQty), fillQty);
  await protectEntry(session, updated, fillQty);
  return { row: updated };
};

/**
 * One price observation applied to one order, under the account's lock: fill (in part or whole),
 * cancel (ioc, fok, or funds gone), or rest (an accepted order opens). Nothing happens to an
 * order that finished meanwhile, so two instances matching the same order cannot fill it twice.
 */
export const matchInBooks = async (
  tx: Tx,
  { order, ...observed }: { order: Pick<SimOrderRow, 'userId' | 'assetClass' | 'mode' | 'id'>; instrument: InstrumentRow; price: Decimal; liquidityLotsPerTick: number; market: MarketState; at: Date },
): Promise<TBrokerEvent[]> => matchAccountInBooks(tx, { orders: [order], ...observed });

/**
 * One observation applied to orders of one account, in the caller's transaction under the
 * account's lock, one after another as the list has them: an order an earlier one ended (an OCO
 * leg its sibling's fill canceled) is read ended and left. A matching round takes each account's
 * orders together, so an account is one transaction per round rather than one per order.
 */
export const matchAccountInBooks = async (
  tx: Tx,
  { orders, instrument, price, liquidityLotsPerTick, market, at }: { orders: readonly Pick<SimOrderRow, 'userId' | 'assetClass' | 'mode' | 'id'>[]; instrument: InstrumentRow; price: Decimal; liquidityLotsPerTick: number; market: MarketState; at: Date },
): Promise<TBrokerEvent[]> => {
  const first = orders[0];
  const session = first && (await openSession(tx, keyOf(first), at));
  if (!session) return [];
  const observation = observationFor(instrument, price, liquidityLotsPerTick, market);
  for (const order of orders) {
    const row = await lockOrder(tx, order);
    if (row && active(row)) await matchLocked(session, row, instrument, observation);
  }
  await settled(session.tx);
  return session.events;
};

/**
 * One observation applied to an order the session holds locked (with its account). While the
 * market is closed nothing fills: an order rests for the open (an accepted one opens), and an ioc
 * or fok, which could only fill at once, is canceled.
 */
export const matchLocked = async (session: Session, locked: SimOrderRow, instrument: InstrumentRow, observation: Observation): Promise<void> => {
  if (!observation.market.open) {
    if (locked.timeInForce === 'ioc' || locked.timeInForce === 'fok') await endOrder(session, locked, { kind: 'cancel' }, { reason: `${locked.timeInForce}: the market is closed`, withSibling: false, protect: true });
    else if (locked.status === 'accepted') await changeStatus(session, locked, { kind: 'open' }, null);
    return;
  }
  // A trailing stop's stop moves first, then triggers against where it moved to.
  const row = await followed(session, locked, instrument, observation.price);
  const outcome = evaluate(matchableOf(row), observation);
  switch (outcome.kind) {
    case 'rest':
      if (row.status === 'accepted') await changeStatus(session, row, { kind: 'open' }, null);
      break;
    case 'trigger':
      await markTriggered(session, row.status === 'accepted' ? await changeStatus(session, row, { kind: 'open' }, null) : row, TRIGGERED_AT);
      break;
    case 'cancel':
      await endOrder(session, row, { kind: 'cancel' }, { reason: `${outcome.cancel}: could not fill ${outcome.cancel === 'fok' ? 'in full ' : ''}at once`, withSibling: false, protect: true });
      break;
    case 'fill': {
      const result = await fillOrder(session, row, instrument, outcome.fillQty, outcome.fillReference, observation.market.band);
      if ('refused' in result) {
        // A broker refuses what it had only accepted, and cancels what was already working.
        await endOrder(session, row, { kind: row.status === 'accepted' ? 'reject' : 'cancel' }, { reason: result.refused, withSibling: true, protect: true });
      } else if (outcome.thenCancel) {
        await endOrder(session, result.row, { kind: 'cancel' }, { reason: 'ioc: unfilled rest canceled', withSibling: false, protect: true });
      }
      break;
    }
  }
};

/** Expires a working order whose expiry has come (a day order at its session's close). */
export const expireInBooks = async (tx: Tx, { order, at }: { order: Pick<SimOrderRow, 'userId' | 'assetClass' | 'mode' | 'id'>; at: Date }): Promise<TBrokerEvent[]> => {
  const session = await openSession(tx, keyOf(order), at);
  const row = session && (await lockOrder(tx, order));
  if (!session || !row || !active(row) || !row.expiresAt || row.expiresAt > at) return [];
  await endOrder(session, row, { kind: 'expire' }, { reason: 'day order: the session closed', withSibling: false, protect: true });
  await settled(session.tx);
  return session.events;
};
