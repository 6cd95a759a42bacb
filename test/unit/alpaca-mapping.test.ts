// The Alpaca adapter's pure parts: every order status and trade event mapped to ours, the order
// request as Alpaca's wire wants it, trade updates as our events, and the limiter's bucket.
import { describe, expect, it } from 'vitest';
import { ZBrokerEvent } from '../../contracts/brokers.ts';
import { createTokenBucket } from '../../server/brokers/alpaca/limiter.ts';
import { ALPACA_EVENT_MAP, eventFromTradeUpdate, flattenAlpacaOrder, fromAlpacaOrder, fromAlpacaPosition, ourClientOrderId, replacementClientOrderId, statusFromAlpaca, toAlpacaOrderRequest, toAlpacaReplaceRequest } from '../../server/brokers/alpaca/mapping.ts';
import { newAlpacaOrder } from '../../server/fakes/alpaca-books.ts';
import { ALPACA_ORDER_STATUSES, ALPACA_TRADE_EVENTS, type AlpacaOrder, type AlpacaPosition, type TAlpacaOrderStatus } from '../../server/brokers/alpaca/wire.ts';

const key = { userId: 7, mode: 'paper' as const };

const alpacaOrder = (fields: Partial<AlpacaOrder> = {}): AlpacaOrder =>
  newAlpacaOrder({
    id: 'ord-1',
    client_order_id: 'cli-1',
    created_at: '2026-03-09T14:30:00Z',
    updated_at: '2026-03-09T14:30:01Z',
    submitted_at: '2026-03-09T14:30:00.5Z',
    symbol: 'AAPL',
    qty: '10',
    type: 'limit',
    side: 'buy',
    time_in_force: 'gtc',
    limit_price: '187.25',
    status: 'new',
    ...fields,
  });

describe('statusFromAlpaca', () => {
  // [Alpaca status, ours with nothing filled, ours with part filled]
  const table: Array<[TAlpacaOrderStatus, string, string]> = [
    ['new', 'open', 'partially_filled'],
    ['accepted', 'accepted', 'accepted'],
    ['pending_new', 'accepted', 'accepted'],
    ['accepted_for_bidding', 'accepted', 'accepted'],
    ['held', 'accepted', 'accepted'],
    ['partially_filled', 'partially_filled', 'partially_filled'],
    ['filled', 'filled', 'filled'],
    ['done_for_day', 'open', 'partially_filled'],
    ['pending_cancel', 'open', 'partially_filled'],
    ['pending_replace', 'open', 'partially_filled'],
    ['stopped', 'open', 'partially_filled'],
    ['suspended', 'open', 'partially_filled'],
    ['calculated', 'open', 'partially_filled'],
    ['canceled', 'canceled', 'canceled'],
    ['replaced', 'canceled', 'canceled'],
    ['expired', 'expired', 'expired'],
    ['rejected', 'rejected', 'rejected'],
  ];

  it('covers every status Alpaca documents', () => {
    expect(table.map(([status]) => status).sort()).toEqual([...ALPACA_ORDER_STATUSES].sort());
  });

  it.each(table)('%s is %s, or %s once something filled', (status, unfilled, partly) => {
    expect(statusFromAlpaca(status, '0')).toBe(unfilled);
    expect(statusFromAlpaca(status, '0.000000001')).toBe(partly);
  });
});

describe('the trade event map', () => {
  it('names a type or null for every event Alpaca documents', () => {
    expect(Object.keys(ALPACA_EVENT_MAP).sort()).toEqual([...ALPACA_TRADE_EVENTS].sort());
    expect(ALPACA_EVENT_MAP).toMatchObject({ new: 'open', accepted: 'accepted', pending_new: 'accepted', fill: 'fill', partial_fill: 'partial_fill', canceled: 'canceled', expired: 'expired', rejected: 'rejected', replaced: 'replaced', pending_cancel: null, done_for_day: null });
  });
});

