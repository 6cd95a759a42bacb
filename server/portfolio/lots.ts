// Tax lots by FIFO (DESIGN §6): each buy fill opens a lot whose cost basis includes its fee; each
// sell fill closes the oldest lots first, in part where it sells less than a lot holds, its
// proceeds net of its fee and tax shared by quantity. A paper reset removes the positions without
// a sale (a flow, not a result): it ends every open lot without a gain. A sell of more than the
// lots hold (a position from before its fills were kept) closes what is there and leaves the rest
// out. Exact amounts (fixed-point.ts): a year of fills is read on every performance request.
import { fixedPointOf, share, times, ZERO, type FixedPoint } from './fixed-point.ts';
import type { AccountFill } from './queries.ts';

export interface ClosedLot {
  symbol: string;
  qty: FixedPoint;
  acquiredAt: Date;
  soldAt: Date;
  /** What the quantity cost, its share of the buy's fee included. */
  costBasis: FixedPoint;
  /** What it sold for, less its share of the sell's fee and tax. */
  proceeds: FixedPoint;
  gain: FixedPoint;
}

export interface OpenLot {
  symbol: string;
  qty: FixedPoint;
  acquiredAt: Date;
  costBasis: FixedPoint;
}

/** Closed and open lots from the account's fills and resets (instants), each oldest first. */
export const fifoLots = (fills: readonly AccountFill[], resets: readonly Date[] = []): { closed: ClosedLot[]; open: OpenLot[] } => {
  const bySymbol = new Map<string, OpenLot[]>();
  const closed: ClosedLot[] = [];
  const pendingResets = resets.map((at) => at.getTime()).sort((a, b) => a - b);
  let nextReset = 0;
  for (const fill of fills) {
    // A reset before this fill removed every position it finds.
    const at = fill.at.getTime();
    while (nextReset < pendingResets.length && pendingResets[nextReset]! <= at) {
      nextReset++;
      bySymbol.clear();
    }
    const qty = fixedPointOf(fill.qty);
    if (qty <= ZERO) continue;
    let lots = bySymbol.get(fill.symbol);
    if (!lots) bySymbol.set(fill.symbol, (lots = []));
    if (fill.side === 'buy') {
      lots.push({ symbol: fill.symbol, qty, acquiredAt: fill.at, costBasis: times(qty, fixedPointOf(fill.price)) + fixedPointOf(fill.fee) });
      continue;
    }
    // The fee is the sell's whole fee, tax included (the ledger's `fee`; `tax` is the part of it that is tax).
    const proceedsOfAll = times(qty, fixedPointOf(fill.price)) - fixedPointOf(fill.fee);
    let left = qty;
    while (left > ZERO && lots.length > 0) {
      const lot = lots[0]!;
      const taken = lot.qty < left ? lot.qty : left;
      const costBasis = taken === lot.qty ? lot.costBasis : share(lot.costBasis, taken, lot.qty);
      const proceeds = taken === qty ? proceedsOfAll : share(proceedsOfAll, taken, qty);
      closed.push({ symbol: fill.symbol, qty: taken, acquiredAt: lot.acquiredAt, soldAt: fill.at, costBasis, proceeds, gain: proceeds - costBasis });
      lot.qty -= taken;
      lot.costBasis -= costBasis;
      if (lot.qty <= ZERO) lots.shift();
      left -= taken;
    }
  }
  if (nextReset < pendingResets.length) bySymbol.clear();
  return { closed, open: [...bySymbol.values()].flat() };
};
