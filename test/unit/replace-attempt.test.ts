// A replace as the gates judge it (server/orders/replace-attempt.ts): its new quantity checked as a
// placement's (the lot, and above what already filled), and the order it would become, with what
// is left to fill as its quantity and the replaced order's fields where the change leaves them out.
import { describe, expect, it } from 'vitest';
import type { OrderRow } from '../../server/db/schema/index.ts';
import { AppError } from '../../server/errors.ts';
import { replaceAttemptOf, replacedQtyOf } from '../../server/orders/replace-attempt.ts';
import { btcUsdtRow } from '../support/instrument-rows.ts';

const at = new Date('2026-03-10T15:00:00Z');
const instrument = btcUsdtRow(at);
/** A limit buy of 0.005 at 45,000 with 0.002 filled, under a bracket. */
const row: OrderRow = {
  userId: 7,
  clientOrderId: 'c1',
  brokerOrderId: 'sim_1',
  assetClass: 'crypto',
  live: false,
  broker: 'simulator',
  symbol: 'BTC/USDT',
  side: 'buy',
  orderType: 'limit',
  timeInForce: 'gtc',
  qty: '0.005',
  filledQty: '0.002',
  avgFillPrice: '45000',
  limitPrice: '45000',
  stopPrice: null,
  status: 'partially_filled',
  bracket: { take_profit: 60000, stop_loss: 40000, stop_loss_limit: null },
  metadata: {},
  requestHash: null,
  reason: null,
  submittedAt: at,
  updatedAt: at,
};
const change = (fields: { qty?: number; limit_price?: number; stop_price?: number }) => ({ broker_order_id: 'sim_1', asset_class: 'crypto' as const, ...fields });
const refusal = (call: () => unknown) => {
  try {
    call();
  } catch (error) {
    return error instanceof AppError ? [error.code, error.message] : error;
  }
  return undefined;
};

describe('replacedQtyOf', () => {
  it('keeps the qty when the change leaves it out, and takes a new one on the lot above what filled', () => {
    expect(replacedQtyOf(row, change({ limit_price: 44000 }), instrument)).toBeUndefined();
    expect(replacedQtyOf(row, change({ qty: 0.003 }), instrument)).toBe('0.003');
  });

  it('refuses a qty off the lot, or not above what already filled, as VALIDATION_ERROR', () => {
    expect(refusal(() => replacedQtyOf(row, change({ qty: 0.0035 }), instrument))).toEqual(['VALIDATION_ERROR', expect.stringContaining('lot size')]);
    expect(refusal(() => replacedQtyOf(row, change({ qty: 0.002 }), instrument))).toEqual(['VALIDATION_ERROR', 'qty: must stay above the 0.002 already filled']);
  });
});

describe('replaceAttemptOf', () => {
  const preflight = { liveEnabled: false, lockedUntil: null };

  it('judges what is left to fill, at the new prices or the order’s own, as a replace of that order', () => {
    const attempt = replaceAttemptOf(row, change({ qty: 0.004 }), { qty: '0.004', instrument, preflight });
    expect(attempt).toMatchObject({
      userId: 7,
      assetClass: 'crypto',
      mode: 'paper',
      side: 'buy',
      qty: '0.002',
      orderType: 'limit',
      limitPrice: '45000',
      stopPrice: null,
      bracket: { takeProfit: '60000', stopLoss: '40000' },
      lockedUntil: null,
      replacing: { brokerOrderId: 'sim_1' },
    });
    expect(replaceAttemptOf(row, change({ limit_price: 44000 }), { qty: undefined, instrument, preflight })).toMatchObject({ qty: '0.003', limitPrice: '44000' });
  });

  it("carries the bracket's stop-loss limit, so the risk gate holds it to the tick grid as on placement", () => {
    expect(replaceAttemptOf(row, change({ limit_price: 44000 }), { qty: undefined, instrument, preflight }).bracket).toEqual({ takeProfit: '60000', stopLoss: '40000', stopLossLimit: null });
    const stopLimited: OrderRow = { ...row, bracket: { take_profit: 60000, stop_loss: 40000, stop_loss_limit: 39999.5 } };
    expect(replaceAttemptOf(stopLimited, change({ limit_price: 44000 }), { qty: undefined, instrument, preflight }).bracket).toEqual({ takeProfit: '60000', stopLoss: '40000', stopLossLimit: '39999.5' });
  });
});
