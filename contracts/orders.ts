// Wire shapes of /api/equity/orders, positions and account, and the order event the events area
// will carry to WebSocket clients.
import { z } from 'zod';
import { bodyBoolean, pageOf, requestText, storableText, ZAssetClass, ZPageQuery, ZTimestamp } from './common.ts';
import { ZTradingMode } from './brokers.ts';
import { ZSymbolInput } from './symbols.ts';

const positivePrice = () => z.number().finite().positive().max(1e15);

export const ZOrderSide = z.enum(['buy', 'sell']);
export const ZOrderType = z.enum(['market', 'limit', 'stop', 'stop_limit', 'trailing_stop']);
export type TOrderType = z.infer<typeof ZOrderType>;
/** A trailing stop's trail in percent of its mark (DESIGN §6 "Advanced orders"): 0 < p <= 50. */
export const MAX_TRAIL_PERCENT = 50;
export const ZTimeInForce = z.enum(['day', 'gtc', 'ioc', 'fok']);
/** Who placed an order, as its `metadata.source` shows. */
export const ZOrderSource = z.enum(['api', 'bot', 'webhook']);
export type TOrderSource = z.infer<typeof ZOrderSource>;
export const ZOrderStatus = z.enum(['pending', 'accepted', 'open', 'partially_filled', 'filled', 'canceled', 'rejected', 'expired']);
export type TOrderStatus = z.infer<typeof ZOrderStatus>;
/** The list filter, and the statuses each stands for. */
export const ZOrderStatusFilter = z.enum(['pending', 'open', 'filled', 'canceled', 'rejected']);
export const STATUSES_OF_FILTER: Record<z.infer<typeof ZOrderStatusFilter>, TOrderStatus[]> = {
  pending: ['pending'],
  open: ['accepted', 'open', 'partially_filled'],
  filled: ['filled'],
  canceled: ['canceled', 'expired'],
  rejected: ['rejected'],
};

/**
 * `bracket` (implied by a bracket): an entry with a take-profit and a stop leg; `oto`: an entry and
 * one exit leg; `oco`: two exits of a held position, a sell limit (the take-profit) and the
 * bracket's stop leg, one filling cancels the other (DESIGN §6 "Advanced orders").
 */
export const ZOrderClass = z.enum(['simple', 'bracket', 'oto', 'oco']);
export type TOrderClass = z.infer<typeof ZOrderClass>;

/**
 * The suffixes of a bracket's children: the child of the entry `x` is `x:tp` (take-profit) or
 * `x:sl` (stop-loss). An entry that fills again after its pair ended (a leg sold what it
 * protected) gets a new pair for the new units: its second is `x:tp.2` and `x:sl.2`, and so on.
 */
export const BRACKET_CHILD_SUFFIXES = { take_profit: ':tp', stop_loss: ':sl' } as const;
export const bracketChildClientOrderId = (entryClientOrderId: string, leg: keyof typeof BRACKET_CHILD_SUFFIXES, pair = 1) =>
  `${entryClientOrderId}${BRACKET_CHILD_SUFFIXES[leg]}${pair > 1 ? `.${pair}` : ''}`;
const CHILD_SUFFIX = /:(tp|sl)(\.\d+)?$/;

/**
 * The suffix of the market order an emulated order's trigger places at the broker: the child of
 * `x` is `x.tr` (server/orders/emulator/trail.ts). Reserved as the bracket children's are: the
 * child's broker events are taken as its parent's by this suffix, so an order of the caller named
 * so would be read as a trigger's child, or take a child's id.
 */
export const EMULATED_CHILD_SUFFIX = '.tr';

/**
 * Our client order id; an exchange that takes fewer characters is sent a digest form of it
 * (server/brokers/ccxt/client-ids.ts). The bracket children's suffixes are reserved: an order
 * named like a later bracket's child would take that child's id, and the bracket could never fill;
 * so is an emulated order's child's (EMULATED_CHILD_SUFFIX).
 */
export const ZClientOrderId = requestText()
  .trim()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9._:-]+$/, 'letters, digits and . _ : - only')
  .refine((id) => !CHILD_SUFFIX.test(id), `must not end in ${Object.values(BRACKET_CHILD_SUFFIXES).join(' or ')}, alone or with a pair number (:tp.2), the suffixes of a bracket's children`)
  .refine((id) => !id.endsWith(EMULATED_CHILD_SUFFIX), `must not end in ${EMULATED_CHILD_SUFFIX}, the suffix of the market order an emulated order's trigger places`);

