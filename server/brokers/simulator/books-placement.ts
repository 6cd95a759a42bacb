// Placing an order on the simulated broker's books, inside the caller's transaction: the checks a
// broker makes before it takes an order (its decimals, the funds of a buy, the position a sell
// sells), then the order's first match on arrival, and its one write with the fill held for it.
import type { Decimal } from 'decimal.js';
import type { TBrokerEvent } from '../../../contracts/brokers.ts';
import { defer, settled, type Tx } from '../../db/client.ts';
import type { InstrumentRow } from '../../db/schema/index.ts';
import { defaultProfileFor } from '../fees.ts';
import { checkLot, computeFill, type Fill } from '../fills.ts';
import { buyingPowerOf, buyRefusalMessage, RESERVE_PRICE_KEY, sellableOf, sellRefusalMessage, type Sellable } from '../funds.ts';
import { ExactDecimal } from '../../decimal.ts';
import { stopLegOf, transition, validateBracket, validateOco, type BracketSpec } from '../matching.ts';
import { FundsRejectedError, type BrokerBracket, type BrokerOrderRequest } from '../types.ts';
import { tickSizeOf } from './prices.ts';
import {
  insertAccountIfMissing,
  writeFill,
  insertOrder,
  simOrderRowOf,
  listWorkingSells,
  type AccountKey,
  type SimOrderRow,
  type SimPriceRow,
} from './queries.ts';
import { lockAccountForSymbol, type LockedAccount } from './account-reads.ts';
import { applied, d, eventOf, keyOf, newBrokerOrderId, positionIn, refuseTriggeredStop, rejected, sessionOf, text, type Session } from './books.ts';
import { matchLocked, observationFor } from './books-matching.ts';
import { placeOcoStopLeg } from './books-status.ts';
import { checkTrailingRequest, simBracketOf, trailOfRequest } from './trailing.ts';
import type { MarketState } from './exchange-rules.ts';

export interface PlaceInput {
  key: AccountKey;
  /** Opens the account with this currency and cash when it is missing. */
  opening: { currency: string; cash: string };
  request: BrokerOrderRequest;
  instrument: InstrumentRow;
  /**
   * The current price (the funds check of a buy, a market bracket's entry reference, the first
   * match) from the instrument's stored prices, read under the account's lock.
   */
  quote: (stored: SimPriceRow | null) => Promise<Decimal>;
  at: Date;
  /** A day order's expiry: the close of its session. */
  expiresAt: Date | null;
  /** The account's lock with the symbol's position, prices and working orders, when the caller sent that read already (lockAccountForSymbol). */
  locked?: ReturnType<typeof lockAccountForSymbol>;
  /** SIM_LIQUIDITY_LOTS_PER_TICK, for the order's first match. */
  liquidityLotsPerTick: number;
  /** The market at `at` (open or not, a KRX stock's band), for the order's first match. */
  market: MarketState;
  /**
   * The caller's rules (the order service's risk gate) on the account as read with its lock: a
   * refusal it answers is thrown before the broker's own checks, as the gate before the broker.
   */
  judge?: ((locked: LockedAccount, price: Decimal) => Promise<FundsRejectedError | undefined>) | undefined;
}

export const positiveDecimal = (name: string, value: string | null | undefined): Decimal => {
  let parsed: Decimal | undefined;
  try {
    parsed = value == null ? undefined : d(value);
  } catch {
    // not a number: refused below
  }
  if (!parsed?.isFinite() || parsed.lte(0)) throw rejected(`${name} must be a positive decimal, got ${String(value)}`);
  return parsed;
};

/** The request's decimals, checked as a broker checks them before it takes an order. */
const checkRequest = ({ request, instrument, price }: Pick<PlaceInput, 'request' | 'instrument'> & { price: Decimal }) => {
  const qty = positiveDecimal('qty', request.qty);
  const lotProblem = checkLot(qty, d(instrument.lotSize), instrument.fractional);
  if (lotProblem) throw rejected(lotProblem);
  // A trailing stop's first stop is the broker's, from its trail and the price: never triggered at once.
  const trailing = checkTrailingRequest(request, instrument, price);
  const limitPrice = request.orderType === 'limit' ? positiveDecimal('limit_price', request.limitPrice) : null;
  const stopPrice = trailing ? trailing.stopPrice : request.orderType === 'stop' ? positiveDecimal('stop_price', request.stopPrice) : null;
  refuseTriggeredStop(request.side, stopPrice, price);
  const bracket = request.bracket ? bracketOf(request.bracket, instrument, price) : null;
  if (request.orderClass === 'oco' && !bracket) throw rejected('an oco needs its stop leg in bracket');
  if (bracket) {
    const problem =
      request.orderClass === 'oco'
        ? validateOco({ side: request.side, limitPrice, price, bracket })
        : validateBracket({ side: request.side, entryReference: limitPrice ?? stopPrice ?? price, bracket });
    if (problem) throw rejected(problem);
  }
  return { qty, limitPrice, stopPrice, bracket, metadata: trailing?.metadata ?? request.metadata };
};

