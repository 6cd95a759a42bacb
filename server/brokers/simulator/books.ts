// Changes of the simulated broker's books, each inside the caller's transaction: placing an
// order, replacing it, filling it against a price, canceling, expiring, the OCO children of a
// bracket and the reset of an account. Every function takes the account's row lock first (then order rows), so
// one account's changes never interleave, and returns the broker events to emit after commit.
// The arithmetic is fills.ts's and the rules are matching.ts's; this module only applies them.
import { randomUUID } from 'node:crypto';
import type { Decimal } from 'decimal.js';
import type { TBrokerEvent, TBrokerEventType } from '../../../contracts/brokers.ts';
import { bracketChildClientOrderId } from '../../../contracts/orders.ts';
import { defer, settled, type Tx } from '../../db/client.ts';
import type { InstrumentRow } from '../../db/schema/index.ts';
import { defaultProfileFor } from '../fees.ts';
import { applyFill, checkLot, computeFill } from '../fills.ts';
import { ExactDecimal } from '../../decimal.ts';
import {
  bracketChildren,
  evaluate,
  isTerminal,
  onChildFilled,
  transition,
  validateBracket,
  type BracketChild,
  type MatchableOrder,
  type OcoPair,
  type TOrderTrigger,
  type TTransition,
} from '../matching.ts';
import { BrokerRejectedError, type BrokerOrder, type BrokerOrderRequest, type BrokerReplaceRequest } from '../types.ts';
import { tickSizeOf } from './prices.ts';
import {
  deletePositions,
  findPosition,
  insertAccountIfMissing,
  writeFill,
  insertOrder,
  simOrderRowOf,
  listActiveOrders,
  listWorkingSells,
  lockAccount,
  lockAccountForSymbol,
  lockOrder,
  resetAccountRow,
  updateOrder,
  type AccountKey,
  type SimAccountRow,
  type SimOrderRow,
  type SimPositionRow,
  type SimPriceRow,
} from './queries.ts';

/** The broker name in events (TBrokerEvent.broker). */
export const BROKER_NAME = 'simulator';

const d = (value: Decimal.Value) => new ExactDecimal(value);
const text = (value: Decimal) => value.toFixed();
const maybe = (value: string | null | undefined) => (value == null ? null : d(value));
const active = (row: SimOrderRow) => !isTerminal(row.status);
const keyOf = (row: Pick<SimOrderRow, 'userId' | 'assetClass' | 'mode'>): AccountKey => ({ userId: row.userId, assetClass: row.assetClass, mode: row.mode });

export const newBrokerOrderId = () => `sim_${randomUUID().replaceAll('-', '')}`;

export const toBrokerOrder = (row: SimOrderRow): BrokerOrder => ({
  brokerOrderId: row.id,
  clientOrderId: row.clientOrderId,
  assetClass: row.assetClass,
  mode: row.mode,
  symbol: row.symbol,
  side: row.side,
  orderType: row.orderType,
  timeInForce: row.timeInForce,
  qty: text(d(row.qty)),
  filledQty: text(d(row.filledQty)),
  avgFillPrice: row.avgFillPrice == null ? null : text(d(row.avgFillPrice)),
  limitPrice: row.limitPrice == null ? null : text(d(row.limitPrice)),
  stopPrice: row.stopPrice == null ? null : text(d(row.stopPrice)),
  status: row.status,
  parentId: row.parentId,
  metadata: row.metadata,
  submittedAt: row.createdAt,
  updatedAt: row.updatedAt,
});

const eventOf = (
  row: SimOrderRow,
  type: TBrokerEventType,
  at: Date,
  extra: { fill?: TBrokerEvent['fill']; reason?: string | null } = {},
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
  at: at.toISOString(),
});