/**
 * The price fields each order type takes (DESIGN §6 "Rules a real broker enforces"). A trailing
 * stop takes a trail instead of a stop: its stop is the broker's, moved with the price.
 */
const PRICES_OF_TYPE: Record<TOrderType, { limit: boolean; stop: boolean; trail: boolean }> = {
  market: { limit: false, stop: false, trail: false },
  limit: { limit: true, stop: false, trail: false },
  stop: { limit: false, stop: true, trail: false },
  stop_limit: { limit: true, stop: true, trail: false },
  trailing_stop: { limit: false, stop: false, trail: true },
};

export interface MisplacedField {
  path: 'limit_price' | 'stop_price' | 'trail_percent' | 'trail_price';
  message: string;
}

/** The price fields of a request or a replace: each may be left out. */
export interface PriceFields {
  limit_price?: number | undefined;
  stop_price?: number | undefined;
  trail_percent?: number | undefined;
  trail_price?: number | undefined;
}

/**
 * The price fields given that the order type does not take. A broker refuses them; ignoring them
 * would let a market order show a limit it never had. The place request and a replace (judged
 * against the order's own type) both ask this.
 */
export const misplacedPriceFields = (orderType: TOrderType, prices: PriceFields): MisplacedField[] => {
  const takes = PRICES_OF_TYPE[orderType];
  const misplaced: MisplacedField[] = [];
  const notTaken = (path: MisplacedField['path']) => misplaced.push({ path, message: `is not taken by ${orderType} orders` });
  if (prices.limit_price !== undefined && !takes.limit) notTaken('limit_price');
  if (prices.stop_price !== undefined && !takes.stop) notTaken('stop_price');
  if (prices.trail_percent !== undefined && !takes.trail) notTaken('trail_percent');
  if (prices.trail_price !== undefined && !takes.trail) notTaken('trail_price');
  if (takes.trail && prices.trail_percent !== undefined && prices.trail_price !== undefined) {
    misplaced.push({ path: 'trail_price', message: 'give one of trail_percent and trail_price, not both' });
  }
  return misplaced;
};

/** A trailing stop's trail: a percent of its mark, or a price distance. */
const trailFields = {
  trail_percent: z.number().finite().positive().max(MAX_TRAIL_PERCENT).optional(),
  trail_price: positivePrice().optional(),
};

/**
 * The exits an entry's fill places: a take-profit limit sell and a stop leg, which is a stop at
 * stop_loss (a stop-limit with stop_loss_limit) or a trailing stop by trail_percent or trail_price
 * from the entry's fill. A bracket has both legs, an oto one of them.
 */
export const ZBracketSpec = z.object({
  take_profit: positivePrice().optional(),
  stop_loss: positivePrice().optional(),
  stop_loss_limit: positivePrice().nullable().optional(),
  ...trailFields,
});
export type TBracketSpec = z.infer<typeof ZBracketSpec>;

interface BracketIssue {
  path: (keyof TBracketSpec)[];
  message: string;
}

/** What a bracket of the given class lacks or has too much of (the legs' prices are the broker's to judge against the entry). */
export const bracketIssues = (orderClass: Exclude<TOrderClass, 'simple'>, bracket: TBracketSpec): BracketIssue[] => {
  const issues: BracketIssue[] = [];
  const stopLegs = (['stop_loss', 'trail_percent', 'trail_price'] as const).filter((field) => bracket[field] !== undefined);
  const hasTakeProfit = bracket.take_profit !== undefined;
  if (stopLegs.length > 1) issues.push({ path: [stopLegs[1]!], message: 'the stop leg is one of stop_loss, trail_percent and trail_price' });
  if (bracket.stop_loss_limit != null && bracket.stop_loss === undefined) issues.push({ path: ['stop_loss_limit'], message: 'belongs to a stop_loss' });
  if (orderClass === 'bracket') {
    if (!hasTakeProfit) issues.push({ path: ['take_profit'], message: 'is required for a bracket' });
    if (stopLegs.length === 0) issues.push({ path: ['stop_loss'], message: 'is required for a bracket (or trail_percent or trail_price, a trailing stop leg)' });
  } else if (orderClass === 'oco') {
    if (hasTakeProfit) issues.push({ path: ['take_profit'], message: 'an oco’s take-profit is its limit_price' });
    if (stopLegs.length === 0) issues.push({ path: ['stop_loss'], message: 'is required for an oco (or trail_percent or trail_price, a trailing stop leg)' });
  } else if (hasTakeProfit === stopLegs.length > 0) {
    issues.push({ path: hasTakeProfit ? ['stop_loss'] : ['take_profit'], message: 'an oto takes one exit leg: take_profit, or a stop leg (stop_loss, trail_percent or trail_price)' });
  }
  return issues;
};

