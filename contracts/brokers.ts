// Broker events as every adapter reports them (the simulator today, real brokers later): the
// order service persists them and the events service delivers them.
import { z } from 'zod';
import { ZAssetClass, ZTimestamp } from './common.ts';

export const ZTradingMode = z.enum(['paper', 'live']);
export type TTradingMode = z.infer<typeof ZTradingMode>;

export const ZBrokerOrderStatus = z.enum(['accepted', 'open', 'partially_filled', 'filled', 'canceled', 'rejected', 'expired']);
export type TBrokerOrderStatus = z.infer<typeof ZBrokerOrderStatus>;

/**
 * `replaced`: the owner changed a working order's qty, limit or stop, or the broker changed a
 * bracket leg's qty itself (it follows its entry's fills) or a trailing stop's stop (it follows
 * the price); its status is unchanged.
 */
export const ZBrokerEventType = z.enum(['accepted', 'open', 'partial_fill', 'fill', 'canceled', 'rejected', 'expired', 'replaced']);
export type TBrokerEventType = z.infer<typeof ZBrokerEventType>;

export const ZBrokerEvent = z.object({
  type: ZBrokerEventType,
  user_id: z.number().int(),
  asset_class: ZAssetClass,
  mode: ZTradingMode,
  broker: z.string(),
  broker_order_id: z.string(),
  client_order_id: z.string(),
  symbol: z.string(),
  status: ZBrokerOrderStatus,
  /** Decimal strings: exact, as the broker's books hold them. */
  filled_qty: z.string(),
  avg_fill_price: z.string().nullable(),
  /** The execution of a fill event; a duplicate delivery repeats its id. */
  /** `tax` is the part of `fee` that is a transaction tax (a KRX sell's); absent where the broker does not say. */
  fill: z.object({ execution_id: z.string(), qty: z.string(), price: z.string(), fee: z.string(), tax: z.string().optional() }).nullable(),
  reason: z.string().nullable(),
  /**
   * The order's whole quantity, on a `replaced` event the broker made itself (a bracket leg grown
   * with its entry's fill): the owner did not ask for it, so the new quantity is only known here.
   */
  qty: z.string().optional(),
  /**
   * A trailing stop's new stop, on a `replaced` event the broker made itself as the stop followed
   * the price (a sell's new high, a buy's new low): decimal text, as its order's stop_price.
   */
  stop_price: z.string().optional(),
  /** With `stop_price`: the mark it was set from (the order's metadata.hwm), the highest price seen for a sell, the lowest for a buy. */
  hwm: z.string().optional(),
  at: ZTimestamp,
});
export type TBrokerEvent = z.infer<typeof ZBrokerEvent>;
