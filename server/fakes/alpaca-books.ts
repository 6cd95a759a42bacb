// The fake Alpaca's books: accounts by key, their orders and positions in memory, and the
// matching that fills market orders at the set price and rests limit, stop, stop-limit and
// trailing stop orders until the price crosses (a trailing stop's mark and stop follow each price,
// silently, as Alpaca's do). Brackets, otos (an entry and held legs) and ocos (a limit and its
// stop leg working at once). Every change is reported as the trade update Alpaca would stream.
import { randomUUID } from 'node:crypto';
import type { Decimal } from 'decimal.js';
import { applyFill, type Position } from '../brokers/fills.ts';
import { ExactDecimal } from '../decimal.ts';
import type { AlpacaAccount, AlpacaOrder, AlpacaOrderRequest, AlpacaPosition, AlpacaReplaceRequest, AlpacaTradeUpdate, TAlpacaOrderStatus, TAlpacaTradeEvent } from '../brokers/alpaca/wire.ts';

/** A refusal as Alpaca answers it: the HTTP status and its `{code, message}` body. */
export class FakeAlpacaRefusal extends Error {
  readonly status: number;
  readonly code: number;
  constructor(status: number, code: number, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

const refuse = {
  invalid: (message: string) => new FakeAlpacaRefusal(422, 42210000, message),
  funds: (message: string) => new FakeAlpacaRefusal(403, 40310000, message),
  notFound: (message: string) => new FakeAlpacaRefusal(404, 40410000, message),
};

export interface FakeAccountSeed {
  keyId: string;
  secretKey: string;
  /** Starting cash, a decimal string. Default 100000. */
  cash?: string;
}

interface FakeAccount {
  id: string;
  keyId: string;
  secretKey: string;
  cash: Decimal;
  positions: Map<string, Position>;
  orders: Map<string, AlpacaOrder>;
  /** The entry of each bracket leg. */
  parentOf: Map<string, string>;
  createdAt: string;
}

const FINISHED: ReadonlySet<TAlpacaOrderStatus> = new Set(['filled', 'canceled', 'expired', 'rejected', 'replaced']);
const isOpen = (order: AlpacaOrder) => !FINISHED.has(order.status);
const ZERO = new ExactDecimal(0);

/** A fresh order as Alpaca answers one: accepted, nothing filled, the given fields over the rest. */
export const newAlpacaOrder = (fields: Pick<AlpacaOrder, 'symbol' | 'qty' | 'side' | 'type' | 'time_in_force' | 'client_order_id'> & Partial<AlpacaOrder>): AlpacaOrder => {
  const at = new Date().toISOString();
  return {
    id: randomUUID(),
    created_at: at,
    updated_at: at,
    submitted_at: at,
    filled_at: null,
    canceled_at: null,
    expired_at: null,
    failed_at: null,
    replaced_at: null,
    replaced_by: null,
    replaces: null,
    asset_id: `asset-${fields.symbol}`,
    asset_class: 'us_equity',
    notional: null,
    filled_qty: '0',
    filled_avg_price: null,
    order_class: '',
    order_type: fields.type,
    limit_price: null,
    stop_price: null,
    trail_percent: null,
    trail_price: null,
    hwm: null,
    status: 'accepted',
    extended_hours: false,
    legs: null,
    ...fields,
  };
};

/** `onPrice` hears each price set (the data stream prints it as a trade). */
export const createFakeAlpacaBooks = (publish: (keyId: string, update: AlpacaTradeUpdate) => void, onPrice?: (symbol: string, price: Decimal) => void) => {
  const accounts = new Map<string, FakeAccount>();
  const prices = new Map<string, Decimal>();
  const nowIso = () => new Date().toISOString();

  const report = (account: FakeAccount, event: TAlpacaTradeEvent, order: AlpacaOrder, fill?: { qty: Decimal; price: Decimal }) => {
    const position = account.positions.get(order.symbol);
    publish(account.keyId, {
      event,
      execution_id: randomUUID(),
      order: snapshotOf(account, order),
      timestamp: nowIso(),
      ...(fill ? { qty: fill.qty.toFixed(), price: fill.price.toFixed(), position_qty: (position?.qty ?? ZERO).toFixed() } : {}),
    });
  };

  const setStatus = (account: FakeAccount, order: AlpacaOrder, status: TAlpacaOrderStatus, event: TAlpacaTradeEvent) => {
    const at = nowIso();
    order.status = status;
    order.updated_at = at;
    if (status === 'canceled') order.canceled_at = at;
    if (status === 'expired') order.expired_at = at;
    report(account, event, order);
  };

  const legsOf = (account: FakeAccount, parent: AlpacaOrder) => (parent.legs ?? []).map((leg) => account.orders.get(leg.id)!);

  /** The order as the API shows it: a bracket entry with its legs' current state. */
  const snapshotOf = (account: FakeAccount, order: AlpacaOrder): AlpacaOrder => ({
    ...order,
    legs: order.legs ? legsOf(account, order).map((leg) => ({ ...leg })) : null,
  });

  /** Whether a resting order trades at this price, and at what price it would. */
  const executionPrice = (order: AlpacaOrder, price: Decimal): Decimal | undefined => {
    const buy = order.side === 'buy';
    const limit = order.limit_price === null ? undefined : new ExactDecimal(order.limit_price);
    if (order.type === 'stop' || order.type === 'stop_limit' || order.type === 'trailing_stop') {
      const stop = new ExactDecimal(order.stop_price ?? '0');
      const triggered = buy ? price.gte(stop) : price.lte(stop);
      if (!triggered) return undefined;
      if (order.type !== 'stop_limit') return price;
    }
    if (limit === undefined) return price;
    return (buy ? price.lte(limit) : price.gte(limit)) ? price : undefined;
  };

  const fill = (account: FakeAccount, order: AlpacaOrder, price: Decimal) => {
    const qty = new ExactDecimal(order.qty ?? '0');
    account.positions.set(order.symbol, applyFill(account.positions.get(order.symbol), { side: order.side, qty, price, fee: ZERO }));
    account.cash = order.side === 'buy' ? account.cash.minus(qty.times(price)) : account.cash.plus(qty.times(price));
    const at = nowIso();
    Object.assign(order, { status: 'filled', filled_qty: qty.toFixed(), filled_avg_price: price.toFixed(), filled_at: at, updated_at: at });
    report(account, 'fill', order, { qty, price });
    const parentId = account.parentOf.get(order.id);
    if (parentId) {
      // One leg filled: its sibling is done (one-cancels-other), and so is an oco's other half.
      const parent = account.orders.get(parentId)!;
      for (const sibling of legsOf(account, parent)) if (sibling.id !== order.id && isOpen(sibling)) setStatus(account, sibling, 'canceled', 'canceled');
      if (parent.order_class === 'oco' && isOpen(parent)) setStatus(account, parent, 'canceled', 'canceled');
    } else if (order.order_class === 'oco') {
      for (const leg of legsOf(account, order)) if (isOpen(leg)) setStatus(account, leg, 'canceled', 'canceled');
    } else {
      // The entry filled: its legs start working.
      for (const leg of legsOf(account, order)) setStatus(account, leg, 'new', 'new');
      for (const leg of legsOf(account, order)) tryMatch(account, leg);
    }
  };

  /** A trailing stop's stop from its mark: a sell's below its high, a buy's above its low, on the cent. */
  const trailStopOf = (order: Pick<AlpacaOrder, 'side' | 'trail_percent' | 'trail_price'>, mark: Decimal): Decimal => {
    const distance = order.trail_price !== null ? new ExactDecimal(order.trail_price) : mark.times(new ExactDecimal(order.trail_percent ?? '0')).div(100);
    const sell = order.side === 'sell';
    return (sell ? mark.minus(distance) : mark.plus(distance)).toDecimalPlaces(2, sell ? ExactDecimal.ROUND_DOWN : ExactDecimal.ROUND_UP);
  };

  /** A working trailing stop follows a better price: its mark and stop move, with no update streamed. */
  const follow = (order: AlpacaOrder, price: Decimal) => {
    if (order.type !== 'trailing_stop' || order.hwm === null) return;
    const mark = new ExactDecimal(order.hwm);
    if (order.side === 'sell' ? price.lte(mark) : price.gte(mark)) return;
    order.hwm = price.toFixed();
    order.stop_price = trailStopOf(order, price).toFixed();
  };

  /** Trades the order if the price allows; an ioc or fok order that cannot trade now is canceled. */
  const tryMatch = (account: FakeAccount, order: AlpacaOrder) => {
    if (order.status !== 'new' && order.status !== 'partially_filled') return;
    const price = prices.get(order.symbol);
    if (price) follow(order, price);
    const at = price && executionPrice(order, price);
    if (at) fill(account, order, at);
    else if (order.time_in_force === 'ioc' || order.time_in_force === 'fok') setStatus(account, order, 'canceled', 'canceled');
  };

  const accountOf = (keyId: string) => {
    const account = accounts.get(keyId);
    if (!account) throw new FakeAlpacaRefusal(403, 40310000, 'forbidden.');
    return account;
  };

  /** Cash less what open buys would cost at their worst price (a cash account's buying power). */
  const buyingPowerOf = (account: FakeAccount): Decimal => {
    let reserved = ZERO;
    for (const order of account.orders.values()) {
      if (order.side !== 'buy' || !isOpen(order) || account.parentOf.has(order.id)) continue;
      reserved = reserved.plus(new ExactDecimal(order.qty ?? '0').times(worstPrice(order)));
    }
    return account.cash.minus(reserved);
  };
  const worstPrice = (order: Pick<AlpacaOrder, 'symbol' | 'limit_price' | 'stop_price'>) =>
    new ExactDecimal(order.limit_price ?? order.stop_price ?? prices.get(order.symbol) ?? '0');

  const sellableQty = (account: FakeAccount, symbol: string): Decimal => {
    let held = account.positions.get(symbol)?.qty ?? ZERO;
    for (const order of account.orders.values()) {
      if (order.symbol === symbol && order.side === 'sell' && isOpen(order) && !account.parentOf.has(order.id)) held = held.minus(order.qty ?? '0');
    }
    return held;
  };

  const validate = (account: FakeAccount, request: AlpacaOrderRequest) => {
    if (!prices.has(request.symbol)) throw refuse.invalid(`asset "${request.symbol}" not found`);
    const qty = new ExactDecimal(request.qty);
    if (!qty.gt(0)) throw refuse.invalid('qty must be > 0');
    if (!['market', 'limit', 'stop', 'stop_limit', 'trailing_stop'].includes(request.type)) throw refuse.invalid(`invalid order type for this fake: ${request.type}`);
    if (!['day', 'gtc', 'ioc', 'fok'].includes(request.time_in_force)) throw refuse.invalid(`invalid time_in_force for this fake: ${request.time_in_force}`);
    if (request.type === 'trailing_stop' && (request.trail_price === undefined) === (request.trail_percent === undefined)) throw refuse.invalid('trailing_stop requires exactly one of trail_price and trail_percent');
    if (request.type === 'trailing_stop' && (request.limit_price !== undefined || request.stop_price !== undefined)) throw refuse.invalid('trailing_stop takes no limit_price or stop_price');
    if (request.order_class === 'oco') {
      if (request.type !== 'limit' || !request.take_profit?.limit_price || !request.stop_loss?.stop_price) throw refuse.invalid('oco orders must be limit orders with take_profit.limit_price and stop_loss.stop_price');
    } else if ((request.type === 'limit' || request.type === 'stop_limit') && !request.limit_price) throw refuse.invalid('limit_price is required');
    if ((request.type === 'stop' || request.type === 'stop_limit') && !request.stop_price) throw refuse.invalid('stop_price is required');
    if (request.client_order_id && [...account.orders.values()].some((order) => order.client_order_id === request.client_order_id)) throw refuse.invalid('client_order_id must be unique');
    if (request.order_class === 'bracket' && (!request.take_profit?.limit_price || !request.stop_loss?.stop_price)) throw refuse.invalid('bracket orders require take_profit.limit_price and stop_loss.stop_price');
    if (request.order_class === 'oto' && !request.take_profit?.limit_price === !request.stop_loss?.stop_price) throw refuse.invalid('oto orders require one of take_profit and stop_loss');
    if (request.order_class && request.order_class !== 'simple' && request.time_in_force !== 'day' && request.time_in_force !== 'gtc') throw refuse.invalid(`${request.order_class} orders must be day or gtc`);
    if (request.side === 'buy') {
      const cost = qty.times(worstPrice({ symbol: request.symbol, limit_price: request.limit_price ?? null, stop_price: request.stop_price ?? null }));
      if (cost.gt(buyingPowerOf(account))) throw refuse.funds('insufficient buying power');
    } else {
      const available = sellableQty(account, request.symbol);
      if (qty.gt(available)) throw refuse.funds(`insufficient qty available for order (requested: ${qty.toFixed()}, available: ${available.toFixed()})`);
    }
  };

  const place = (keyId: string, request: AlpacaOrderRequest): AlpacaOrder => {
    const account = accountOf(keyId);
    validate(account, request);
    const order = newAlpacaOrder({
      symbol: request.symbol,
      qty: request.qty,
      side: request.side,
      type: request.type,
      time_in_force: request.time_in_force,
      client_order_id: request.client_order_id || randomUUID(),
      // An oco is its take-profit limit, with the stop leg beside it.
      limit_price: request.order_class === 'oco' ? request.take_profit!.limit_price : (request.limit_price ?? null),
      stop_price: request.stop_price ?? null,
      trail_percent: request.trail_percent ?? null,
      trail_price: request.trail_price ?? null,
      order_class: request.order_class ?? '',
    });
    if (order.type === 'trailing_stop') {
      const price = prices.get(order.symbol)!;
      Object.assign(order, { hwm: price.toFixed(), stop_price: trailStopOf(order, price).toFixed() });
    }
    account.orders.set(order.id, order);
    order.legs = legsRequested(order, request);
    for (const leg of order.legs ?? []) {
      account.orders.set(leg.id, leg);
      account.parentOf.set(leg.id, order.id);
    }
    // The answer is the order as accepted; the books move on before the answer leaves, as a
    // real venue's would while the answer is on the wire.
    const answer = snapshotOf(account, order);
    report(account, 'accepted', order);
    setStatus(account, order, 'new', 'new');
    // An oco's stop leg works from the start; a bracket's or an oto's waits for the entry's fill.
    if (order.order_class === 'oco') for (const leg of legsOf(account, order)) setStatus(account, leg, 'new', 'new');
    tryMatch(account, order);
    if (order.order_class === 'oco') for (const leg of legsOf(account, order)) tryMatch(account, leg);
    return answer;
  };

  /**
   * The legs a bracket, oto or oco asks for: a bracket's and an oto's are exits of the entry, held
   * until it fills; an oco's stop leg sells beside its limit. Null for a simple order.
   */
  const legsRequested = (order: AlpacaOrder, request: AlpacaOrderRequest): AlpacaOrder[] | null => {
    const orderClass = request.order_class;
    if (orderClass !== 'bracket' && orderClass !== 'oto' && orderClass !== 'oco') return null;
    const side = orderClass === 'oco' ? order.side : order.side === 'buy' ? 'sell' : 'buy';
    const leg = { symbol: order.symbol, qty: order.qty, side, time_in_force: order.time_in_force, order_class: orderClass, status: 'held', client_order_id: randomUUID() } as const;
    const takeProfit = orderClass !== 'oco' && request.take_profit ? [newAlpacaOrder({ ...leg, type: 'limit', limit_price: request.take_profit.limit_price })] : [];
    const stopLoss = request.stop_loss
      ? [newAlpacaOrder({ ...leg, client_order_id: randomUUID(), type: request.stop_loss.limit_price ? 'stop_limit' : 'stop', stop_price: request.stop_loss.stop_price, limit_price: request.stop_loss.limit_price ?? null })]
      : [];
    return [...takeProfit, ...stopLoss];
  };

  const find = (keyId: string, orderId: string) => {
    const account = accountOf(keyId);
    const order = account.orders.get(orderId);
    if (!order) throw refuse.notFound('order not found');
    return { account, order };
  };

  const cancel = (keyId: string, orderId: string) => {
    const { account, order } = find(keyId, orderId);
    if (!isOpen(order)) throw refuse.invalid(`order is already in "${order.status}" state`);
    setStatus(account, order, 'canceled', 'canceled');
    for (const leg of legsOf(account, order)) if (isOpen(leg)) setStatus(account, leg, 'canceled', 'canceled');
  };

  const trailReplaced = (order: AlpacaOrder, trail: string | undefined): Pick<AlpacaOrder, 'trail_percent' | 'trail_price' | 'hwm' | 'stop_price'> => {
    const next = {
      trail_percent: order.trail_percent !== null ? (trail ?? order.trail_percent) : null,
      trail_price: order.trail_price !== null ? (trail ?? order.trail_price) : null,
    };
    return { ...next, hwm: order.hwm, stop_price: trailStopOf({ side: order.side, ...next }, new ExactDecimal(order.hwm ?? '0')).toFixed() };
  };

  const replace = (keyId: string, orderId: string, change: AlpacaReplaceRequest): AlpacaOrder => {
    const { account, order } = find(keyId, orderId);
    if (!isOpen(order) || order.status === 'held') throw refuse.invalid(`order is in "${order.status}" state and cannot be replaced`);
    const successor = newAlpacaOrder({
      symbol: order.symbol,
      qty: change.qty ?? order.qty,
      side: order.side,
      type: order.type,
      time_in_force: order.time_in_force,
      client_order_id: change.client_order_id ?? randomUUID(),
      limit_price: change.limit_price ?? order.limit_price,
      stop_price: change.stop_price ?? order.stop_price,
      // A trailing stop keeps its mark; a new trail sets its stop again from it.
      ...(order.type === 'trailing_stop' ? trailReplaced(order, change.trail) : {}),
      replaces: order.id,
      status: 'new',
    });
    Object.assign(order, { replaced_by: successor.id, replaced_at: nowIso() });
    setStatus(account, order, 'replaced', 'replaced');
    account.orders.set(successor.id, successor);
    report(account, 'new', successor);
    tryMatch(account, successor);
    return snapshotOf(account, successor);
  };

  return {
    addAccount: ({ keyId, secretKey, cash = '100000' }: FakeAccountSeed) => {
      accounts.set(keyId, { id: randomUUID(), keyId, secretKey, cash: new ExactDecimal(cash), positions: new Map(), orders: new Map(), parentOf: new Map(), createdAt: nowIso() });
    },
    secretOf: (keyId: string) => accounts.get(keyId)?.secretKey,
    /** Sets a symbol's price (a new symbol becomes tradable) and trades every resting order it crosses. */
    setPrice: (symbol: string, price: string) => {
      prices.set(symbol, new ExactDecimal(price));
      onPrice?.(symbol, prices.get(symbol)!);
      for (const account of accounts.values()) for (const order of [...account.orders.values()]) if (order.symbol === symbol) tryMatch(account, order);
    },
    priceOf: (symbol: string) => prices.get(symbol),
    place,
    cancel,
    replace,
    getOrder: (keyId: string, orderId: string) => {
      const { account, order } = find(keyId, orderId);
      return snapshotOf(account, order);
    },
    getByClientOrderId: (keyId: string, clientOrderId: string) => {
      const account = accountOf(keyId);
      const order = [...account.orders.values()].find((candidate) => candidate.client_order_id === clientOrderId);
      if (!order) throw refuse.notFound('order not found');
      return snapshotOf(account, order);
    },
    /** `nested`: legs only under their entry; else every order flat, legs included, without `legs`. */
    listOrders: (keyId: string, { status, nested }: { status: 'open' | 'closed' | 'all'; nested: boolean }): AlpacaOrder[] => {
      const account = accountOf(keyId);
      const wanted = (order: AlpacaOrder) => status === 'all' || (status === 'open') === isOpen(order) || (nested && status === 'open' && legsOf(account, order).some(isOpen));
      return [...account.orders.values()]
        .filter((order) => !(nested && account.parentOf.has(order.id)) && wanted(order))
        .reverse()
        .map((order) => (nested ? snapshotOf(account, order) : { ...order, legs: null }));
    },
    positions: (keyId: string): AlpacaPosition[] => {
      const account = accountOf(keyId);
      return [...account.positions.entries()]
        .filter(([, position]) => position.qty.gt(0))
        .map(([symbol, position]) => {
          const price = prices.get(symbol) ?? position.avgEntryPrice;
          const marketValue = position.qty.times(price);
          const costBasis = position.qty.times(position.avgEntryPrice);
          return {
            asset_id: `asset-${symbol}`,
            symbol,
            exchange: 'NASDAQ',
            asset_class: 'us_equity',
            avg_entry_price: position.avgEntryPrice.toFixed(),
            qty: position.qty.toFixed(),
            qty_available: sellableQty(account, symbol).toFixed(),
            side: 'long',
            market_value: marketValue.toFixed(),
            cost_basis: costBasis.toFixed(),
            unrealized_pl: marketValue.minus(costBasis).toFixed(),
            current_price: price.toFixed(),
            lastday_price: price.toFixed(),
            change_today: '0',
          };
        });
    },
    account: (keyId: string): AlpacaAccount => {
      const account = accountOf(keyId);
      let equity = account.cash;
      for (const [symbol, position] of account.positions) equity = equity.plus(position.qty.times(prices.get(symbol) ?? position.avgEntryPrice));
      return {
        id: account.id,
        account_number: `PA${account.id.slice(0, 8).toUpperCase()}`,
        status: 'ACTIVE',
        currency: 'USD',
        cash: account.cash.toFixed(),
        equity: equity.toFixed(),
        portfolio_value: equity.toFixed(),
        buying_power: buyingPowerOf(account).toFixed(),
        created_at: account.createdAt,
      };
    },
  };
};

export type FakeAlpacaBooks = ReturnType<typeof createFakeAlpacaBooks>;