/** A request's order class: as given, else `bracket` when it carries a bracket, else `simple`. */
export const orderClassOf = (order: { order_class?: TOrderClass | undefined; bracket?: TBracketSpec | null | undefined }): TOrderClass =>
  order.order_class ?? (order.bracket ? 'bracket' : 'simple');

export const ZPlaceOrderRequest = z
  .object({
    asset_class: ZAssetClass,
    symbol: ZSymbolInput,
    side: ZOrderSide,
    qty: z.number().finite().positive().max(1e12),
    order_type: ZOrderType,
    limit_price: positivePrice().optional(),
    stop_price: positivePrice().optional(),
    ...trailFields,
    order_class: ZOrderClass.optional(),
    bracket: ZBracketSpec.nullable().optional(),
    client_order_id: ZClientOrderId.optional(),
    time_in_force: ZTimeInForce.default('day'),
    report_uuid: storableText(z.uuid()).optional(),
    live_mode: bodyBoolean().default(false),
  })
  .superRefine((order, ctx) => {
    const takes = PRICES_OF_TYPE[order.order_type];
    if (takes.limit && order.limit_price === undefined) ctx.addIssue({ code: 'custom', path: ['limit_price'], message: `is required for ${order.order_type} orders` });
    if (takes.stop && order.stop_price === undefined) ctx.addIssue({ code: 'custom', path: ['stop_price'], message: `is required for ${order.order_type} orders` });
    if (takes.trail && order.trail_percent === undefined && order.trail_price === undefined) {
      ctx.addIssue({ code: 'custom', path: ['trail_percent'], message: `trail_percent or trail_price is required for ${order.order_type} orders` });
    }
    for (const { path, message } of misplacedPriceFields(order.order_type, order)) ctx.addIssue({ code: 'custom', path: [path], message });
    // A trailing stop's legs would need a trigger of their own: a bracket is not taken with it.
    if (order.bracket && takes.trail) ctx.addIssue({ code: 'custom', path: ['bracket'], message: `is not taken by ${order.order_type} orders` });
    const orderClass = orderClassOf(order);
    if (orderClass === 'simple' && order.bracket) ctx.addIssue({ code: 'custom', path: ['bracket'], message: 'is not taken by a simple order' });
    if (orderClass !== 'simple' && !order.bracket) ctx.addIssue({ code: 'custom', path: ['bracket'], message: `is required for an ${orderClass} order` });
    if (orderClass !== 'simple' && order.bracket) {
      for (const { path, message } of bracketIssues(orderClass, order.bracket)) ctx.addIssue({ code: 'custom', path: ['bracket', ...path], message });
    }
    // A bracket (or an oto) protects a buy (no shorting): a sell's would open a short. An oco is the
    // sell limit of a held position with its stop leg.
    const orderClassGiven = orderClassOf(order);
    if (order.bracket && order.side === 'sell' && orderClassGiven !== 'oco') {
      ctx.addIssue({ code: 'custom', path: ['bracket'], message: 'is taken on buys only (its legs are the sells that protect the entry), or by an oco sell' });
    }
    if (orderClassGiven === 'oco' && (order.side !== 'sell' || order.order_type !== 'limit')) {
      ctx.addIssue({ code: 'custom', path: ['order_class'], message: 'an oco is a sell limit order (its limit_price the take-profit) with its stop leg in bracket' });
    }
  });
export type TPlaceOrderRequest = z.infer<typeof ZPlaceOrderRequest>;

/**
 * What placing an order would cost, answered without placing it (POST /api/equity/orders/preview,
 * the ticket's preview): the estimate at the reference price, the fee profile's commission and
 * tax, and the account's buying power before and after. Buying power is null for a live account:
 * a live broker's buying power (margin, unsettled cash, its own holds) is its own to state, in
 * GET /api/equity/account, and the estimate would only guess at it.
 */
export const ZOrderPreview = z.object({
  asset_class: ZAssetClass,
  symbol: z.string(),
  side: ZOrderSide,
  qty: z.number(),
  order_type: ZOrderType,
  mode: ZTradingMode,
  currency: z.string(),
  last_price: z.number(),
  reference_price: z.number(),
  notional: z.number(),
  commission: z.number(),
  tax: z.number(),
  fee: z.number(),
  cash_effect: z.number(),
  buying_power_before: z.number().nullable(),
  buying_power_after: z.number().nullable(),
  fee_profile: z.string(),
});
export type TOrderPreview = z.infer<typeof ZOrderPreview>;

