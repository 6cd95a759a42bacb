// Price increments: the KRX stock tick table by price band, and rounding a price onto a tick grid
// in decimal arithmetic (used at the broker boundary and by the synthetic bars).
import { Decimal } from 'decimal.js';

/**
 * KRX tick sizes for stocks (KOSPI, KOSDAQ and KONEX alike), in force since 2023-01-25 when KRX
 * amended the enforcement rules of its securities market business regulation: the table became
 * the same on all three markets and three bands got finer ticks (1,000–2,000 KRW: 5 → 1;
 * 10,000–20,000: 50 → 10; 100,000–200,000: 500 → 100). KRX announcement of 2022-11-01, reported
 * e.g. by Chosun Ilbo that day and by Energy Economy News on 2023-01-17. ETFs, ETNs and ELWs keep a
 * flat 5 KRW tick and are not covered here. Each band runs up to, not including, `below`.
 */
export const KRX_TICK_BANDS: ReadonlyArray<{ readonly below: number; readonly tick: number }> = [
  { below: 2_000, tick: 1 },
  { below: 5_000, tick: 5 },
  { below: 20_000, tick: 10 },
  { below: 50_000, tick: 50 },
  { below: 200_000, tick: 100 },
  { below: 500_000, tick: 500 },
  { below: Number.POSITIVE_INFINITY, tick: 1_000 },
];

const TOP_BAND_TICK = 1_000;

/** The KRX tick of a price in KRW held as a plain number (exact: KRW prices are integers). */
export const krxTickOfNumber = (price: number): number => KRX_TICK_BANDS.find((b) => price < b.below)?.tick ?? TOP_BAND_TICK;

/** `value` as a Decimal; a RangeError (not decimal.js's plain Error) for anything that is no finite number. */
const finite = (value: Decimal.Value, what: string): Decimal => {
  let d: Decimal | null = null;
  try {
    d = new Decimal(value);
  } catch {
    // decimal.js throws a plain Error for text that is no number; the RangeError below says which input.
  }
  if (!d?.isFinite()) throw new RangeError(`${what} must be a finite number, got ${String(value)}`);
  return d;
};

const positive = (value: Decimal.Value, what: string): Decimal => {
  const d = finite(value, what);
  if (!d.greaterThan(0)) throw new RangeError(`${what} must be greater than 0, got ${String(value)}`);
  return d;
};

/** The KRX tick size at `price` (KRW). */
export const krxTickSize = (price: Decimal.Value): Decimal => {
  const p = positive(price, 'price');
  return new Decimal(KRX_TICK_BANDS.find((b) => p.lessThan(b.below))?.tick ?? TOP_BAND_TICK);
};

/** half_up: nearest tick, halves away from zero; down: the tick at or below; up: at or above. */
export type TTickRounding = 'half_up' | 'down' | 'up';

const ROUNDING: Record<TTickRounding, Decimal.Rounding> = {
  half_up: Decimal.ROUND_HALF_UP,
  down: Decimal.ROUND_FLOOR,
  up: Decimal.ROUND_CEIL,
};

/** `price` on the grid of multiples of `tick`. */
export const roundToTick = (price: Decimal.Value, tick: Decimal.Value, mode: TTickRounding): Decimal => {
  const step = positive(tick, 'tick');
  return finite(price, 'price').dividedBy(step).toDecimalPlaces(0, ROUNDING[mode]).times(step);
};

/**
 * `price` on the KRX grid. The tick is taken at the price itself; a result that lands on a band
 * edge is still on the grid, because every edge (2,000, 5,000, …) is a multiple of the coarser
 * tick above it.
 */
export const roundToKrxTick = (price: Decimal.Value, mode: TTickRounding): Decimal => roundToTick(price, krxTickSize(price), mode);

/** An instrument's price grid as the registry holds it: one fixed tick, or the KRX band table. */
export interface TickGrid {
  rule: 'fixed' | 'krx_bands';
  /** The fixed tick; unused under 'krx_bands'. */
  size: Decimal.Value;
}

/** `price` on the instrument's grid: the prices the service suggests (analysis levels, bot stops). */
export const roundToGrid = (price: Decimal.Value, grid: TickGrid, mode: TTickRounding): Decimal =>
  grid.rule === 'krx_bands' ? roundToKrxTick(price, mode) : roundToTick(price, grid.size, mode);