/** One transaction's hold on one account: its locked cash and the events the changes emit. */
interface Session {
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

type FillWrite = Parameters<typeof writeFill>[1];

const sessionOf = (tx: Tx, account: SimAccountRow, at: Date): Session => ({
  tx,
  at,
  account,
  cash: d(account.cash),
  events: [],
  positions: new Map(),
  unsaved: new Map(),
  heldFills: new Map(),
});

/** Writes a change of an order, or keeps it in memory while the order itself is still to be written. */
const changeOrder = async (session: Session, row: SimOrderRow, fields: Parameters<typeof updateOrder>[2]): Promise<SimOrderRow> => {
  if (!session.unsaved.has(row.id)) return updateOrder(session.tx, row, fields);
  const changed: SimOrderRow = { ...row, ...fields };
  session.unsaved.set(row.id, changed);
  return changed;
};

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

const openSession = async (tx: Tx, key: AccountKey, at: Date): Promise<Session | undefined> => {
  const account = await lockAccount(tx, key);
  return account && sessionOf(tx, account, at);
};

/** The account's position in a symbol, read once per session. */
const positionIn = async (session: Session, symbol: string): Promise<SimPositionRow | null> => {
  const known = session.positions.get(symbol);
  if (known !== undefined) return known;
  const read = (await findPosition(session.tx, { ...keyOf(session.account), symbol })) ?? null;
  session.positions.set(symbol, read);
  return read;
};

/** The account's session, opening the account first when it is missing (its first order or reset). */
const openAccountSession = async (tx: Tx, key: AccountKey, opening: { currency: string; cash: string }, at: Date): Promise<Session> => {
  const existing = await openSession(tx, key, at);
  if (existing) return existing;
  await insertAccountIfMissing(tx, { ...key, ...opening, at });
  return (await openSession(tx, key, at))!;
};

const applied = (result: TTransition): Extract<TTransition, { ok: true }> => {
  // The callers check the status first; a refused transition here is a bug in this module.
  if (!result.ok) throw new Error(result.reason);
  return result;
};

const stateOf = (row: SimOrderRow) => ({ status: row.status, qty: d(row.qty), filledQty: d(row.filledQty) });

const matchableOf = (row: SimOrderRow): MatchableOrder => ({
  side: row.side,
  orderType: row.orderType,
  timeInForce: row.timeInForce,
  qty: d(row.qty),
  filledQty: d(row.filledQty),
  limitPrice: maybe(row.limitPrice),
  stopPrice: maybe(row.stopPrice),
});

/** What one observation offers a resting order: the price, and the liquidity of one tick in lots. */
export const observationFor = (instrument: InstrumentRow, price: Decimal, liquidityLotsPerTick: number) => {
  const lotSize = d(instrument.lotSize);
  return { price, lotSize, liquidity: liquidityLotsPerTick > 0 ? lotSize.times(liquidityLotsPerTick) : undefined };
};

/** Whether an observation would change this order: the cheap test before taking any lock. */
export const wouldAct = (row: SimOrderRow, observation: ReturnType<typeof observationFor>): boolean =>
  row.status === 'accepted' || evaluate(matchableOf(row), observation).kind !== 'rest';

// ---------------------------------------------------------------------------------------------
// Placement

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
  /** The account's lock with the symbol's position and prices, when the caller sent that read already (lockAccountForSymbol). */
  locked?: ReturnType<typeof lockAccountForSymbol>;
  /** SIM_LIQUIDITY_LOTS_PER_TICK, for the order's first match. */
  liquidityLotsPerTick: number;
}

const rejected = (reason: string) => new BrokerRejectedError(reason);

const positiveDecimal = (name: string, value: string | null | undefined): Decimal => {
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
  const limitPrice = request.orderType === 'limit' ? positiveDecimal('limit_price', request.limitPrice) : null;
  const stopPrice = request.orderType === 'stop' ? positiveDecimal('stop_price', request.stopPrice) : null;
  const bracket = request.bracket
    ? {
        takeProfit: positiveDecimal('take_profit', request.bracket.takeProfit),
        stopLoss: positiveDecimal('stop_loss', request.bracket.stopLoss),
        stopLossLimit: request.bracket.stopLossLimit == null ? null : positiveDecimal('stop_loss_limit', request.bracket.stopLossLimit),
      }
    : null;
  if (bracket) {
    const problem = validateBracket({ side: request.side, entryReference: limitPrice ?? stopPrice ?? price, bracket });
    if (problem) throw rejected(problem);
  }
  return { qty, limitPrice, stopPrice, bracket };
};

/**
 * What a sell may still take of the position: the held quantity less what working sells hold,
 * the order being replaced (`except`) left out.
 */
const availableToSell = async (session: Session, symbol: string, except?: string): Promise<Decimal> => {
  const key = keyOf(session.account);
  const held = d((await positionIn(session, symbol))?.qty ?? 0);
  const working = await listWorkingSells(session.tx, { ...key, symbol });
  const workingIds = new Set(working.map((row) => row.id));
  // The two legs of an OCO pair sell the same units (one cancels the other): count the pair once.
  const reserved = working
    .filter((row) => row.id !== except && !(row.metadata.leg === 'stop_loss' && row.ocoSiblingId !== null && workingIds.has(row.ocoSiblingId)))
    .reduce((sum, row) => sum.plus(d(row.qty).minus(row.filledQty)), d(0));
  return held.minus(reserved);
};