/** A bracket's legs, checked as a broker checks them: each price positive, a trailing leg's trail as a trailing stop's. */
const bracketOf = (bracket: BrokerBracket, instrument: InstrumentRow, price: Decimal): BracketSpec => ({
  takeProfit: bracket.takeProfit == null ? null : positiveDecimal('take_profit', bracket.takeProfit),
  stopLoss: bracket.stopLoss == null ? null : positiveDecimal('stop_loss', bracket.stopLoss),
  stopLossLimit: bracket.stopLossLimit == null ? null : positiveDecimal('stop_loss_limit', bracket.stopLossLimit),
  trail: bracket.trail ? trailOfRequest(bracket.trail, instrument, price) : null,
});

/**
 * What a sell may still take of the position: the held quantity less what working sells hold
 * (an OCO pair counted once), the order being replaced (`except`) left out.
 */
export const availableToSell = async (session: Session, symbol: string, except?: string): Promise<Sellable> => {
  const key = keyOf(session.account);
  const held = d((await positionIn(session, symbol))?.qty ?? 0);
  return sellableOf(held, await listWorkingSells(session.tx, { ...key, symbol }), symbol, except);
};

/** The broker's refusal of a sell above what is available, in the words of the risk gate. */
export const insufficientPosition = (qty: Decimal, symbol: string, sellable: Sellable) =>
  new FundsRejectedError(
    `insufficient position: selling ${text(qty)} ${symbol} with ${text(sellable.available)} available (${text(sellable.held)} held, ${text(sellable.inWorkingSells)} in working sells; no short selling)`,
    sellRefusalMessage(qty, symbol, sellable),
  );

/** An order's unfilled quantity and prices: what a buy still costs and a sell still sells. */
export interface Terms {
  qty: Decimal;
  limitPrice: Decimal | null;
  stopPrice: Decimal | null;
}

/**
 * The fill that costs a buy of `terms.qty` the most at the price it can fill at: its limit, a
 * stop's trigger (or the price, above it), the current price for a market order; slippage and
 * fees included.
 */
export const worstBuyFill = (terms: Terms, { instrument, price, assetClass }: { instrument: InstrumentRow; price: Decimal; assetClass: AccountKey['assetClass'] }): Fill => {
  const { qty, limitPrice, stopPrice } = terms;
  const reference = limitPrice ?? (stopPrice ? ExactDecimal.max(stopPrice, price) : price);
  return computeFill({ side: 'buy', qty, referencePrice: reference, tickSize: tickSizeOf(instrument), profile: defaultProfileFor(assetClass), limitPrice });
};

/** What worstBuyFill costs, fee included. */
export const worstBuyCost = (terms: Terms, market: { instrument: InstrumentRow; price: Decimal; assetClass: AccountKey['assetClass'] }): Decimal => worstBuyFill(terms, market).cashDelta.negated();

/** The broker's refusal of a buy above the buying power, in the words of the risk gate. */
export const insufficientFunds = (session: Session, fill: Fill, buyingPower: Decimal) =>
  new FundsRejectedError(
    `insufficient funds: the order needs ${text(fill.cashDelta.negated())} ${session.account.currency}, cash is ${text(session.cash)}; ` +
      `what working buys do not hold of it (the buying power) is ${text(buyingPower)}`,
    buyRefusalMessage(fill, buyingPower),
  );

/**
 * Writes an order taken in this session, in its latest state, with the fills it had meanwhile:
 * the first fill's statement inserts the order too (one statement less per marketable order).
 */
const saveOrder = (session: Session, row: SimOrderRow) => {
  const [first, ...later] = session.heldFills.get(row.id) ?? [];
  session.heldFills.delete(row.id);
  if (!first) {
    defer(session.tx, insertOrder(session.tx, row));
    return;
  }
  defer(session.tx, writeFill(session.tx, { ...first, insert: row }));
  for (const fill of later) defer(session.tx, writeFill(session.tx, fill));
};

