// The ccxt adapter's pure parts: amounts as exact decimal text, our broker order id, the order
// request put on the market's steps (quantities down, a limit toward the safe side), statuses,
// fills from an order's trades (cumulative quantities), ccxt's errors as refusals or
// unavailability with the secret taken out, and our client order ids as an exchange takes them.
import { describe, expect, it } from 'vitest';
import { ZClientOrderId } from '../../contracts/orders.ts';
import { clientOrderIdRuleOf, createMemoryClientIdStore, DEFAULT_CLIENT_ORDER_ID_RULE, isDigestClientOrderId, toExchangeClientOrderId } from '../../server/brokers/ccxt/client-ids.ts';
import { brokerErrorOf, ccxtBrokerOrderId, decimalText, fromCcxtOrder, nativeStopsOfMarket, OCO_SIBLING_ENDED, orderListIdOf, parseCcxtBrokerOrderId, statusFromCcxt, toCcxtOrder, type CcxtMarketView, type CcxtOrderView } from '../../server/brokers/ccxt/mapping.ts';
import { createPlacedOrders, eventOf, fillEvents, pollCcxtEvents, type PolledTrade } from '../../server/brokers/ccxt/poller.ts';
import { ExactDecimal } from '../../server/decimal.ts';
import { BrokerRejectedError, BrokerUnavailableError, type BrokerOrder, type BrokerOrderRequest } from '../../server/brokers/types.ts';

const BTC: CcxtMarketView = { id: 'BTCUSDT', symbol: 'BTC/USDT', base: 'BTC', quote: 'USDT', precision: { amount: 0.00001, price: 0.01 } };
const key = { userId: 7, mode: 'paper' as const, exchangeId: 'binance' };
const request = (over: Partial<BrokerOrderRequest>): BrokerOrderRequest => ({ clientOrderId: 'c-1', symbol: 'BTC/USDT', side: 'buy', qty: '0.001', orderType: 'market', timeInForce: 'day', ...over });

describe('ccxt amounts and ids', () => {
  it('writes ccxt numbers as their shortest decimal text, never in exponent form', () => {
    expect(decimalText(0.1 + 0.2)).toBe('0.30000000000000004');
    expect(decimalText(1e-7)).toBe('0.0000001');
    expect(decimalText(undefined)).toBe('0');
    expect(decimalText(Number.NaN)).toBe('0');
  });

  it('joins and splits the broker order id (market id ~ exchange id), refusing a malformed one', () => {
    expect(ccxtBrokerOrderId('BTCUSDT', '123')).toBe('BTCUSDT~123');
    expect(parseCcxtBrokerOrderId('BTCUSDT~123')).toEqual({ marketId: 'BTCUSDT', orderId: '123' });
    for (const bad of ['123', '~123', 'BTCUSDT~']) expect(parseCcxtBrokerOrderId(bad)).toBeUndefined();
  });
});