/** An order's unfilled quantity and prices: what a buy still costs and a sell still sells. */
interface Terms {
  qty: Decimal;
  limitPrice: Decimal | null;
  stopPrice: Decimal | null;
}

/**
 * The most a buy of `terms.qty` may cost at the price it can fill at: its limit, a stop's trigger
 * (or the price, above it), the current price for a market order; slippage and fees included.
 */
const worstBuyCost = (terms: Terms, { instrument, price, assetClass }: { instrument: InstrumentRow; price: Decimal; assetClass: AccountKey['assetClass'] }): Decimal => {
  const { qty, limitPrice, stopPrice } = terms;
  const reference = limitPrice ?? (stopPrice ? ExactDecimal.max(stopPrice, price) : price);
  return computeFill({ side: 'buy', qty, referencePrice: reference, tickSize: tickSizeOf(instrument), profile: defaultProfileFor(assetClass), limitPrice }).cashDelta.negated();
};

const insufficientFunds = (session: Session, cost: Decimal) =>
  rejected(`insufficient funds: the order needs ${text(cost)} ${session.account.currency}, cash is ${text(session.cash)}`);

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
  const { qty, limitPrice, stopPrice, bracket } = checkRequest({ request, instrument, price });

  if (request.side === 'buy') {
    const cost = worstBuyCost({ qty, limitPrice, stopPrice }, { instrument, price, assetClass: key.assetClass });
    if (session.cash.lt(cost)) throw insufficientFunds(session, cost);
  } else {
    const available = await availableToSell(session, request.symbol);
    if (qty.gt(available)) throw rejected(`insufficient position: selling ${text(qty)} ${request.symbol} with ${text(ExactDecimal.max(available, 0))} available (no short selling)`);
  }

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
    bracket: bracket && {
      take_profit: text(bracket.takeProfit),
      stop_loss: text(bracket.stopLoss),
      stop_loss_limit: bracket.stopLossLimit && text(bracket.stopLossLimit),
    },
    metadata: request.metadata ?? {},
    expiresAt: input.expiresAt,
    createdAt: at,
    updatedAt: at,
  });
  session.unsaved.set(row.id, row);
  session.events.push(eventOf(row, 'accepted', at));
  // The order meets the market on arrival, as at an exchange: a marketable order fills (a
  // resting one opens) in the same transaction, after its `accepted`.
  await matchLocked(session, row, instrument, observationFor(instrument, price, input.liquidityLotsPerTick));
  // Written once, in the state that match left it in, with its fill; sent, not waited for. A
  // duplicate client order id fails the statement and so the transaction, which then writes nothing.
  const final = session.unsaved.get(row.id)!;
  session.unsaved.delete(row.id);
  saveOrder(session, final);
  // The caller may send statements of its own in the same transaction before `written` settles.
  return { row, events: session.events, written: settled(tx) };
};

// ---------------------------------------------------------------------------------------------
// Status changes without a fill

type TEndTrigger = Extract<TOrderTrigger, { kind: 'cancel' | 'expire' | 'reject' | 'open' }>;

