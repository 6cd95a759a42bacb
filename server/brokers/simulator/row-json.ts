// The simulator's rows as its one-statement reads carry them: json built in SQL (numbers as
// text, so no decimal passes through a float) and mapped back to the rows the books use.
import type { TAssetClass } from '../../../contracts/common.ts';
import { fixedSql } from '../../db/fixed-sql.ts';
import type { AccountKey, SimAccountRow, SimOrderRow, SimPositionRow, SimPriceRow } from './queries.ts';

/** A json value as either driver hands it over (postgres.js under drizzle: text; PGlite: parsed). */
export const fromJson = <T>(value: unknown): T => (typeof value === 'string' ? (JSON.parse(value) as T) : (value as T));
export const dateOrNull = (value: string | null): Date | null => (value === null ? null : new Date(value));

export const ACCOUNT_JSON = fixedSql`json_build_object('currency', a.currency, 'cash', a.cash::text, 'initial_cash', a.initial_cash::text, 'created_at', a.created_at, 'reset_at', a.reset_at)`;
export const POSITION_JSON = fixedSql`json_build_object('symbol', p.symbol, 'qty', p.qty::text, 'avg_entry_price', p.avg_entry_price::text, 'realized_pnl', p.realized_pnl::text, 'updated_at', p.updated_at,
  'price', case when pr.symbol is null then null else json_build_object('admin_price', pr.admin_price::text, 'tick_price', pr.tick_price::text, 'updated_at', pr.updated_at) end)`;
/** One order row of alias `o`. */
export const ORDER_JSON = fixedSql`json_build_object(
          'id', o.id, 'client_order_id', o.client_order_id, 'symbol', o.symbol, 'side', o.side, 'order_type', o.order_type, 'time_in_force', o.time_in_force,
          'qty', o.qty::text, 'filled_qty', o.filled_qty::text, 'avg_fill_price', o.avg_fill_price::text, 'limit_price', o.limit_price::text, 'stop_price', o.stop_price::text,
          'status', o.status, 'bracket', o.bracket, 'parent_id', o.parent_id, 'oco_sibling_id', o.oco_sibling_id, 'metadata', o.metadata,
          'expires_at', o.expires_at, 'created_at', o.created_at, 'updated_at', o.updated_at)`;

export interface AccountJson {
  currency: string;
  cash: string;
  initial_cash: string;
  created_at: string;
  reset_at: string | null;
}
export interface PositionJson {
  symbol: string;
  qty: string;
  avg_entry_price: string;
  realized_pnl: string;
  updated_at: string;
}
export interface PriceJson {
  admin_price: string | null;
  tick_price: string | null;
  updated_at: string;
}
export interface OrderJson {
  id: string;
  client_order_id: string;
  symbol: string;
  side: SimOrderRow['side'];
  order_type: SimOrderRow['orderType'];
  time_in_force: SimOrderRow['timeInForce'];
  qty: string;
  filled_qty: string;
  avg_fill_price: string | null;
  limit_price: string | null;
  stop_price: string | null;
  status: SimOrderRow['status'];
  bracket: SimOrderRow['bracket'];
  parent_id: string | null;
  oco_sibling_id: string | null;
  metadata: Record<string, unknown>;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export const accountOfJson = (key: AccountKey, account: AccountJson): SimAccountRow => ({
  ...key,
  currency: account.currency,
  cash: account.cash,
  initialCash: account.initial_cash,
  createdAt: new Date(account.created_at),
  resetAt: dateOrNull(account.reset_at),
});
export const positionOfJson = (key: AccountKey, held: PositionJson): SimPositionRow => ({
  ...key,
  symbol: held.symbol,
  qty: held.qty,
  avgEntryPrice: held.avg_entry_price,
  realizedPnl: held.realized_pnl,
  updatedAt: new Date(held.updated_at),
});
export const priceOfJson = (assetClass: TAssetClass, symbol: string, price: PriceJson | null): SimPriceRow | null =>
  price && { assetClass, symbol, adminPrice: price.admin_price, tickPrice: price.tick_price, updatedAt: new Date(price.updated_at) };
export const orderOfJson = (key: AccountKey, order: OrderJson): SimOrderRow => ({
  ...key,
  id: order.id,
  clientOrderId: order.client_order_id,
  symbol: order.symbol,
  side: order.side,
  orderType: order.order_type,
  timeInForce: order.time_in_force,
  qty: order.qty,
  filledQty: order.filled_qty,
  avgFillPrice: order.avg_fill_price,
  limitPrice: order.limit_price,
  stopPrice: order.stop_price,
  status: order.status,
  bracket: order.bracket,
  parentId: order.parent_id,
  ocoSiblingId: order.oco_sibling_id,
  metadata: order.metadata,
  expiresAt: dateOrNull(order.expires_at),
  createdAt: new Date(order.created_at),
  updatedAt: new Date(order.updated_at),
});
