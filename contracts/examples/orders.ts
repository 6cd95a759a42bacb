// Examples of /api/equity: orders, positions and the paper account (one crypto account: BTC/USDT).
import type { z } from 'zod';
import type { ZAccountQuery, ZCancelAllQuery, ZCancelAllResult, ZClosePositionPath, ZOrderList, ZOrderListQuery, ZOrderPath, ZOrderPreview, ZOrderResponse, ZPlaceOrderRequest, ZPositionList, ZReplaceOrderRequest, TOrderPreview, TOrderResponse } from '../orders.ts';
import type { ZAccountResetRequest, ZAccountResponse, TAccountResponse } from '../simulator.ts';
import { example, type OperationExample } from './types.ts';

const BROKER_ORDER_ID = 'sim_7c9e6679742540de944be07fc1f90ae7';

/** A limit buy of 0.05 BTC with a bracket, as the simulator accepted it. */
const ORDER: TOrderResponse = {
  order_id: 'dca-btc-2026-12-02-001',
  broker_order_id: BROKER_ORDER_ID,
  client_order_id: 'dca-btc-2026-12-02-001',
  asset_class: 'crypto',
  exchange: 'simulator',
  symbol: 'BTC/USDT',
  side: 'buy',
  qty: 0.05,
  filled_qty: 0,
  avg_fill_price: null,
  order_type: 'limit',
  time_in_force: 'gtc',
  limit_price: 91500,
  stop_price: null,
  status: 'accepted',
  currency: 'USDT',
  submitted_at: '2026-12-02T04:10:03.512Z',
  updated_at: '2026-12-02T04:10:03.540Z',
  bracket: { take_profit: 98000, stop_loss: 88000, stop_loss_limit: null },
  metadata: { live: false, source: 'api' },
};

/** The same order after it filled. */
const FILLED_ORDER: TOrderResponse = {
  ...ORDER,
  filled_qty: 0.05,
  avg_fill_price: 91480.5,
  status: 'filled',
  updated_at: '2026-12-02T04:12:47.118Z',
  metadata: { live: false, source: 'api', fees: { commission: 4.574025, tax: 0 } },
};

/** A market sell that closes the BTC/USDT position. */
const CLOSING_ORDER: TOrderResponse = {
  ...ORDER,
  order_id: '5f0c2a9b8e7d4c3b9a1f6e5d4c3b2a19',
  broker_order_id: 'sim_0b1c2d3e4f5a46b7889900aabbccddee',
  client_order_id: '5f0c2a9b8e7d4c3b9a1f6e5d4c3b2a19',
  side: 'sell',
  order_type: 'market',
  time_in_force: 'day',
  limit_price: null,
  bracket: null,
  submitted_at: '2026-12-02T05:01:10.020Z',
  updated_at: '2026-12-02T05:01:10.044Z',
};

/** The paper account holding the position. */
export const EXAMPLE_ACCOUNT: TAccountResponse = {
  asset_class: 'crypto',
  broker: 'simulator',
  paper: true,
  equity: 100412.37,
  buying_power: 95833.86,
  cash: 95833.86,
  currency: 'USDT',
  as_of: '2026-12-02T04:30:00.000Z',
  metadata: {
    day_start_equity: '100000.00',
    day_flows: '0',
    day_pnl: '412.37',
    day_pnl_pct: 0.0041237,
    day_pnl_alert_pct: -0.04,
    day_pnl_lock_pct: -0.05,
  },
};

export const EXAMPLE_POSITIONS: z.output<typeof ZPositionList> = {
  items: [
    {
      asset_class: 'crypto',
      exchange: 'simulator',
      symbol: 'BTC/USDT',
      qty: 0.05,
      avg_entry_price: 91480.5,
      current_price: 91650,
      unrealized_pnl: 8.475,
      unrealized_pnl_pct: 0.0018529,
      currency: 'USDT',
      side: 'LONG',
      metadata: { realized_pnl: 0, live: false },
    },
  ],
};

