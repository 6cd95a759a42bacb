// What the price chart shows when it opens: the last six months of bars, not the whole history,
// with room right of the last bar for the fill markers' labels (drawn centred on their bar, so a
// fill on the last bars would be cut at the edge), and a price axis that never runs below zero
// (the margins under the lowest price would otherwise show negative prices for a cheap
// instrument). Pure, so it is unit-tested without a canvas.
import type { AutoscaleInfo } from 'lightweight-charts';

/** About six months, in calendar days: the stocks' ~126 trading days, crypto's 183 bars. */
export const OPEN_DAYS = 183;
/** The price scale's margins as fractions of its height (lightweight-charts' `scaleMargins`). */
export const PRICE_MARGINS = { top: 0.1, bottom: 0.1 } as const;

/** The least room right of the last bar, in bars, and the share of the shown bars it grows with. */
const MIN_RIGHT_BARS = 3;
const RIGHT_SPACE_SHARE = 0.12;
const DAY_MS = 86_400_000;

export interface LogicalRange {
  from: number;
  to: number;
}

/**
 * Bars of room right of the last one: a share of the bars shown, so the room stays about the same
 * width on the screen (a label is as wide with 20 bars shown as with 180), never fewer than a few.
 */
export const rightSpaceBars = (shownBars: number) => Math.max(MIN_RIGHT_BARS, Math.ceil(shownBars * RIGHT_SPACE_SHARE));

/**
 * The logical range (bar indexes, oldest 0) that shows the bars of the last `days` days up to the
 * last bar, and the room right of it; undefined without bars. `dates` are the bars' YYYY-MM-DD
 * days, oldest first.
 */
export const openingRange = (dates: readonly string[], days = OPEN_DAYS): LogicalRange | undefined => {
  const last = dates.at(-1);
  if (last === undefined) return undefined;
  const since = new Date(Date.parse(`${last}T00:00:00Z`) - days * DAY_MS).toISOString().slice(0, 10);
  const first = dates.findIndex((date) => date > since);
  const lastIndex = dates.length - 1;
  return { from: first, to: lastIndex + rightSpaceBars(lastIndex - first + 1) };
};

/**
 * The autoscale of a price series with its lowest price raised just enough that the margin under
 * it (`margins.bottom` of the height, lightweight-charts' `scaleMargins`) ends at zero, not below:
 * the bottom of the axis is min − (max − min) · b / (1 − t − b), which is zero for
 * min = max · b / (1 − t). The bars stay in view (the lowest ones reach into the margin). The
 * pixel margin below (the markers') is dropped then, since it would run below zero again.
 */
export const nonNegativeAutoscale = (info: AutoscaleInfo | null, margins: { top: number; bottom: number } = PRICE_MARGINS): AutoscaleInfo | null => {
  if (!info?.priceRange) return info;
  const { minValue, maxValue } = info.priceRange;
  const lowest = (maxValue * margins.bottom) / (1 - margins.top);
  if (minValue >= lowest) return info;
  return { ...info, priceRange: { minValue: lowest, maxValue }, ...(info.margins ? { margins: { above: info.margins.above, below: 0 } } : {}) };
};
