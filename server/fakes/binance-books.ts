// The fake Binance's books: spot accounts by API key with free and locked balances, their orders
// and trades, the set prices, and the matching that fills market orders at the price and rests
// limit orders until the price crosses them, and OCO order lists (a sell's LIMIT_MAKER above the
// price and its STOP_LOSS or STOP_LOSS_LIMIT below it, the stop leg working once the price falls
// to its stop; the fill of one leg expires the other in the same step, as Binance does; canceling
// either cancels both). Commission is taken in the quote asset (as with a
// fee paid from another balance) so a holding equals the sum of its fills. Setting a price is a
// market trade at it: its listeners (the market streams) hear of it before the matching runs.
import type { Decimal } from 'decimal.js';
import { ExactDecimal } from '../decimal.ts';

/** A refusal as Binance answers it: {code, msg} on HTTP `status`. */
export class FakeBinanceRefusal extends Error {
  readonly code: number;
  readonly status: number;
  constructor(code: number, message: string, status = 400) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

export const FAKE_BINANCE_REFUSALS = {
  funds: () => new FakeBinanceRefusal(-2010, 'Account has insufficient balance for requested action.'),
  unknownOrder: () => new FakeBinanceRefusal(-2013, 'Order does not exist.'),
  cancelUnknown: () => new FakeBinanceRefusal(-2011, 'Unknown order sent.'),
  unknownSymbol: () => new FakeBinanceRefusal(-1121, 'Invalid symbol.'),
  badParameter: (name: string) => new FakeBinanceRefusal(-1102, `Mandatory parameter '${name}' was not sent, was empty/null, or malformed.`),
  duplicateClientId: () => new FakeBinanceRefusal(-2010, 'Duplicate order sent.'),
  // Binance's NEW_ORDER_REJECTED for an order list whose prices are on the wrong side of the last price.
  ocoPrices: () => new FakeBinanceRefusal(-2010, 'The relationship of the prices for the orders is not correct.'),
  // Binance's ILLEGAL_CHARS, worded as its documented 'Illegal characters found in parameter '%s'; legal range is '%s'.'
  illegalCharacters: (name: string, legalRange: string) => new FakeBinanceRefusal(-1100, `Illegal characters found in parameter '${name}'; legal range is '${legalRange}'.`),
} as const;

/** Binance's documented rule for a client order id (newClientOrderId, origClientOrderId): its length is part of it. */
export const FAKE_BINANCE_CLIENT_ORDER_ID = /^[.A-Z:/a-z0-9_-]{1,36}$/;
/** The rule as Binance writes it in its refusal. */
const CLIENT_ORDER_ID_RANGE = '^[\\.A-Z\\:/a-z0-9_-]{1,36}$';

/** Refuses a client order id Binance would refuse, as Binance does (-1100, whatever was wrong: a character or the length). */
export const checkFakeBinanceClientOrderId = (name: string, value: string | undefined) => {
  if (value !== undefined && !FAKE_BINANCE_CLIENT_ORDER_ID.test(value)) throw FAKE_BINANCE_REFUSALS.illegalCharacters(name, CLIENT_ORDER_ID_RANGE);
};

export interface FakeBinanceAccountSeed {
  apiKey: string;
  secret: string;
  /** Starting balances by asset. Default 100000 USDT. */
  balances?: Record<string, string>;
}

/** A spot market the fake lists: BTCUSDT is base BTC, quote USDT. */
export interface FakeBinanceMarket {
  symbol: string;
  base: string;
  quote: string;
  tickSize: string;
  stepSize: string;
}

export interface FakeBinanceOrder {
  symbol: string;
  orderId: number;
  orderListId: number;
  clientOrderId: string;
  price: string;
  origQty: string;
  executedQty: string;
  cummulativeQuoteQty: string;
  status: 'NEW' | 'PARTIALLY_FILLED' | 'FILLED' | 'CANCELED' | 'REJECTED' | 'EXPIRED';
  timeInForce: string;
  type: string;
  side: 'BUY' | 'SELL';
  stopPrice: string;
  time: number;
  updateTime: number;
  isWorking: boolean;
  workingTime: number;
  origQuoteOrderQty: string;
  selfTradePreventionMode: string;
}

export interface FakeBinanceTrade {
  symbol: string;
  id: number;
  orderId: number;
  orderListId: number;
  price: string;
  qty: string;
  quoteQty: string;
  commission: string;
  commissionAsset: string;
  time: number;
  isBuyer: boolean;
  isMaker: boolean;
  isBestMatch: boolean;
}

/** One change of an order as Binance's executionReport names it, with the trade that made it. */
export interface FakeBinanceOrderChange {
  apiKey: string;
  execution: 'NEW' | 'TRADE' | 'CANCELED' | 'EXPIRED';
  /** The order as it stands after the change (a copy). */
  order: FakeBinanceOrder;
  trade?: FakeBinanceTrade;
}

/** A new OCO order list as the fake takes it: a SELL, LIMIT_MAKER above the price, STOP_LOSS or STOP_LOSS_LIMIT below it. */
export interface FakeBinanceOcoRequest {
  symbol: string;
  side: string;
  quantity: string;
  aboveType: string;
  abovePrice?: string;
  aboveClientOrderId?: string;
  belowType: string;
  belowStopPrice?: string;
  belowPrice?: string;
  belowTimeInForce?: string;
  belowClientOrderId?: string;
  listClientOrderId?: string;
}

/** A price set: the market trade at it, as the market streams report it. */
export interface FakeBinancePriceSet {
  symbol: string;
  /** The price as set (decimal text). */
  price: string;
  /** When the trade happened (ms). */
  time: number;
}

interface Account {
  apiKey: string;
  secret: string;
  free: Map<string, Decimal>;
  locked: Map<string, Decimal>;
  orders: FakeBinanceOrder[];
  trades: FakeBinanceTrade[];
}

export const FAKE_BINANCE_COMMISSION_RATE = '0.001';
const ZERO = new ExactDecimal(0);
const d = (text: string) => new ExactDecimal(text);
const text = (value: Decimal) => value.toFixed();

/** Adds the listener; the answer removes it. */
const listen = <T>(listeners: Set<(value: T) => void>, listener: (value: T) => void) => {
  listeners.add(listener);
  return () => void listeners.delete(listener);
};

export const createFakeBinanceBooks = (now: () => number = Date.now) => {
  const accounts = new Map<string, Account>();
  const markets = new Map<string, FakeBinanceMarket>();
  const prices = new Map<string, Decimal>();
  let nextOrderId = 1;
  let nextTradeId = 1;
  let nextOrderListId = 1;
  /** Orders that hold no reservation: an OCO's stop leg until it triggers (its limit leg holds the list's). */
  const unreserved = new Set<number>();
  const listeners = new Set<(change: FakeBinanceOrderChange) => void>();
  const priceListeners = new Set<(set: FakeBinancePriceSet) => void>();
  const changed = (account: Account, execution: FakeBinanceOrderChange['execution'], order: FakeBinanceOrder, trade?: FakeBinanceTrade) => {
    for (const listener of listeners) listener({ apiKey: account.apiKey, execution, order: { ...order }, ...(trade ? { trade: { ...trade } } : {}) });
  };

  const accountOf = (apiKey: string) => {
    const account = accounts.get(apiKey);
    if (!account) throw new FakeBinanceRefusal(-2015, 'Invalid API-key, IP, or permissions for action.', 401);
    return account;
  };
  const marketOf = (symbol: string) => {
    const market = markets.get(symbol);
    if (!market) throw FAKE_BINANCE_REFUSALS.unknownSymbol();
    return market;
  };
  const get = (balances: Map<string, Decimal>, asset: string) => balances.get(asset) ?? ZERO;
  const move = (balances: Map<string, Decimal>, asset: string, by: Decimal) => balances.set(asset, get(balances, asset).plus(by));

  /** What an order holds while it rests: a buy the quote at its limit (with commission), a sell its base. */
  const reservation = (order: FakeBinanceOrder, market: FakeBinanceMarket, qty: Decimal) =>
    order.side === 'BUY' ? { asset: market.quote, amount: qty.times(order.price).times(d('1').plus(FAKE_BINANCE_COMMISSION_RATE)) } : { asset: market.base, amount: qty };

  /** Fills the rest of the order, or `part` of it. */
  const fill = (account: Account, order: FakeBinanceOrder, price: Decimal, fromLocked: boolean, part?: Decimal) => {
    const market = marketOf(order.symbol);
    const qty = part ?? d(order.origQty).minus(order.executedQty);
    const quoteQty = qty.times(price);
    const commission = quoteQty.times(FAKE_BINANCE_COMMISSION_RATE);
    if (fromLocked) {
      const held = reservation(order, market, qty);
      move(account.locked, held.asset, held.amount.negated());
      move(account.free, held.asset, held.amount);
    }
    if (order.side === 'BUY') {
      move(account.free, market.quote, quoteQty.plus(commission).negated());
      move(account.free, market.base, qty);
    } else {
      move(account.free, market.base, qty.negated());
      move(account.free, market.quote, quoteQty.minus(commission));
    }
    const at = now();
    account.trades.push({
      symbol: order.symbol,
      id: nextTradeId++,
      orderId: order.orderId,
      orderListId: order.orderListId,
      price: text(price),
      qty: text(qty),
      quoteQty: text(quoteQty),
      commission: text(commission),
      commissionAsset: market.quote,
      time: at,
      isBuyer: order.side === 'BUY',
      isMaker: order.type !== 'MARKET',
      isBestMatch: true,
    });
    order.executedQty = text(d(order.executedQty).plus(qty));
    order.cummulativeQuoteQty = text(d(order.cummulativeQuoteQty).plus(quoteQty));
    order.status = d(order.executedQty).gte(order.origQty) ? 'FILLED' : 'PARTIALLY_FILLED';
    order.updateTime = at;
    changed(account, 'TRADE', order, account.trades.at(-1));
    return account.trades.at(-1)!;
  };

  const crosses = (order: FakeBinanceOrder, price: Decimal) => (order.side === 'BUY' ? price.lte(order.price) : price.gte(order.price));
  const isOpen = (order: FakeBinanceOrder) => order.status === 'NEW' || order.status === 'PARTIALLY_FILLED';
  const isStopType = (type: string) => type === 'STOP_LOSS' || type === 'STOP_LOSS_LIMIT';

  /** Ends an open order with its reservation given back: CANCELED (asked) or EXPIRED (its list's other leg filled). */
  const end = (account: Account, order: FakeBinanceOrder, status: 'CANCELED' | 'EXPIRED') => {
    if (!unreserved.delete(order.orderId)) {
      const held = reservation(order, marketOf(order.symbol), d(order.origQty).minus(order.executedQty));
      move(account.locked, held.asset, held.amount.negated());
      move(account.free, held.asset, held.amount);
    }
    order.status = status;
    order.updateTime = now();
    changed(account, status, order);
  };
  /** The other open orders of the order's list. */
  const siblingsOf = (account: Account, order: FakeBinanceOrder) =>
    order.orderListId === -1 ? [] : account.orders.filter((other) => other.orderListId === order.orderListId && other !== order && isOpen(other));

  /**
   * An OCO's stop leg reached (a sell's price at or under its stop): the other leg expires, then
   * a STOP_LOSS fills at the price, a STOP_LOSS_LIMIT rests at its limit (filling if the price crosses it).
   */
  const trigger = (account: Account, order: FakeBinanceOrder, price: Decimal) => {
    for (const sibling of siblingsOf(account, order)) end(account, sibling, 'EXPIRED');
    order.isWorking = true;
    order.workingTime = now();
    unreserved.delete(order.orderId);
    if (order.type === 'STOP_LOSS') return void fill(account, order, price, false);
    const held = reservation(order, marketOf(order.symbol), d(order.origQty));
    move(account.free, held.asset, held.amount.negated());
    move(account.locked, held.asset, held.amount);
    if (crosses(order, price)) fill(account, order, d(order.price), true);
  };

  /** Fills every resting order of the symbol that the price now crosses, at its limit price; triggers the stop legs it reaches. */
  const match = (symbol: string) => {
    const price = prices.get(symbol);
    if (!price) return;
    for (const account of accounts.values()) {
      for (const order of [...account.orders]) {
        if (order.symbol !== symbol || !isOpen(order)) continue;
        if (isStopType(order.type) && !order.isWorking) {
          if (order.side === 'SELL' ? price.lte(order.stopPrice) : price.gte(order.stopPrice)) trigger(account, order, price);
        } else if (crosses(order, price)) {
          fill(account, order, d(order.price), !unreserved.has(order.orderId));
          // One leg of an OCO traded: Binance expires the other at once.
          for (const sibling of siblingsOf(account, order)) end(account, sibling, 'EXPIRED');
        }
      }
    }
  };

  return {
    addMarket: (market: FakeBinanceMarket) => void markets.set(market.symbol, market),
    markets: () => [...markets.values()],
    addAccount: ({ apiKey, secret, balances = { USDT: '100000' } }: FakeBinanceAccountSeed) => {
      accounts.set(apiKey, { apiKey, secret, free: new Map(Object.entries(balances).map(([asset, amount]) => [asset, d(amount)])), locked: new Map(), orders: [], trades: [] });
    },
    secretOf: (apiKey: string) => accounts.get(apiKey)?.secret,
    /** The market trades the symbol at the price, at `time` (ms; now by default). */
    setPrice: (symbol: string, price: string, time: number = now()) => {
      prices.set(symbol, d(price));
      for (const listener of priceListeners) listener({ symbol, price: text(d(price)), time });
      match(symbol);
    },
    priceOf: (symbol: string) => {
      marketOf(symbol);
      const price = prices.get(symbol);
      if (!price) throw FAKE_BINANCE_REFUSALS.unknownSymbol();
      return text(price);
    },
    balances: (apiKey: string) => {
      const account = accountOf(apiKey);
      const assets = new Set([...account.free.keys(), ...account.locked.keys()]);
      return [...assets].map((asset) => ({ asset, free: text(get(account.free, asset)), locked: text(get(account.locked, asset)) }));
    },
    place: (apiKey: string, request: { symbol: string; side: string; type: string; quantity: string; price?: string; timeInForce?: string; newClientOrderId?: string }) => {
      const account = accountOf(apiKey);
      const market = marketOf(request.symbol);
      const price = prices.get(request.symbol);
      if (!price) throw FAKE_BINANCE_REFUSALS.unknownSymbol();
      if (request.side !== 'BUY' && request.side !== 'SELL') throw FAKE_BINANCE_REFUSALS.badParameter('side');
      if (request.type !== 'MARKET' && request.type !== 'LIMIT') throw new FakeBinanceRefusal(-1116, 'Invalid orderType.');
      const qty = /^\d+(\.\d+)?$/.test(request.quantity) ? d(request.quantity) : ZERO;
      if (qty.lte(0) || !qty.mod(market.stepSize).isZero()) throw new FakeBinanceRefusal(-1013, 'Filter failure: LOT_SIZE');
      if (request.type === 'LIMIT') {
        if (!request.price || !/^\d+(\.\d+)?$/.test(request.price) || d(request.price).lte(0)) throw FAKE_BINANCE_REFUSALS.badParameter('price');
        if (!d(request.price).mod(market.tickSize).isZero()) throw new FakeBinanceRefusal(-1013, 'Filter failure: PRICE_FILTER');
        if (!request.timeInForce) throw FAKE_BINANCE_REFUSALS.badParameter('timeInForce');
      }
      const clientOrderId = request.newClientOrderId ?? `fake-${nextOrderId}`;
      if (account.orders.some((order) => order.clientOrderId === clientOrderId && (order.status === 'NEW' || order.status === 'PARTIALLY_FILLED'))) throw FAKE_BINANCE_REFUSALS.duplicateClientId();
      const at = now();
      const order: FakeBinanceOrder = {
        symbol: request.symbol,
        orderId: nextOrderId++,
        orderListId: -1,
        clientOrderId,
        price: request.type === 'LIMIT' ? text(d(request.price!)) : '0',
        origQty: text(qty),
        executedQty: '0',
        cummulativeQuoteQty: '0',
        status: 'NEW',
        timeInForce: request.type === 'LIMIT' ? request.timeInForce! : 'GTC',
        type: request.type,
        side: request.side,
        stopPrice: '0',
        time: at,
        updateTime: at,
        isWorking: true,
        workingTime: at,
        origQuoteOrderQty: '0',
        selfTradePreventionMode: 'EXPIRE_MAKER',
      };
      // Funds are checked at the price the order may cost at most: the market now, or the limit.
      const worst = request.type === 'MARKET' ? price : d(order.price);
      const needed = request.side === 'BUY' ? { asset: market.quote, amount: qty.times(worst).times(d('1').plus(FAKE_BINANCE_COMMISSION_RATE)) } : { asset: market.base, amount: qty };
      if (get(account.free, needed.asset).lt(needed.amount)) throw FAKE_BINANCE_REFUSALS.funds();
      account.orders.push(order);
      changed(account, 'NEW', order);
      const fills: FakeBinanceTrade[] = [];
      if (request.type === 'MARKET') fills.push(fill(account, order, price, false));
      else if (crosses(order, price)) fills.push(fill(account, order, d(order.price), false));
      else if (order.timeInForce === 'IOC' || order.timeInForce === 'FOK') {
        // Nothing to take now: an immediate-or-cancel order expires instead of resting.
        order.status = 'EXPIRED';
        order.isWorking = false;
        changed(account, 'EXPIRED', order);
      } else {
        const held = reservation(order, market, qty);
        move(account.free, held.asset, held.amount.negated());
        move(account.locked, held.asset, held.amount);
      }
      return { order, fills };
    },
    /** A new OCO list (the checks Binance makes, in its order): its two orders, stop leg first as Binance lists them. */
    placeOco: (apiKey: string, request: FakeBinanceOcoRequest) => {
      const account = accountOf(apiKey);
      const market = marketOf(request.symbol);
      const price = prices.get(request.symbol);
      if (!price) throw FAKE_BINANCE_REFUSALS.unknownSymbol();
      if (request.side !== 'SELL') throw new FakeBinanceRefusal(-1000, 'The fake takes a SELL OCO only.');
      if (request.aboveType !== 'LIMIT_MAKER' || !isStopType(request.belowType)) throw new FakeBinanceRefusal(-1116, 'Invalid orderType.');
      const qty = /^\d+(\.\d+)?$/.test(request.quantity) ? d(request.quantity) : ZERO;
      if (qty.lte(0) || !qty.mod(market.stepSize).isZero()) throw new FakeBinanceRefusal(-1013, 'Filter failure: LOT_SIZE');
      const priced = (name: 'abovePrice' | 'belowStopPrice' | 'belowPrice') => {
        const value = request[name];
        if (!value || !/^\d+(\.\d+)?$/.test(value) || d(value).lte(0)) throw FAKE_BINANCE_REFUSALS.badParameter(name);
        if (!d(value).mod(market.tickSize).isZero()) throw new FakeBinanceRefusal(-1013, 'Filter failure: PRICE_FILTER');
        return d(value);
      };
      const above = priced('abovePrice');
      const stop = priced('belowStopPrice');
      const belowLimit = request.belowType === 'STOP_LOSS_LIMIT' ? priced('belowPrice') : undefined;
      if (belowLimit && !request.belowTimeInForce) throw FAKE_BINANCE_REFUSALS.badParameter('belowTimeInForce');
      for (const name of ['aboveClientOrderId', 'belowClientOrderId', 'listClientOrderId'] as const) checkFakeBinanceClientOrderId(name, request[name]);
      // A sell's limit must be above the last price and its stop below it (the limit maker would
      // take at once, the stop trigger at once).
      if (!above.gt(price) || !stop.lt(price)) throw FAKE_BINANCE_REFUSALS.ocoPrices();
      const ids = [request.belowClientOrderId ?? `fake-${nextOrderId}`, request.aboveClientOrderId ?? `fake-${nextOrderId + 1}`];
      if (account.orders.some((order) => ids.includes(order.clientOrderId) && isOpen(order))) throw FAKE_BINANCE_REFUSALS.duplicateClientId();
      if (get(account.free, market.base).lt(qty)) throw FAKE_BINANCE_REFUSALS.funds();
      const at = now();
      const orderListId = nextOrderListId++;
      const base = { symbol: request.symbol, orderListId, origQty: text(qty), executedQty: '0', cummulativeQuoteQty: '0', status: 'NEW' as const, side: 'SELL' as const, time: at, updateTime: at, origQuoteOrderQty: '0', selfTradePreventionMode: 'EXPIRE_MAKER' };
      const stopLeg: FakeBinanceOrder = {
        ...base,
        orderId: nextOrderId++,
        clientOrderId: ids[0]!,
        type: request.belowType,
        price: belowLimit ? text(belowLimit) : '0',
        stopPrice: text(stop),
        timeInForce: request.belowTimeInForce ?? 'GTC',
        isWorking: false,
        workingTime: -1,
      };
      const limitLeg: FakeBinanceOrder = { ...base, orderId: nextOrderId++, clientOrderId: ids[1]!, type: 'LIMIT_MAKER', price: text(above), stopPrice: '0', timeInForce: 'GTC', isWorking: true, workingTime: at };
      // The list holds its quantity once: the limit leg reserves it, the stop leg takes it over when it triggers.
      move(account.free, market.base, qty.negated());
      move(account.locked, market.base, qty);
      unreserved.add(stopLeg.orderId);
      account.orders.push(stopLeg, limitLeg);
      changed(account, 'NEW', stopLeg);
      changed(account, 'NEW', limitLeg);
      return { orderListId, listClientOrderId: request.listClientOrderId ?? `fake-list-${orderListId}`, transactionTime: at, orders: [stopLeg, limitLeg] };
    },
    find: (apiKey: string, symbol: string, lookup: { orderId?: string; origClientOrderId?: string }) => {
      const account = accountOf(apiKey);
      marketOf(symbol);
      const order = account.orders.find(
        (candidate) => candidate.symbol === symbol && (lookup.orderId ? String(candidate.orderId) === lookup.orderId : candidate.clientOrderId === lookup.origClientOrderId),
      );
      if (!order) throw FAKE_BINANCE_REFUSALS.unknownOrder();
      return order;
    },
    cancel: (apiKey: string, symbol: string, lookup: { orderId?: string; origClientOrderId?: string }) => {
      const account = accountOf(apiKey);
      const order = account.orders.find(
        (candidate) => candidate.symbol === symbol && (lookup.orderId ? String(candidate.orderId) === lookup.orderId : candidate.clientOrderId === lookup.origClientOrderId),
      );
      if (!order || (order.status !== 'NEW' && order.status !== 'PARTIALLY_FILLED')) throw FAKE_BINANCE_REFUSALS.cancelUnknown();
      // Canceling one order of a list cancels the whole list.
      for (const sibling of siblingsOf(account, order)) end(account, sibling, 'CANCELED');
      end(account, order, 'CANCELED');
      return order;
    },
    openOrders: (apiKey: string, symbol?: string) => accountOf(apiKey).orders.filter((order) => (order.status === 'NEW' || order.status === 'PARTIALLY_FILLED') && (!symbol || order.symbol === symbol)),
    trades: (apiKey: string, symbol: string, startTime?: number) => accountOf(apiKey).trades.filter((trade) => trade.symbol === symbol && (startTime === undefined || trade.time >= startTime)),
    orders: (apiKey: string) => [...accountOf(apiKey).orders],
    /** Fills `qty` of a resting order at its limit price (a partial fill when less than what is left). */
    fillPart: (apiKey: string, orderId: number, qty: string) => {
      const account = accountOf(apiKey);
      const order = account.orders.find((candidate) => candidate.orderId === orderId && (candidate.status === 'NEW' || candidate.status === 'PARTIALLY_FILLED'));
      if (!order) throw FAKE_BINANCE_REFUSALS.unknownOrder();
      const left = d(order.origQty).minus(order.executedQty);
      return fill(account, order, d(order.price), true, d(qty).lt(left) ? d(qty) : left);
    },
    /** Told of every price set (binance-market-ws.ts sends each as a trade). */
    onPriceSet: (listener: (set: FakeBinancePriceSet) => void) => listen(priceListeners, listener),
    /** Told of every order change of every account (binance-ws.ts sends them as executionReports). */
    onOrderChange: (listener: (change: FakeBinanceOrderChange) => void) => listen(listeners, listener),
  };
};

export type FakeBinanceBooks = ReturnType<typeof createFakeBinanceBooks>;