export const ZOrderResponse = z.object({
  order_id: z.string(),
  broker_order_id: z.string(),
  client_order_id: z.string(),
  asset_class: ZAssetClass,
  exchange: z.string(),
  symbol: z.string(),
  side: ZOrderSide,
  qty: z.number(),
  filled_qty: z.number(),
  avg_fill_price: z.number().nullable(),
  order_type: ZOrderType,
  time_in_force: ZTimeInForce,
  limit_price: z.number().nullable(),
  stop_price: z.number().nullable(),
  status: ZOrderStatus,
  currency: z.string(),
  submitted_at: ZTimestamp,
  updated_at: ZTimestamp,
  bracket: z
    .object({
      take_profit: z.number().nullable(),
      stop_loss: z.number().nullable(),
      stop_loss_limit: z.number().nullable(),
      trail_percent: z.number().optional(),
      trail_price: z.number().optional(),
    })
    .nullable(),
  metadata: z.record(z.string(), z.unknown()),
});
export type TOrderResponse = z.infer<typeof ZOrderResponse>;

export const ZOrderPath = z.object({
  broker_order_id: requestText().min(1).max(128),
  asset_class: ZAssetClass,
  symbol: ZSymbolInput.optional(),
});

export const ZOrderListQuery = ZPageQuery.extend({
  asset_class: ZAssetClass,
  status: ZOrderStatusFilter.optional(),
  /** An extension: paper or live only; both when absent. */
  mode: ZTradingMode.optional(),
});
export type TOrderListQuery = z.infer<typeof ZOrderListQuery>;
export const ZOrderList = pageOf(ZOrderResponse);
export type TOrderList = z.infer<typeof ZOrderList>;

/** PATCH of an open order: its new qty, limit or stop, or a trailing stop's new trail (at least one). */
export const ZReplaceOrderRequest = z
  .object({
    broker_order_id: requestText().min(1).max(128),
    asset_class: ZAssetClass,
    qty: z.number().finite().positive().max(1e12).optional(),
    limit_price: positivePrice().optional(),
    stop_price: positivePrice().optional(),
    ...trailFields,
  })
  .refine((change) => [change.qty, change.limit_price, change.stop_price, change.trail_percent, change.trail_price].some((field) => field !== undefined), {
    message: 'give qty, limit_price, stop_price, trail_percent or trail_price',
    path: ['qty'],
  });
export type TReplaceOrderRequest = z.infer<typeof ZReplaceOrderRequest>;

export const ZCancelAllQuery = z.object({ asset_class: ZAssetClass, mode: ZTradingMode.optional() });
export const ZCancelAllResult = z.object({
  canceled: z.array(z.string()),
  failed: z.array(z.object({ broker_order_id: z.string(), reason: z.string() })),
});
export const ZClosePositionPath = z.object({ symbol: ZSymbolInput, asset_class: ZAssetClass, mode: ZTradingMode.default('paper') });

export const ZAccountQuery = z.object({ asset_class: ZAssetClass, mode: ZTradingMode.default('paper') });

export const ZPosition = z.object({
  asset_class: ZAssetClass,
  exchange: z.string(),
  symbol: z.string(),
  qty: z.number(),
  avg_entry_price: z.number(),
  current_price: z.number(),
  unrealized_pnl: z.number(),
  /** A fraction of the position's cost. */
  unrealized_pnl_pct: z.number(),
  currency: z.string(),
  side: z.literal('LONG'),
  metadata: z.record(z.string(), z.unknown()),
});
export const ZPositionList = z.object({ items: z.array(ZPosition) });

/** The `order_event` frame of /ws/equity/orders (the events area sends it). */
export const ZOrderEvent = z.object({
  type: z.literal('order_event'),
  /** `triggered` is an extension of the interface's list: an emulated order's trigger fired (DESIGN §6 "Advanced orders"). */
  event_type: z.enum(['placed', 'accepted', 'open', 'partial_fill', 'fill', 'filled', 'canceled', 'rejected', 'replaced', 'triggered']),
  asset_class: ZAssetClass,
  broker: z.string(),
  broker_order_id: z.string(),
  client_order_id: z.string(),
  symbol: z.string(),
  /** An extension of the interface's frame: how long the order works. */
  time_in_force: ZTimeInForce,
  filled_qty: z.number(),
  avg_fill_price: z.number().nullable(),
  status: ZOrderStatus,
  received_at: ZTimestamp,
  payload: z.record(z.string(), z.unknown()),
});
export type TOrderEvent = z.infer<typeof ZOrderEvent>;