describe('toAlpacaOrderRequest', () => {
  const base = { clientOrderId: 'cli-9', symbol: 'AAPL', side: 'buy' as const, qty: '0.5', orderType: 'market' as const, timeInForce: 'day' as const };

  it('sends a market order with its qty as a string and no prices', () => {
    expect(toAlpacaOrderRequest(base)).toEqual({ symbol: 'AAPL', qty: '0.5', side: 'buy', type: 'market', time_in_force: 'day', client_order_id: 'cli-9' });
  });

  it.each(['day', 'gtc', 'ioc', 'fok'] as const)('keeps the time in force %s as Alpaca names it', (timeInForce) => {
    expect(toAlpacaOrderRequest({ ...base, timeInForce }).time_in_force).toBe(timeInForce);
  });

  it('sends limit and stop prices as given', () => {
    expect(toAlpacaOrderRequest({ ...base, orderType: 'limit', limitPrice: '187.25' })).toMatchObject({ type: 'limit', limit_price: '187.25' });
    expect(toAlpacaOrderRequest({ ...base, orderType: 'stop', stopPrice: '180.10', limitPrice: null })).toEqual({ ...toAlpacaOrderRequest(base), type: 'stop', stop_price: '180.10' });
  });

  it('sends a bracket as order_class bracket with its take profit and stop loss, the stop limit only when given', () => {
    const bracket = toAlpacaOrderRequest({ ...base, orderType: 'limit', limitPrice: '100', timeInForce: 'gtc', bracket: { takeProfit: '110', stopLoss: '95', stopLossLimit: null } });
    expect(bracket).toMatchObject({ order_class: 'bracket', take_profit: { limit_price: '110' }, stop_loss: { stop_price: '95' } });
    expect(bracket.stop_loss).not.toHaveProperty('limit_price');
    const withLimit = toAlpacaOrderRequest({ ...base, bracket: { takeProfit: '110', stopLoss: '95', stopLossLimit: '94.5' } });
    expect(withLimit.stop_loss).toEqual({ stop_price: '95', limit_price: '94.5' });
  });

  it('sends only the fields a replace changes', () => {
    expect(toAlpacaReplaceRequest({ brokerOrderId: 'x', qty: '3', limitPrice: null }, 'a1')).toEqual({ qty: '3' });
    expect(toAlpacaReplaceRequest({ brokerOrderId: 'x', limitPrice: '101.5', stopPrice: '99' }, 'a1')).toEqual({ limit_price: '101.5', stop_price: '99' });
  });

  it('gives a replacement a client order id of its own that still names ours, and sends a trailing stop’s new trail as `trail`', () => {
    expect(toAlpacaReplaceRequest({ brokerOrderId: 'x', clientOrderId: 'mine-1', qty: '2' }, 'b7')).toEqual({ client_order_id: 'mine-1~rb7', qty: '2' });
    // A replacement of a replacement: one tag, not two.
    expect(replacementClientOrderId('mine-1~rb7', 'c9')).toBe('mine-1~rc9');
    expect(ourClientOrderId('mine-1~rc9')).toBe('mine-1');
    expect(ourClientOrderId('mine-1')).toBe('mine-1');
    expect(toAlpacaReplaceRequest({ brokerOrderId: 'x', stopPrice: '196', trail: { price: '4' } }, 'a1')).toEqual({ trail: '4' });
    expect(toAlpacaReplaceRequest({ brokerOrderId: 'x', trail: { percent: '2.5' } }, 'a1')).toEqual({ trail: '2.5' });
  });

  it('sends a stop with a kept limit as Alpaca’s stop_limit, a trailing stop with its trail, and an oto and an oco in Alpaca’s shapes', () => {
    expect(toAlpacaOrderRequest({ ...base, orderType: 'stop', stopPrice: '210', metadata: { stop_limit_price: '212' } })).toMatchObject({ type: 'stop_limit', stop_price: '210', limit_price: '212' });
    const trailing = toAlpacaOrderRequest({ ...base, side: 'sell', orderType: 'trailing_stop', metadata: { trail_percent: 5 } });
    expect(trailing).toMatchObject({ type: 'trailing_stop', trail_percent: '5' });
    expect(trailing).not.toHaveProperty('stop_price');
    expect(toAlpacaOrderRequest({ ...base, side: 'sell', orderType: 'trailing_stop', metadata: { trail_price: '1.5' } })).toMatchObject({ type: 'trailing_stop', trail_price: '1.5' });
    expect(() => toAlpacaOrderRequest({ ...base, orderType: 'trailing_stop', metadata: {} })).toThrow(/exactly one/);
    const oto = toAlpacaOrderRequest({ ...base, orderClass: 'oto', bracket: { takeProfit: '110', stopLoss: null, stopLossLimit: null } });
    expect(oto).toMatchObject({ order_class: 'oto', take_profit: { limit_price: '110' } });
    expect(oto).not.toHaveProperty('stop_loss');
    const oco = toAlpacaOrderRequest({ ...base, side: 'sell', orderType: 'limit', limitPrice: '110', orderClass: 'oco', bracket: { takeProfit: null, stopLoss: '95', stopLossLimit: '94' } });
    expect(oco).toEqual(expect.objectContaining({ order_class: 'oco', type: 'limit', take_profit: { limit_price: '110' }, stop_loss: { stop_price: '95', limit_price: '94' } }));
    expect(oco).not.toHaveProperty('limit_price');
    expect(() => toAlpacaOrderRequest({ ...base, bracket: { takeProfit: '110', stopLoss: null, stopLossLimit: null, trail: { percent: '5' } } })).toThrow(/trailing stop leg/);
  });
});