describe('the order request on the market steps', () => {
  it('rounds a quantity down to the amount step and refuses one below it', () => {
    expect(toCcxtOrder(request({ qty: '0.0012345' }), BTC, true).amount).toBe('0.00123');
    expect(() => toCcxtOrder(request({ qty: '0.000001' }), BTC, true)).toThrow(BrokerRejectedError);
  });

  it('puts a limit on the tick toward the safe side: a buy down, a sell up; day is GTC', () => {
    const buy = toCcxtOrder(request({ orderType: 'limit', limitPrice: '50000.005' }), BTC, true);
    expect(buy).toMatchObject({ type: 'limit', price: '50000', params: { clientOrderId: 'c-1', timeInForce: 'GTC' } });
    expect(toCcxtOrder(request({ side: 'sell', orderType: 'limit', limitPrice: '50000.001' }), BTC, true).price).toBe('50000.01');
  });

  it('sends a stop as a trigger price (a limit order when the stop_limit price is kept), and refuses a bracket', () => {
    expect(toCcxtOrder(request({ orderType: 'stop', stopPrice: '49000' }), BTC, true)).toMatchObject({ type: 'market', triggerPrice: '49000', params: { triggerPrice: '49000' } });
    expect(toCcxtOrder(request({ orderType: 'stop', stopPrice: '49000', metadata: { stop_limit_price: '48990' } }), BTC, true)).toMatchObject({ type: 'limit', price: '48990' });
    expect(() => toCcxtOrder(request({ bracket: { takeProfit: '60000', stopLoss: '40000', stopLossLimit: null } }), BTC, true)).toThrow(/bracket/);
  });

  it('reads ccxt statuses with the filled quantity', () => {
    const d = (text: string) => new ExactDecimal(text);
    expect(statusFromCcxt('closed', d('1'), d('1'))).toBe('filled');
    expect(statusFromCcxt('closed', d('0'), d('1'))).toBe('canceled');
    expect(statusFromCcxt('open', d('0.5'), d('1'))).toBe('partially_filled');
    expect(statusFromCcxt('open', d('0'), d('1'))).toBe('open');
    expect(statusFromCcxt('expired', d('0'), d('1'))).toBe('expired');
  });

  describe('a leg of an order list that the exchange expired (Binance ends an OCO’s other leg so when one trades)', () => {
    const expiredLeg = (info: Record<string, unknown>): CcxtOrderView => ({ id: '41', clientOrderId: 'oco-1:sl', symbol: 'BTC/USDT', type: 'stop_loss', side: 'sell', status: 'expired', amount: 0.01, filled: 0, triggerPrice: 48000, info });

    it('reads canceled with the reason, by REST (orderListId) and on the user stream (g)', () => {
      for (const info of [{ orderListId: 3 }, { g: 3 }, { orderListId: '0' }]) {
        const order = fromCcxtOrder(expiredLeg(info), BTC, key);
        expect(order, JSON.stringify(info)).toMatchObject({ status: 'canceled', endReason: OCO_SIBLING_ENDED });
        // The end's event carries the reason (the order's metadata.cancel_reason comes from it).
        expect(eventOf(order, key, 'canceled', 0)).toMatchObject({ type: 'canceled', status: 'canceled', reason: OCO_SIBLING_ENDED });
      }
    });

    it('an order in no list stays expired (an IOC that did not cross), without a reason, and a list’s leg that filled stays filled', () => {
      for (const info of [{ orderListId: -1 }, { g: -1 }, {}]) {
        const order = fromCcxtOrder(expiredLeg(info), BTC, key);
        expect(order.status, JSON.stringify(info)).toBe('expired');
        expect(order.endReason).toBeUndefined();
        expect(eventOf(order, key, 'expired', 0).reason).toBeNull();
      }
      expect(fromCcxtOrder({ ...expiredLeg({ g: 3 }), status: 'closed', filled: 0.01 }, BTC, key)).toMatchObject({ status: 'filled' });
      expect(orderListIdOf({ info: { orderListId: 'x' } })).toBeUndefined();
    });
  });
});

describe('which stops a market holds (the rest the order emulator holds)', () => {
  it('reads the market’s own order types where the exchange lists them, else what ccxt says the exchange creates', () => {
    expect(nativeStopsOfMarket({ orderTypes: ['LIMIT', 'LIMIT_MAKER', 'MARKET'] }, { createStopMarketOrder: true, createStopLimitOrder: true })).toEqual({ stop: false, stopLimit: false });
    expect(nativeStopsOfMarket({ orderTypes: ['LIMIT', 'MARKET', 'STOP_LOSS_LIMIT'] }, {})).toEqual({ stop: false, stopLimit: true });
    expect(nativeStopsOfMarket({ orderTypes: ['MARKET', 'STOP_LOSS', 'STOP_LOSS_LIMIT'] }, {})).toEqual({ stop: true, stopLimit: true });
    expect(nativeStopsOfMarket({}, { createStopMarketOrder: true, createStopLimitOrder: 'emulated' })).toEqual({ stop: true, stopLimit: false });
    expect(nativeStopsOfMarket(undefined, {})).toEqual({ stop: false, stopLimit: false });
  });
});