/** A market buy of 0.01 BTC at 50,000 USDT on a paper account with 10,000 USDT of buying power. */
export const EXAMPLE_ORDER_PREVIEW: TOrderPreview = {
  asset_class: 'crypto',
  symbol: 'BTC/USDT',
  side: 'buy',
  qty: 0.01,
  order_type: 'market',
  mode: 'paper',
  currency: 'USDT',
  last_price: 50000,
  reference_price: 50000,
  notional: 500,
  commission: 0.5,
  tax: 0,
  fee: 0.5,
  cash_effect: -500.5,
  buying_power_before: 10000,
  buying_power_after: 9499.5,
  fee_profile: 'crypto_default',
};

export const ORDER_EXAMPLES: Record<string, OperationExample> = {
  equityPlaceOrder: example<typeof ZPlaceOrderRequest, typeof ZOrderResponse>({
    input: {
      asset_class: 'crypto',
      symbol: 'BTC/USDT',
      side: 'buy',
      qty: 0.05,
      order_type: 'limit',
      limit_price: 91500,
      bracket: { take_profit: 98000, stop_loss: 88000 },
      client_order_id: 'dca-btc-2026-12-02-001',
      time_in_force: 'gtc',
      live_mode: false,
    },
    output: ORDER,
  }),
  equityPreviewOrder: example<typeof ZPlaceOrderRequest, typeof ZOrderPreview>({
    input: { asset_class: 'crypto', symbol: 'BTC/USDT', side: 'buy', qty: 0.01, order_type: 'market', time_in_force: 'gtc', live_mode: false },
    output: EXAMPLE_ORDER_PREVIEW,
  }),
  equityListOrders: example<typeof ZOrderListQuery, typeof ZOrderList>({
    input: { page: 1, size: 20, asset_class: 'crypto', status: 'filled', mode: 'paper' },
    output: { items: [FILLED_ORDER], total: 1, page: 1, size: 20 },
  }),
  equityCancelAllOrders: example<typeof ZCancelAllQuery, typeof ZCancelAllResult>({
    input: { asset_class: 'crypto', mode: 'paper' },
    output: { canceled: [BROKER_ORDER_ID], failed: [{ broker_order_id: 'sim_4d3c2b1a09f848e7a6b5c4d3e2f1a0b9', reason: 'order is already filled' }] },
  }),
  equityGetOrder: example<typeof ZOrderPath, typeof ZOrderResponse>({ input: { broker_order_id: BROKER_ORDER_ID, asset_class: 'crypto', symbol: 'BTC-USDT' }, output: ORDER }),
  equityCancelOrder: example<typeof ZOrderPath, z.ZodVoid>({ input: { broker_order_id: BROKER_ORDER_ID, asset_class: 'crypto', symbol: 'BTC-USDT' } }),
  equityReplaceOrder: example<typeof ZReplaceOrderRequest, typeof ZOrderResponse>({
    input: { broker_order_id: BROKER_ORDER_ID, asset_class: 'crypto', qty: 0.08, limit_price: 91200 },
    output: { ...ORDER, qty: 0.08, limit_price: 91200, updated_at: '2026-12-02T04:11:20.004Z' },
  }),
  equityClosePosition: example<typeof ZClosePositionPath, typeof ZOrderResponse>({ input: { symbol: 'BTC-USDT', asset_class: 'crypto', mode: 'paper' }, output: CLOSING_ORDER }),
  equityPositions: example<typeof ZAccountQuery, typeof ZPositionList>({ input: { asset_class: 'crypto', mode: 'paper' }, output: EXAMPLE_POSITIONS }),
  equityAccount: example<typeof ZAccountQuery, typeof ZAccountResponse>({ input: { asset_class: 'crypto', mode: 'paper' }, output: EXAMPLE_ACCOUNT }),
  equityResetAccount: example<typeof ZAccountResetRequest, typeof ZAccountResponse>({
    input: { asset_class: 'crypto' },
    output: { ...EXAMPLE_ACCOUNT, equity: 100000, buying_power: 100000, cash: 100000, as_of: '2026-12-02T04:35:00.000Z', metadata: { canceled_orders: 1 } },
  }),
};