describe('fromAlpacaOrder', () => {
  it('keeps decimal strings exactly and maps the order to our books', () => {
    const order = fromAlpacaOrder(alpacaOrder({ status: 'partially_filled', filled_qty: '3.000000001', filled_avg_price: '187.1234567891' }), key);
    expect(order).toMatchObject({
      brokerOrderId: 'ord-1',
      clientOrderId: 'cli-1',
      assetClass: 'us_equity',
      mode: 'paper',
      orderType: 'limit',
      timeInForce: 'gtc',
      qty: '10',
      filledQty: '3.000000001',
      avgFillPrice: '187.1234567891',
      limitPrice: '187.25',
      status: 'partially_filled',
      parentId: null,
    });
    expect(order.submittedAt.toISOString()).toBe('2026-03-09T14:30:00.500Z');
  });

  it('reads a stop_limit or trailing stop placed elsewhere as a stop, and opg/cls as day', () => {
    expect(fromAlpacaOrder(alpacaOrder({ type: 'stop_limit', stop_price: '180' }), key)).toMatchObject({ orderType: 'stop', metadata: { alpaca_type: 'stop_limit' } });
    expect(fromAlpacaOrder(alpacaOrder({ time_in_force: 'opg' }), key).timeInForce).toBe('day');
  });

  it('flattens a bracket: each leg points at its entry', () => {
    const legs = [alpacaOrder({ id: 'tp', side: 'sell', status: 'held' }), alpacaOrder({ id: 'sl', side: 'sell', type: 'stop', status: 'held' })];
    const flat = flattenAlpacaOrder(alpacaOrder({ order_class: 'bracket', legs }), key);
    expect(flat.map((order) => [order.brokerOrderId, order.parentId, order.status])).toEqual([
      ['ord-1', null, 'open'],
      ['tp', 'ord-1', 'accepted'],
      ['sl', 'ord-1', 'accepted'],
    ]);
    expect(flat[0]!.metadata).toMatchObject({ order_class: 'bracket' });
  });
});

