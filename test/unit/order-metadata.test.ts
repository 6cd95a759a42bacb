// What an order's metadata shows of its fills and its end: fees summed exactly, commission and tax
// apart; the broker's own cancels as codes, the user's own cancel without one.
import { describe, expect, it } from 'vitest';
import type { TBrokerEvent } from '../../contracts/brokers.ts';
import { OCO_SIBLING_ENDED } from '../../server/brokers/ccxt/mapping.ts';
import { cancelReasonOf, feesOfFill, metadataAfter } from '../../server/orders/order-metadata.ts';

const event = (over: Partial<TBrokerEvent>): TBrokerEvent => ({
  type: 'fill',
  user_id: 1,
  asset_class: 'kr_equity',
  mode: 'paper',
  broker: 'simulator',
  broker_order_id: 'b1',
  client_order_id: 'c1',
  symbol: '005930',
  status: 'filled',
  filled_qty: '1',
  avg_fill_price: '60000',
  fill: null,
  reason: null,
  at: '2026-03-10T01:00:00.000Z',
  ...over,
});

describe('fees', () => {
  it('splits a fill fee into tax (as the broker reports it) and commission, and sums fills exactly', () => {
    expect(feesOfFill({ execution_id: 'e', qty: '1', price: '60000', fee: '129', tax: '120' })).toEqual({ commission: 9, tax: 120 });
    expect(feesOfFill({ execution_id: 'e', qty: '1', price: '1', fee: '0.3' })).toEqual({ commission: 0.3, tax: 0 });
    const first = metadataAfter({ metadata: {} }, event({ fill: { execution_id: 'a', qty: '1', price: '1', fee: '0.1' } }), true)!;
    const second = metadataAfter({ metadata: first }, event({ fill: { execution_id: 'b', qty: '1', price: '1', fee: '0.2' } }), true)!;
    // 0.1 + 0.2 in binary floats is 0.30000000000000004.
    expect(second.fees).toEqual({ commission: 0.3, tax: 0 });
  });

  it('adds nothing for a fill that is not recorded (a duplicate delivery)', () => {
    expect(metadataAfter({ metadata: {} }, event({ fill: { execution_id: 'a', qty: '1', price: '1', fee: '0.1' } }), false)).toBeUndefined();
  });
});

describe('cancel_reason', () => {
  it.each([
    ['an expiry', { type: 'expired', reason: 'day order: the session closed' }, 'expired'],
    ['a fill the cash no longer covers', { type: 'canceled', reason: 'insufficient funds' }, 'insufficient_funds'],
    ['a sell the position no longer covers', { type: 'canceled', reason: 'insufficient position' }, 'insufficient_position'],
    ['an unfilled ioc', { type: 'canceled', reason: 'ioc: unfilled rest canceled' }, 'ioc_unfilled'],
    ['an unfilled fok', { type: 'canceled', reason: 'fok: could not fill in full at once' }, 'fok_unfilled'],
    ['a paper reset', { type: 'canceled', reason: 'account reset' }, 'account_reset'],
    ['the fill of its oco’s other leg (the simulator’s words)', { type: 'canceled', reason: 'oco: the other leg filled' }, 'oco_sibling'],
    ['the fill of its oco’s other leg (Binance’s expiry, as the ccxt adapter reads it)', { type: 'canceled', reason: OCO_SIBLING_ENDED }, 'oco_sibling'],
    ["a broker's unknown reason", { type: 'canceled', reason: 'risk desk' }, 'broker'],
  ] as const)('names %s', (_what, over, code) => {
    expect(cancelReasonOf({ metadata: {} }, event(over))).toBe(code);
  });

  it("names the service's own request, and nothing for the user's cancel or an event that ends nothing", () => {
    expect(cancelReasonOf({ metadata: { cancel_requested_by: 'kill_switch' } }, event({ type: 'canceled' }))).toBe('kill_switch');
    expect(cancelReasonOf({ metadata: {} }, event({ type: 'canceled' }))).toBeUndefined();
    expect(cancelReasonOf({ metadata: {} }, event({ type: 'rejected', reason: 'insufficient funds' }))).toBeUndefined();
  });

  it('keeps the first reason', () => {
    expect(metadataAfter({ metadata: { cancel_reason: 'expired' } }, event({ type: 'canceled', reason: 'account reset' }), false)).toBeUndefined();
  });
});