/**
 * Takes the order on the books as `accepted`. Refusals (a bad quantity, funds, no position to
 * sell, a client order id used before) throw BrokerRejectedError and write nothing.
 */
export const placeInBooks = async (tx: Tx, input: PlaceInput): Promise<{ row: SimOrderRow; events: TBrokerEvent[]; written: Promise<void> }> => {
  const { key, request, instrument, at } = input;
  // The account's lock, its position in the symbol and the symbol's prices: one statement.
  let locked = await (input.locked ?? lockAccountForSymbol(tx, key, request.symbol));
  if (!locked) {
    await insertAccountIfMissing(tx, { ...key, ...input.opening, at });
    locked = (await lockAccountForSymbol(tx, key, request.symbol))!;
  }
  const session = sessionOf(tx, locked.account, at);
  session.positions.set(request.symbol, locked.position);
  const price = await input.quote(locked.price);
  const refusal = await input.judge?.(locked, price);
  if (refusal) throw refusal;
  const { qty, limitPrice, stopPrice, bracket, metadata } = checkRequest({ request, instrument, price });

  // Judged on the working orders read with the lock, so orders placed a moment ago (in this
  // transaction's batch, or by another instance) hold their cash and units already.
  let reservePrice: Decimal | undefined;
  if (request.side === 'buy') {
    const fill = worstBuyFill({ qty, limitPrice, stopPrice }, { instrument, price, assetClass: key.assetClass });
    const buyingPower = buyingPowerOf(key.assetClass, session.cash, locked.working, (symbol) => (symbol === request.symbol ? price : undefined));
    if (buyingPower.lt(fill.cashDelta.negated())) throw insufficientFunds(session, fill, buyingPower);
    // A market buy that does not fill at once holds the price its check used until it does.
    if (request.orderType === 'market') reservePrice = fill.price;
  } else {
    const sellable = sellableOf(d(locked.position?.qty ?? 0), locked.working, request.symbol);
    if (qty.gt(sellable.available)) throw insufficientPosition(qty, request.symbol, sellable);
  }

  // An OCO's stop leg works beside it from the start; a bracket's legs wait for the entry's fill.
  const ocoLeg = request.orderClass === 'oco' && bracket ? stopLegOf(qty, bracket, { mark: price, tickSize: tickSizeOf(instrument) }) : undefined;
  const ocoLegId = ocoLeg ? newBrokerOrderId() : null;
  const row = simOrderRowOf({
    userId: key.userId,
    id: newBrokerOrderId(),
    clientOrderId: request.clientOrderId,
    assetClass: key.assetClass,
    mode: key.mode,
    symbol: request.symbol,
    side: request.side,
    orderType: request.orderType,
    timeInForce: request.timeInForce,
    qty: text(qty),
    filledQty: '0',
    limitPrice: limitPrice && text(limitPrice),
    stopPrice: stopPrice && text(stopPrice),
    status: applied(transition({ status: 'pending', qty, filledQty: d(0) }, { kind: 'accept' })).status as SimOrderRow['status'],
    bracket: bracket && !ocoLeg ? simBracketOf(bracket) : null,
    ocoSiblingId: ocoLegId,
    metadata: reservePrice ? { ...metadata, [RESERVE_PRICE_KEY]: text(reservePrice) } : (metadata ?? {}),
    expiresAt: input.expiresAt,
    createdAt: at,
    updatedAt: at,
  });
  session.unsaved.set(row.id, row);
  session.events.push(eventOf(row, 'accepted', at));
  // Written before the limit's first match, which may fill it and so cancel the leg.
  if (ocoLeg) await placeOcoStopLeg(session, row, ocoLeg, ocoLegId!);
  // The order meets the market on arrival, as at an exchange: a marketable order fills (a
  // resting one opens) in the same transaction, after its `accepted`.
  await matchLocked(session, row, instrument, observationFor(instrument, price, input.liquidityLotsPerTick, input.market));
  // Written once, in the state that match left it in, with its fill; sent, not waited for. A
  // duplicate client order id fails the statement and so the transaction, which then writes nothing.
  const final = session.unsaved.get(row.id)!;
  session.unsaved.delete(row.id);
  saveOrder(session, final);
  // The caller may send statements of its own in the same transaction before `written` settles.
  return { row, events: session.events, written: settled(tx) };
};