describe('fromAlpacaPosition', () => {
  it('signs a short whatever the venue sent', () => {
    const position = { symbol: 'AAPL', qty: '5', side: 'short', avg_entry_price: '180.5', current_price: '181' } as AlpacaPosition;
    expect(fromAlpacaPosition(position)).toEqual({ symbol: 'AAPL', qty: '-5', avgEntryPrice: '180.5', currentPrice: '181', realizedPnl: '0', currency: 'USD' });
    expect(fromAlpacaPosition({ ...position, qty: '-5' }).qty).toBe('-5');
  });
});

describe('eventFromTradeUpdate', () => {
  it('makes a fill event with the execution, a zero fee and the order state', () => {
    const event = eventFromTradeUpdate(
      { event: 'fill', execution_id: 'exec-1', timestamp: '2026-03-09T14:31:00Z', price: '187.2', qty: '10', position_qty: '10', order: alpacaOrder({ status: 'filled', filled_qty: '10', filled_avg_price: '187.2' }) },
      key,
    );
    expect(ZBrokerEvent.parse(event)).toEqual({
      type: 'fill',
      user_id: 7,
      asset_class: 'us_equity',
      mode: 'paper',
      broker: 'alpaca',
      broker_order_id: 'ord-1',
      client_order_id: 'cli-1',
      symbol: 'AAPL',
      status: 'filled',
      filled_qty: '10',
      avg_fill_price: '187.2',
      fill: { execution_id: 'exec-1', qty: '10', price: '187.2', fee: '0' },
      reason: null,
      at: '2026-03-09T14:31:00.000Z',
    });
  });

  it('carries no fill on other events and drops the events ours have no type for', () => {
    expect(eventFromTradeUpdate({ event: 'new', execution_id: 'exec-2', order: alpacaOrder() }, key)).toMatchObject({ type: 'open', status: 'open', fill: null });
    expect(eventFromTradeUpdate({ event: 'pending_cancel', execution_id: 'exec-3', order: alpacaOrder({ status: 'pending_cancel' }) }, key)).toBeNull();
    // The old order of a replace: to us, the order works on as its successor, under our client order id.
    expect(eventFromTradeUpdate({ event: 'replaced', execution_id: 'exec-4', order: alpacaOrder({ status: 'replaced', replaced_by: 'successor-1', client_order_id: 'mine-1~ra1' }) }, key)).toMatchObject({
      type: 'replaced',
      status: 'open',
      broker_order_id: 'successor-1',
      client_order_id: 'mine-1',
    });
  });
});

describe('the token bucket', () => {
  it('lets a burst through, then one request per refill interval', () => {
    const bucket = createTokenBucket({ requestsPerMinute: 60, burst: 3 }, 0);
    expect([0, 0, 0].map((at) => bucket.tryTake(at))).toEqual([0, 0, 0]);
    expect(bucket.tryTake(0)).toBe(1_000);
    expect(bucket.tryTake(999)).toBe(1);
    expect(bucket.tryTake(1_000)).toBe(0);
    expect(bucket.tryTake(1_000)).toBe(1_000);
  });

  it('never holds more than its burst, however long it stood idle', () => {
    const bucket = createTokenBucket({ requestsPerMinute: 200 }, 0);
    const taken = Array.from({ length: 250 }, () => bucket.tryTake(3_600_000)).filter((wait) => wait === 0);
    expect(taken).toHaveLength(200);
  });

  it('a pause (a 429 Retry-After) empties it and refills nothing before the pause ends', () => {
    const bucket = createTokenBucket({ requestsPerMinute: 60, burst: 3 }, 0);
    expect(bucket.tryTake(0)).toBe(0);
    bucket.pause(5_000);
    // The two tokens left are gone; the first comes a refill interval after the pause.
    expect(bucket.tryTake(1_000)).toBe(5_000);
    expect(bucket.tryTake(5_999)).toBe(1);
    expect(bucket.tryTake(6_000)).toBe(0);
    // A shorter pause never cuts a longer one short.
    bucket.pause(10_000);
    bucket.pause(7_000);
    expect(bucket.tryTake(9_000)).toBe(2_000);
  });
});
