// What the exchange lets the simulator do at an instant: whether an instrument's market trades (its
// exchange calendar; crypto always; every market with RISK_MARKET_HOURS=ignore) and a KRX stock's
// daily price band around the previous session's close. The simulator walks, matches and fills
// only while the market trades, and only at prices inside the band.
import type { Decimal } from 'decimal.js';
import type { TAssetClass } from '../../../contracts/common.ts';
import type { Queryable } from '../../db/client.ts';
import type { InstrumentRow } from '../../db/schema/index.ts';
import { ExactDecimal } from '../../decimal.ts';
import { krxTickSize } from '../../instruments/ticks.ts';
import { previousSessionClose } from '../../marketdata/queries.ts';
import { marketSession } from '../../markets/calendar.ts';
import { krxPriceLimits, type PriceLimits } from '../../markets/krx-prices.ts';
import type { TOrderSide } from '../fills.ts';

/** RISK_MARKET_HOURS: `ignore` lets the simulator trade stocks at any hour, as the risk gate then does. */
export type TMarketHours = 'enforce' | 'ignore';

/** What the market allows one instrument at one instant. */
export interface MarketState {
  /** Whether its market trades: no walk, no matching and no fill while it does not. */
  open: boolean;
  /**
   * A KRX stock's band for the session under way (the next one while closed); undefined for
   * other instruments and for a stock without a stored close before that session.
   */
  band?: PriceLimits | undefined;
}

/** The state of a market that trades without a band (crypto; tests that do not care). */
export const UNRESTRICTED: MarketState = { open: true };

/** The price moved into the band, where the exchange lets it trade (unchanged without a band). */
export const intoBand = (price: Decimal, band: PriceLimits | undefined): Decimal => {
  if (!band) return price;
  if (price.gt(band.upper)) return band.upper;
  if (price.lt(band.lower)) return band.lower;
  return price;
};

/**
 * The worst price a fill of this side may take: the order's limit, tightened to the band's edge
 * on the side the order pays through. A KRX market buy can execute up to the upper limit and no
 * further (the exchange's own limit on every order), so a fill whose slippage would cross the
 * edge is made at the edge; null when nothing bounds it.
 */
export const fillBound = (side: TOrderSide, limit: Decimal | null, band: PriceLimits | undefined): Decimal | null => {
  if (!band) return limit;
  const edge = side === 'buy' ? band.upper : band.lower;
  if (limit === null) return edge;
  return side === 'buy' ? ExactDecimal.min(limit, edge) : ExactDecimal.max(limit, edge);
};

interface Span {
  from: number;
  until: number;
  open: boolean;
}

interface CachedBand {
  /** The session the band is of, while it trades (ms since the epoch). */
  from: number;
  until: number;
  band: PriceLimits;
}

export interface ExchangeRules {
  /** Whether the market of the asset class trades at `at`: pure arithmetic on the calendar. */
  isOpen(assetClass: TAssetClass, at: Date): boolean;
  /**
   * The next opening bell after `at` (while the market trades, the next session's), or null for a
   * market that never closes (crypto; every market with RISK_MARKET_HOURS=ignore).
   */
  nextOpen(assetClass: TAssetClass, at: Date): Date | null;
  /** The instrument's market at `at`: open or not, and a KRX stock's band. */
  stateOf(instrument: Pick<InstrumentRow, 'assetClass' | 'symbol' | 'tickRule' | 'tickSize'>, at: Date): Promise<MarketState>;
}

export const createExchangeRules = ({ db, marketHours }: { db: Queryable; marketHours: TMarketHours }): ExchangeRules => {
  // The span of time the last answer holds for, per asset class: a matching round or a placement
  // asks again only once the bell has rung.
  const spans = new Map<TAssetClass, Span>();
  // A session's band, per KRX symbol, kept while that session trades (by the calendar, whatever
  // RISK_MARKET_HOURS says), so a placement reads no more than it did: a close of an earlier day
  // imported during the session moves the band from the next session on. While closed it is read
  // each time, since the close of the session just ended may be loaded at any moment and becomes
  // the next session's base.
  const bands = new Map<string, CachedBand>();
  // The next open found at `from`, per asset class: the same answer holds until that open rings.
  const opens = new Map<TAssetClass, { from: number; until: number }>();

  const isOpen = (assetClass: TAssetClass, at: Date): boolean => {
    if (marketHours === 'ignore' || assetClass === 'crypto') return true;
    const t = at.getTime();
    const known = spans.get(assetClass);
    if (known && t >= known.from && t < known.until) return known.open;
    const session = marketSession({ assetClass, at });
    const span = session.open ? { from: session.opensAt.getTime(), until: session.closesAt.getTime(), open: true } : { from: t, until: session.opensAt.getTime(), open: false };
    spans.set(assetClass, span);
    return span.open;
  };

  const nextOpen = (assetClass: TAssetClass, at: Date): Date | null => {
    if (marketHours === 'ignore' || assetClass === 'crypto') return null;
    const t = at.getTime();
    const known = opens.get(assetClass);
    if (known && t >= known.from && t < known.until) return new Date(known.until);
    const session = marketSession({ assetClass, at });
    // At its close a session is over: the calendar answers the next one.
    const opensAt = session.open ? marketSession({ assetClass, at: session.closesAt }).opensAt : session.opensAt;
    opens.set(assetClass, { from: t, until: opensAt.getTime() });
    return opensAt;
  };

  const bandOf = async (instrument: Pick<InstrumentRow, 'assetClass' | 'symbol' | 'tickRule' | 'tickSize'>, at: Date): Promise<PriceLimits | undefined> => {
    const { assetClass, symbol } = instrument;
    if (assetClass !== 'kr_equity') return undefined;
    const t = at.getTime();
    const cached = bands.get(symbol);
    if (cached && t >= cached.from && t < cached.until) return cached.band;
    // The session under way, or the next one: a price set at night is the quote the open trades.
    const session = marketSession({ assetClass, at });
    const base = await previousSessionClose(db, { assetClass, symbol, before: session.sessionDate });
    const tickAt = instrument.tickRule === 'krx_bands' ? krxTickSize : () => new ExactDecimal(instrument.tickSize);
    const band = base === undefined ? undefined : krxPriceLimits(new ExactDecimal(base), tickAt);
    // A stock without a close yet is read again: its bars may be imported at any moment.
    if (session.open && band) bands.set(symbol, { from: session.opensAt.getTime(), until: session.closesAt.getTime(), band });
    else bands.delete(symbol);
    return band;
  };

  return {
    isOpen,
    nextOpen,
    stateOf: async (instrument, at) => {
      const open = isOpen(instrument.assetClass, at);
      return { open, band: await bandOf(instrument, at) };
    },
  };
};