describe('fills from trades', () => {
  const order = (filledQty: string, status: BrokerOrder['status']): BrokerOrder => ({
    brokerOrderId: 'BTCUSDT~9',
    clientOrderId: 'c-9',
    assetClass: 'crypto',
    mode: 'paper',
    symbol: 'BTC/USDT',
    side: 'buy',
    orderType: 'limit',
    timeInForce: 'gtc',
    qty: '0.3',
    filledQty,
    avgFillPrice: '50000',
    limitPrice: '50000',
    stopPrice: null,
    status,
    parentId: null,
    metadata: {},
    submittedAt: new Date(0),
    updatedAt: new Date(0),
  });
  const trade = (id: string, qty: string, at: number): PolledTrade => ({ id, orderId: '9', symbol: 'BTC/USDT', qty, price: '50000', fee: '0.05', at });

  it('gives each trade its cumulative quantity, the last one the fill that ends the order', () => {
    const events = fillEvents(order('0.3', 'filled'), [trade('b', '0.2', 2), trade('a', '0.1', 1)], key);
    expect(events.map((event) => [event.type, event.filled_qty, event.fill?.execution_id])).toEqual([
      ['partial_fill', '0.1', 'binance:BTC/USDT:a'],
      ['fill', '0.3', 'binance:BTC/USDT:b'],
    ]);
  });

  it('keeps an order still working a partial fill', () => {
    expect(fillEvents(order('0.1', 'partially_filled'), [trade('a', '0.1', 1)], key).map((event) => event.type)).toEqual(['partial_fill']);
  });

  it('reads again the trades of an order not known as ours yet, though a newer trade of another order came in the same reading', async () => {
    const trades = [
      { ...trade('t1', '0.3', 1_000), orderId: 'A' },
      { ...trade('t2', '0.3', 2_000), orderId: 'B' },
    ];
    let readings = 0;
    const controller = new AbortController();
    const events = [];
    for await (const event of pollCcxtEvents(
      {
        key,
        intervalMs: 1,
        watched: new Set(['BTC/USDT']),
        heldSymbols: () => Promise.resolve([]),
        openOrders: () => Promise.resolve([]),
        trades: (_symbol, since) => Promise.resolve(trades.filter((candidate) => candidate.at >= since)),
        // Order A is known from the second reading on (its row recorded meanwhile).
        order: (_symbol, orderId) => Promise.resolve(orderId === 'A' && readings === 0 ? undefined : { ...order('0.3', 'filled'), brokerOrderId: `BTCUSDT~${orderId}`, clientOrderId: `c-${orderId}` }),
        replayMs: 3_600_000,
        now: () => 2_500,
        onPoll: () => {
          readings += 1;
          if (readings === 2) controller.abort();
        },
      },
      controller.signal,
    )) events.push(event);
    expect(events.map((event) => [event.client_order_id, event.fill?.execution_id])).toEqual([
      ['c-B', 'binance:BTC/USDT:t2'],
      ['c-A', 'binance:BTC/USDT:t1'],
    ]);
  });

  it('follows an order placed since the last reading as if seen open: one the exchange ended before any reading saw it gives its end once', async () => {
    const placed = createPlacedOrders();
    const working = { ...order('0', 'accepted'), brokerOrderId: 'BTCUSDT~L', clientOrderId: 'c-L', metadata: { exchange_order_id: 'L' } };
    placed.add(working);
    const controller = new AbortController();
    const events = [];
    let readings = 0;
    for await (const event of pollCcxtEvents(
      {
        key,
        intervalMs: 1,
        watched: new Set(),
        placed,
        heldSymbols: () => Promise.resolve([]),
        // Never seen open: an OCO's limit leg that the other's fill expired at once.
        openOrders: () => Promise.resolve([]),
        trades: () => Promise.resolve([]),
        order: (_symbol, orderId) => Promise.resolve(orderId === 'L' ? { ...working, status: 'expired' as const } : undefined),
        replayMs: 3_600_000,
        now: () => 2_500,
        onPoll: () => {
          readings += 1;
          if (readings === 3) controller.abort();
        },
      },
      controller.signal,
    )) events.push(event);
    expect(events.map((event) => [event.type, event.client_order_id])).toEqual([['expired', 'c-L']]);
    expect(placed.take()).toEqual([]);
  });
});

describe('ccxt errors', () => {
  class BaseError extends Error {}
  class ExchangeError extends BaseError {}
  class NetworkError extends BaseError {}
  class NotSupported extends ExchangeError {}
  const classes = { BaseError, ExchangeError, NetworkError, NotSupported };
  const scrub = (text: string) => text.split('s3cr3t').join('[redacted]');

  it("is a refusal when the exchange answered, unavailable when it could not be reached; the secret never shows", () => {
    const refused = brokerErrorOf(new ExchangeError('binance {"code":-2010,"msg":"Account has insufficient balance"} key s3cr3t'), classes, scrub, 'place the order');
    expect(refused).toBeInstanceOf(BrokerRejectedError);
    expect(refused.message).toContain('insufficient balance');
    expect(refused.message).not.toContain('s3cr3t');
    expect(brokerErrorOf(new NetworkError('timed out'), classes, scrub, 'read the account')).toBeInstanceOf(BrokerUnavailableError);
    expect(brokerErrorOf(new TypeError('socket hang up'), classes, scrub, 'read the account')).toBeInstanceOf(BrokerUnavailableError);
  });
});

