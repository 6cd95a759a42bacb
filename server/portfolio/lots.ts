// Tax lots by FIFO (DESIGN §6): each buy fill opens a lot whose cost basis includes its fee; each
// sell fill closes the oldest lots first, in part where it sells less than a lot holds, its
// proceeds net of its fee and tax shared by quantity. A paper reset removes the positions without
// a sale (a flow, not a result): it ends every open lot without a gain. A sell of more than the
// lots hold (a position from before its fills were kept) closes what is there and leaves the rest
// out. Exact decimals throughout.
import type { Decimal } from 'decimal.js';
import { ExactDecimal } from '../decimal.ts';
import type { AccountFill } from './queries.ts';

export interface ClosedLot {
  symbol: string;
  qty: Decimal;
  acquiredAt: Date;
  soldAt: Date;
  /** What the quantity cost, its share of the buy's fee included. */
  costBasis: Decimal;
  /** What it sold for, less its share of the sell's fee and tax. */
  proceeds: Decimal;
  gain: Decimal;
}

export interface OpenLot {
  symbol: string;
  qty: Decimal;
  acquiredAt: Date;
  costBasis: Decimal;
}

/** Closed and open lots from the account's fills and resets (instants), each oldest first. */
export const fifoLots = (fills: readonly AccountFill[], resets: readonly Date[] = []): { closed: ClosedLot[]; open: OpenLot[] } => {
  const bySymbol = new Map<string, OpenLot[]>();
  const closed: ClosedLot[] = [];
  const pendingResets = [...resets].sort((a, b) => a.getTime() - b.getTime());
  for (const fill of fills) {
    // A reset before this fill removed every position it finds.
    while (pendingResets.length > 0 && pendingResets[0]!.getTime() <= fill.at.getTime()) {
      pendingResets.shift();
      bySymbol.clear();
    }
    const qty = new ExactDecimal(fill.qty);
    if (qty.lte(0)) continue;
    const lots = bySymbol.get(fill.symbol) ?? [];
    bySymbol.set(fill.symbol, lots);
    if (fill.side === 'buy') {
      lots.push({ symbol: fill.symbol, qty, acquiredAt: fill.at, costBasis: qty.times(fill.price).plus(fill.fee) });
      continue;
    }
    // The fee is the sell's whole fee, tax included (the ledger's `fee`; `tax` is the part of it that is tax).
    const proceedsOfAll = qty.times(fill.price).minus(fill.fee);
    let left = qty;
    while (left.gt(0) && lots.length > 0) {
      const lot = lots[0]!;
      const taken = ExactDecimal.min(lot.qty, left);
      const costBasis = taken.eq(lot.qty) ? lot.costBasis : lot.costBasis.times(taken).dividedBy(lot.qty);
      const proceeds = taken.eq(qty) ? proceedsOfAll : proceedsOfAll.times(taken).dividedBy(qty);
      closed.push({ symbol: fill.symbol, qty: taken, acquiredAt: lot.acquiredAt, soldAt: fill.at, costBasis, proceeds, gain: proceeds.minus(costBasis) });
      lot.qty = lot.qty.minus(taken);
      lot.costBasis = lot.costBasis.minus(costBasis);
      if (lot.qty.lte(0)) lots.shift();
      left = left.minus(taken);
    }
  }
  if (pendingResets.length > 0) bySymbol.clear();
  return { closed, open: [...bySymbol.values()].flat() };
};
