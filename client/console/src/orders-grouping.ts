// The blotter's rows: a bracket's children (take-profit and stop-loss legs, named by the reserved
// suffixes of their entry's client order id) directly under their entry, and who placed each
// order. Pure, so the grouping is tested without a browser; it imports only types from the client
// package, so its unit test needs no built client.
import type { BRACKET_CHILD_SUFFIXES, TOrderSource } from '@trading-service/client';

export type TBracketLegKind = keyof typeof BRACKET_CHILD_SUFFIXES;

export interface TBracketLeg {
  kind: TBracketLegKind;
  /** 1 for the entry's first pair; 2, 3 … for the pairs of units it filled again later (`:tp.2`). */
  pair: number;
  entryClientOrderId: string;
}

export interface TBlotterRow<TOrder> {
  order: TOrder;
  /** What bracket leg the order is, when its client order id says so. */
  leg: TBracketLeg | undefined;
  /** True when the row sits under its entry: a leg whose entry is not on the page stays a top-level row. */
  underEntry: boolean;
  /** The entry a leg sits under. */
  entry: TOrder | undefined;
}

/** The contract's suffixes: its type holds their literal values, so a change there fails the type check here. */
const SUFFIXES: typeof BRACKET_CHILD_SUFFIXES = { take_profit: ':tp', stop_loss: ':sl' };
const KIND_OF_SUFFIX = new Map<string, TBracketLegKind>(Object.entries(SUFFIXES).map(([kind, suffix]) => [suffix, kind as TBracketLegKind]));
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
// Built from the contract's suffixes, so a new leg kind there is a leg here too.
const LEG_ID = new RegExp(`^(.+)(${[...KIND_OF_SUFFIX.keys()].map(escaped).join('|')})(?:\\.(\\d+))?$`);

/** The bracket leg a client order id names, or undefined for any other order. */
export const bracketLegOf = (clientOrderId: string): TBracketLeg | undefined => {
  const match = LEG_ID.exec(clientOrderId);
  const kind = match?.[2] === undefined ? undefined : KIND_OF_SUFFIX.get(match[2]);
  if (!match?.[1] || !kind) return undefined;
  return { kind, pair: match[3] === undefined ? 1 : Number(match[3]), entryClientOrderId: match[1] };
};

/**
 * The page's orders with each entry's legs moved directly under it, in the page's order (entries
 * where they were, legs in the order the page lists them). A leg whose entry is not on this page
 * keeps its own place.
 */
export const groupBracketLegs = <TOrder extends { client_order_id: string }>(orders: readonly TOrder[]): TBlotterRow<TOrder>[] => {
  const onPage = new Map(orders.map((order) => [order.client_order_id, order]));
  const legsOf = new Map<string, TBlotterRow<TOrder>[]>();
  const top: TBlotterRow<TOrder>[] = [];
  for (const order of orders) {
    const leg = bracketLegOf(order.client_order_id);
    const entry = leg && onPage.get(leg.entryClientOrderId);
    if (leg && entry) {
      const legs = legsOf.get(leg.entryClientOrderId) ?? [];
      legs.push({ order, leg, underEntry: true, entry });
      legsOf.set(leg.entryClientOrderId, legs);
    } else {
      top.push({ order, leg, underEntry: false, entry: undefined });
    }
  }
  return top.flatMap((row) => [row, ...(legsOf.get(row.order.client_order_id) ?? [])]);
};

/** The words a bracket leg is shown with. */
export const legLabel = (leg: TBracketLeg) => `${leg.kind === 'take_profit' ? 'take-profit' : 'stop-loss'} leg${leg.pair > 1 ? ` (pair ${leg.pair})` : ''}`;

/** Every source the contract's ZOrderSource names (a Record, so a new one must be added here). */
const SOURCES: Record<TOrderSource, true> = { api: true, bot: true, webhook: true };
const isSource = (value: unknown): value is TOrderSource => typeof value === 'string' && Object.hasOwn(SOURCES, value);

/** Who placed the order, from its `metadata.source`; undefined when it says nothing the contract knows. */
export const orderSourceOf = (metadata: Record<string, unknown>): TOrderSource | undefined => (isSource(metadata.source) ? metadata.source : undefined);

/**
 * Who a row's order was placed for: its own source, or for a leg (which the service places when
 * its entry fills, with no source of its own) its entry's, marked as that entry's.
 */
export const rowSourceOf = (row: TBlotterRow<{ metadata: Record<string, unknown> }>): { source: TOrderSource; ofEntry: boolean } | undefined => {
  const own = orderSourceOf(row.order.metadata);
  if (own) return { source: own, ofEntry: false };
  const entry = row.entry && orderSourceOf(row.entry.metadata);
  return entry ? { source: entry, ofEntry: true } : undefined;
};