describe('client order ids as the exchange takes them', () => {
  const binance = clientOrderIdRuleOf('binance');
  const BINANCE_RULE = /^[.A-Z:/a-z0-9_-]{1,36}$/;
  const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-';
  /** Deterministic ids of ours of every length 1..64 over the whole alphabet of the contract. */
  const ours = Array.from({ length: 64 * 8 }, (_, index) => {
    const length = (index % 64) + 1;
    return Array.from({ length }, (__, at) => ALPHABET[(index * 7 + at * 13) % ALPHABET.length]).join('');
  });

  it('takes Binance’s documented rule (36 characters), and a conservative one for an exchange it does not know', () => {
    expect(binance.maxLength).toBe(36);
    expect(clientOrderIdRuleOf('binanceus')).toEqual(binance);
    expect(clientOrderIdRuleOf('someexchange')).toBe(DEFAULT_CLIENT_ORDER_ID_RULE);
  });

  it('sends an id that fits unchanged', () => {
    for (const id of ['c-1', 'a.b:c_d-e', 'x'.repeat(36), '0f8fad5bd9cb469fa16570867728950e']) expect(toExchangeClientOrderId(id, binance)).toBe(id);
    expect(toExchangeClientOrderId('abcDEF123', DEFAULT_CLIENT_ORDER_ID_RULE)).toBe('abcDEF123');
  });

  it('sends an id of 37 to 64 characters as a digest form of at most 36 that Binance takes, the same every time', () => {
    for (const length of [37, 40, 63, 64]) {
      const id = 'q'.repeat(length);
      const sent = toExchangeClientOrderId(id, binance);
      expect(sent.length).toBeLessThanOrEqual(36);
      expect(sent).toMatch(BINANCE_RULE);
      expect(sent).not.toBe(id);
      expect(toExchangeClientOrderId(id, binance)).toBe(sent);
      expect(isDigestClientOrderId(sent, binance)).toBe(true);
    }
  });

  it('gives distinct ids distinct exchange ids, and never sends a digest form that equals an id sent unchanged', () => {
    for (const rule of [binance, DEFAULT_CLIENT_ORDER_ID_RULE]) {
      const sent = ours.map((id) => toExchangeClientOrderId(id, rule));
      expect(new Set(sent).size).toBe(new Set(ours).size);
      for (const [index, id] of sent.entries()) {
        expect(id.length).toBeLessThanOrEqual(rule.maxLength);
        expect(rule.characters.test(id)).toBe(true);
        // Unchanged ids are never in digest form, so no digest form can equal one.
        expect(isDigestClientOrderId(id, rule)).toBe(id !== ours[index]);
      }
    }
    // On Binance a digest form has a character our ids never have.
    const digest = toExchangeClientOrderId('z'.repeat(64), binance);
    expect(ZClientOrderId.safeParse(digest).success).toBe(false);
  });

  it('sends an id of ours shaped like a digest form as its own digest form, where the exchange takes only letters and digits', () => {
    const digest = toExchangeClientOrderId('y'.repeat(40), DEFAULT_CLIENT_ORDER_ID_RULE);
    expect(digest).toMatch(/^[A-Za-z0-9]{32}$/);
    // Someone uses that digest form as a client order id of ours: it is not sent as it is.
    const again = toExchangeClientOrderId(digest, DEFAULT_CLIENT_ORDER_ID_RULE);
    expect(again).not.toBe(digest);
    expect(isDigestClientOrderId(again, DEFAULT_CLIENT_ORDER_ID_RULE)).toBe(true);
    // And an id with characters the exchange refuses is sent as a digest form too.
    expect(isDigestClientOrderId(toExchangeClientOrderId('a-b', DEFAULT_CLIENT_ORDER_ID_RULE), DEFAULT_CLIENT_ORDER_ID_RULE)).toBe(true);
  });

  it('remembers the last placements in memory, the oldest going first', async () => {
    const store = createMemoryClientIdStore(2);
    store.put('h/a', 'one');
    store.put('h/b', 'two');
    store.put('h/c', 'three');
    expect(await store.find('h/a', 'X~1')).toBeUndefined();
    expect(await store.find('h/c', 'X~3')).toBe('three');
  });

  it('puts the exchange id in the order request', () => {
    const id = 'w'.repeat(64);
    expect(toCcxtOrder(request({ clientOrderId: id }), BTC, true, toExchangeClientOrderId(id, binance)).params.clientOrderId).toMatch(BINANCE_RULE);
  });
});