const changeStatus = async (session: Session, row: SimOrderRow, trigger: TEndTrigger, reason: string | null): Promise<SimOrderRow> => {
  const next = applied(transition(stateOf(row), trigger));
  const updated = await changeOrder(session, row, {
    status: next.status as SimOrderRow['status'],
    metadata: reason === null ? row.metadata : { ...row.metadata, reason },
    updatedAt: session.at,
  });
  session.events.push(eventOf(updated, next.event, session.at, { reason }));
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
const endOrder = async (session: Session, row: SimOrderRow, trigger: Extract<TEndTrigger, { kind: 'cancel' | 'expire' | 'reject' }>, options: EndOptions): Promise<SimOrderRow> => {
  const updated = await changeStatus(session, row, trigger, options.reason);
  if (options.protect) await protectEntry(session, updated);
  if (options.withSibling && updated.ocoSiblingId) {
    const sibling = await lockOrder(session.tx, { userId: updated.userId, id: updated.ocoSiblingId });
    if (sibling && active(sibling)) await changeStatus(session, sibling, { kind: 'cancel' }, 'oco: the other leg was canceled');
  }
  return updated;
};

// ---------------------------------------------------------------------------------------------
// Brackets

const childRow = (entry: SimOrderRow, child: BracketChild, ids: { id: string; siblingId: string }, at: Date) => ({
  userId: entry.userId,
  id: ids.id,
  clientOrderId: bracketChildClientOrderId(entry.clientOrderId, child.leg),
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

/** A bracket entry that is finished with something filled becomes an OCO pair protecting it. */
const protectEntry = async (session: Session, entry: SimOrderRow): Promise<void> => {
  if (!entry.bracket || !isTerminal(entry.status) || d(entry.filledQty).lte(0)) return;
  const pair = bracketChildren(
    { side: entry.side, filledQty: d(entry.filledQty) },
    { takeProfit: d(entry.bracket.take_profit), stopLoss: d(entry.bracket.stop_loss), stopLossLimit: maybe(entry.bracket.stop_loss_limit) },
  );
  const ids = { takeProfit: newBrokerOrderId(), stopLoss: newBrokerOrderId() };
  for (const [child, id, siblingId] of [
    [pair.takeProfit, ids.takeProfit, ids.stopLoss],
    [pair.stopLoss, ids.stopLoss, ids.takeProfit],
  ] as const) {
    const row = await insertOrder(session.tx, childRow(entry, child, { id, siblingId }, session.at));
    // Accepted and working at once: the broker takes the children on the entry's fill.
    session.events.push(eventOf({ ...row, status: 'accepted' }, 'accepted', session.at), eventOf(row, 'open', session.at));
  }
};

const legOf = (row: SimOrderRow): 'take_profit' | 'stop_loss' => (row.metadata.leg === 'stop_loss' ? 'stop_loss' : 'take_profit');

const asChild = (row: SimOrderRow, qty: Decimal): BracketChild => ({
  leg: legOf(row),
  side: 'sell',
  orderType: row.orderType === 'stop' ? 'stop' : 'limit',
  qty,
  limitPrice: maybe(row.limitPrice),
  stopPrice: maybe(row.stopPrice),
  timeInForce: 'gtc',
  metadata: {},
});

/** One leg filled (`remainingBefore` was its unfilled quantity): cancel the other leg, or shrink it to what is still held. */
const settleOco = async (session: Session, leg: SimOrderRow, remainingBefore: Decimal, fillQty: Decimal): Promise<void> => {
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
  // The broker's own bookkeeping, not a replace the owner asked for: no `replaced` event; the
  // shrunk quantity shows in the order itself.
  await updateOrder(session.tx, sibling, { qty: text(d(sibling.filledQty).plus(action.qty)), updatedAt: session.at });
};

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
  if (request.qty === undefined && request.limitPrice === undefined && request.stopPrice === undefined) throw rejected('nothing to replace: give qty, limit_price or stop_price');
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
  const bracket = { takeProfit: d(row.bracket.take_profit), stopLoss: d(row.bracket.stop_loss), stopLossLimit: maybe(row.bracket.stop_loss_limit) };
  const problem = validateBracket({ side: row.side, entryReference: terms.limitPrice ?? terms.stopPrice ?? price, bracket });
  if (problem) throw rejected(problem);
};

/**
 * Placement's funds rule for what the buy still has to fill. Only a replace that raises the
 * worst cost is checked: one that lowers it goes through even when the cash has fallen since.
 */
const checkBuyFunds = (session: Session, row: SimOrderRow, terms: Terms, market: { instrument: InstrumentRow; price: Decimal }) => {
  const priced = { ...market, assetClass: row.assetClass };
  const after = worstBuyCost(unfilled(terms, row), priced);
  if (after.gt(worstBuyCost(unfilled(termsOf(row), row), priced)) && session.cash.lt(after)) throw insufficientFunds(session, after);
};

/** A sell that grows must still find its units in the position (no short selling). */
const checkSellPosition = async (session: Session, row: SimOrderRow, terms: Terms) => {
  const remaining = terms.qty.minus(row.filledQty);
  if (remaining.lte(d(row.qty).minus(row.filledQty))) return;
  const available = await availableToSell(session, row.symbol, row.id);
  if (remaining.gt(available)) throw rejected(`insufficient position: selling ${text(remaining)} ${row.symbol} with ${text(ExactDecimal.max(available, 0))} available (no short selling)`);
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
  if (request.limitPrice !== undefined || request.stopPrice !== undefined) checkBracketEntry(row, terms, price);
  if (row.side === 'buy') checkBuyFunds(session, row, terms, { instrument, price });
  else await checkSellPosition(session, row, terms);
  const updated = await updateOrder(tx, row, {
    qty: text(terms.qty),
    limitPrice: terms.limitPrice && text(terms.limitPrice),
    stopPrice: terms.stopPrice && text(terms.stopPrice),
    updatedAt: at,
  });
  session.events.push(eventOf(updated, 'replaced', at, { reason: describeChange(row, updated) }));
  await settled(session.tx);
  return { row: updated, events: session.events };
};

// ---------------------------------------------------------------------------------------------
// Fills

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
const fillOrder = async (session: Session, row: SimOrderRow, instrument: InstrumentRow, fillQty: Decimal, reference: Decimal): Promise<{ row: SimOrderRow } | { refused: string }> => {
  const { tx, at } = session;
  const key = keyOf(row);
  const fill = computeFill({
    side: row.side,
    qty: fillQty,
    referencePrice: reference,
    tickSize: tickSizeOf(instrument),
    profile: defaultProfileFor(row.assetClass),
    limitPrice: row.orderType === 'limit' ? maybe(row.limitPrice) : null,
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
      fill: { execution_id: executionIdOf(updated), qty: text(fill.qty), price: text(fill.price), fee: text(fill.fee) },
    }),
  );
  await settleOco(session, updated, before.qty.minus(before.filledQty), fillQty);
  await protectEntry(session, updated);
  return { row: updated };
};

/**
 * One price observation applied to one order, under the account's lock: fill (in part or whole),
 * cancel (ioc, fok, or funds gone), or rest (an accepted order opens). Nothing happens to an
 * order that finished meanwhile, so two instances matching the same order cannot fill it twice.
 */
export const matchInBooks = async (
  tx: Tx,
  { order, instrument, price, liquidityLotsPerTick, at }: { order: Pick<SimOrderRow, 'userId' | 'assetClass' | 'mode' | 'id'>; instrument: InstrumentRow; price: Decimal; liquidityLotsPerTick: number; at: Date },
): Promise<TBrokerEvent[]> => {
  const session = await openSession(tx, keyOf(order), at);
  if (!session) return [];
  const row = await lockOrder(tx, order);
  if (!row || !active(row)) return [];
  await matchLocked(session, row, instrument, observationFor(instrument, price, liquidityLotsPerTick));
  await settled(session.tx);
  return session.events;
};

/** One observation applied to an order the session holds locked (with its account). */
const matchLocked = async (session: Session, row: SimOrderRow, instrument: InstrumentRow, observation: ReturnType<typeof observationFor>): Promise<void> => {
  const outcome = evaluate(matchableOf(row), observation);
  switch (outcome.kind) {
    case 'rest':
      if (row.status === 'accepted') await changeStatus(session, row, { kind: 'open' }, null);
      break;
    case 'cancel':
      await endOrder(session, row, { kind: 'cancel' }, { reason: `${outcome.cancel}: could not fill ${outcome.cancel === 'fok' ? 'in full ' : ''}at once`, withSibling: false, protect: true });
      break;
    case 'fill': {
      const result = await fillOrder(session, row, instrument, outcome.fillQty, outcome.fillReference);
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

// ---------------------------------------------------------------------------------------------
// Cancel, expiry, reset

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

/** Expires a working order whose expiry has come (a day order at its session's close). */
export const expireInBooks = async (tx: Tx, { order, at }: { order: Pick<SimOrderRow, 'userId' | 'assetClass' | 'mode' | 'id'>; at: Date }): Promise<TBrokerEvent[]> => {
  const session = await openSession(tx, keyOf(order), at);
  const row = session && (await lockOrder(tx, order));
  if (!session || !row || !active(row) || !row.expiresAt || row.expiresAt > at) return [];
  await endOrder(session, row, { kind: 'expire' }, { reason: 'day order: the session closed', withSibling: false, protect: true });
  await settled(session.tx);
  return session.events;
};

/** Cancels the working orders, removes the positions, and puts the cash back to `cash`. */
export const resetInBooks = async (
  tx: Tx,
  { key, opening, at }: { key: AccountKey; opening: { currency: string; cash: string }; at: Date },
): Promise<{ account: SimAccountRow; canceled: number; events: TBrokerEvent[] }> => {
  const session = await openAccountSession(tx, key, opening, at);
  const working = await listActiveOrders(tx, key);
  for (const order of working) {
    const row = await lockOrder(tx, order);
    if (row && active(row)) await endOrder(session, row, { kind: 'cancel' }, { reason: 'account reset', withSibling: false, protect: false });
  }
  await deletePositions(tx, key);
  session.positions.clear();
  const account = await resetAccountRow(tx, key, { cash: opening.cash, at });
  await settled(session.tx);
  return { account, canceled: working.length, events: session.events };
};
