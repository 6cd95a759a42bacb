// Deterministic synthetic daily bars for demo data: a seeded random walk per instrument that ends
// on its reference price, with every price on the instrument's tick grid.
import { Decimal } from 'decimal.js';
import type { TAssetClass } from '../../contracts/common.ts';
import { isCalendarDate, type TBar } from './bars.ts';
import { krxTickOfNumber } from '../instruments/ticks.ts';
import { isTradingDay } from '../markets/calendar.ts';

export interface SyntheticBarsOptions {
  symbol: string;
  assetClass: TAssetClass;
  /** The last close, exactly (decimal string > 0). */
  referencePrice: string;
  /**
   * The price increment (decimal string). kr_equity ignores it: KRX ticks follow the price band.
   * Defaults: us_equity 0.01; crypto the last decimal place of `referencePrice`.
   */
  tickSize?: string;
  /** First date, YYYY-MM-DD; default 2015-01-01. */
  from?: string;
  /** Last date (the bar that closes at `referencePrice`), YYYY-MM-DD. */
  to: string;
  seed: number | string;
}

/**
 * The walk's character per class: daily log-return volatility, the daily drift (prices mostly
 * rose to where they are now), how volume scales (a day's traded value in the quote currency),
 * how far below the reference the walk may wander before it is reflected, and whether the market
 * trades in sessions (equities: bars on the exchange's trading days only, an overnight gap at each open).
 */
const PROFILE: Record<TAssetClass, { volatility: number; drift: number; dailyValue: number; floorFactor: number; sessions: boolean }> = {
  crypto: { volatility: 0.035, drift: 0.0008, dailyValue: 3e8, floorFactor: 100, sessions: false },
  us_equity: { volatility: 0.016, drift: 0.0003, dailyValue: 1.5e9, floorFactor: 20, sessions: true },
  kr_equity: { volatility: 0.019, drift: 0.0002, dailyValue: 3e11, floorFactor: 20, sessions: true },
};
const CEILING_FACTOR = 4;

/** cyrb128: a 128-bit string hash, to seed the generator from (seed, class, symbol). */
const hash128 = (text: string): [number, number, number, number] => {
  let h1 = 1779033703;
  let h2 = 3144134277;
  let h3 = 1013904242;
  let h4 = 2773480762;
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0];
};

/** sfc32: a small, fast generator with a 128-bit state; uniform in [0, 1). */
const sfc32 = ([seedA, seedB, seedC, seedD]: [number, number, number, number]) => {
  let a = seedA;
  let b = seedB;
  let c = seedC;
  let d = seedD;
  const next = () => {
    a |= 0;
    b |= 0;
    c |= 0;
    d |= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  // The first outputs still echo the seed; let the state mix.
  for (let i = 0; i < 15; i++) next();
  return next;
};

/** Standard normal draws by Box–Muller, both halves used. */
const normals = (uniform: () => number) => {
  let spare: number | null = null;
  return () => {
    if (spare !== null) {
      const value = spare;
      spare = null;
      return value;
    }
    const radius = Math.sqrt(-2 * Math.log(1 - uniform()));
    const angle = 2 * Math.PI * uniform();
    spare = radius * Math.sin(angle);
    return radius * Math.cos(angle);
  };
};

const positiveDecimal = (text: string, what: string): Decimal => {
  let value: Decimal | null = null;
  try {
    value = new Decimal(text);
  } catch {
    // decimal.js throws a plain Error for text that is no number; the RangeError below names the option.
  }
  if (!value?.isFinite() || !value.greaterThan(0)) throw new RangeError(`${what} must be a positive decimal, got ${text}`);
  return value;
};

/** An integer count of 10^-scale units as a canonical decimal string ("12345", 2 → "123.45"). */
const formatUnits = (units: number, scale: number): string => {
  if (scale === 0) return String(units);
  const digits = String(units).padStart(scale + 1, '0');
  const point = digits.length - scale;
  let end = digits.length;
  while (end > point && digits.charCodeAt(end - 1) === 48 /* '0' */) end--;
  return end === point ? digits.slice(0, point) : `${digits.slice(0, point)}.${digits.slice(point, end)}`;
};

const TWO_DIGITS = Array.from({ length: 32 }, (_, n) => String(n).padStart(2, '0'));
const daysInMonth = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();

/**
 * The dates from `from` to `to` the asset class trades on: every day for crypto, the exchange's
 * trading days (its calendar: no weekends, no holidays) for equities. Walked field by field
 * rather than through Date objects (most of the generator's time went there), and recent lists
 * are kept: a demo seed asks for the same few ranges once per instrument.
 */
const tradingDays = (() => {
  const recent = new Map<string, readonly string[]>();
  return (from: string, to: string, assetClass: TAssetClass): readonly string[] => {
    const key = `${from}|${to}|${assetClass}`;
    const known = recent.get(key);
    if (known) return known;
    const days: string[] = [];
    let [year, month, day] = from.split('-').map(Number) as [number, number, number];
    let weekday = new Date(Date.UTC(year, month - 1, day)).getUTCDay();
    let monthLength = daysInMonth(year, month);
    for (let date = from; date <= to; ) {
      // Weekends first: the calendar is asked only about weekdays.
      if (assetClass === 'crypto' || (weekday !== 0 && weekday !== 6 && isTradingDay(assetClass, date))) days.push(date);
      weekday = (weekday + 1) % 7;
      if (++day > monthLength) {
        day = 1;
        if (++month > 12) {
          month = 1;
          year++;
        }
        monthLength = daysInMonth(year, month);
      }
      date = `${String(year).padStart(4, '0')}-${TWO_DIGITS[month]}-${TWO_DIGITS[day]}`;
    }
    if (recent.size >= 8) recent.clear();
    recent.set(key, days);
    return days;
  };
})();

/**
 * Daily bars from `from` to `to`: every calendar day for crypto, the exchange's trading days for
 * equities (no weekends, no holidays: server/markets/calendar.ts). Close to close is a geometric random walk walked
 * backwards from the reference price, so the last close is that price exactly; opens gap from the
 * previous close for equities (crypto trades through the night: its open is the previous close);
 * highs and lows reach past open and close. Prices are floats only inside the walk: each is put
 * on the tick grid as an integer count of the smallest unit and written out from that, so every
 * price is an exact multiple of its tick. The same options give the same bars on every machine.
 */
export const syntheticBars = (options: SyntheticBarsOptions): TBar[] => {
  const { symbol, assetClass, referencePrice, from = '2015-01-01', to, seed } = options;
  if (!isCalendarDate(from) || !isCalendarDate(to)) throw new RangeError(`from and to must be YYYY-MM-DD dates, got ${from} and ${to}`);
  const reference = positiveDecimal(referencePrice, 'referencePrice');

  const profile = PROFILE[assetClass];
  const days = tradingDays(from, to, assetClass);
  if (days.length === 0) return [];

  const tick =
    assetClass === 'kr_equity'
      ? new Decimal(1) // only sets the scale: KRX ticks come from the price bands below
      : options.tickSize !== undefined
        ? positiveDecimal(options.tickSize, 'tickSize')
        : new Decimal(assetClass === 'us_equity' ? '0.01' : `1e-${reference.decimalPlaces()}`);
  // Every price is an integer number of 10^-scale units; the grid is reference-exact at this scale.
  const scale = Math.max(tick.decimalPlaces(), reference.decimalPlaces());
  const unitsPerWhole = 10 ** scale;
  const referenceUnits = reference.times(unitsPerWhole).toNumber();
  const fixedTickUnits = tick.times(unitsPerWhole).toNumber();
  if (referenceUnits * CEILING_FACTOR * 10 > Number.MAX_SAFE_INTEGER) throw new RangeError(`referencePrice ${referencePrice} is too large for a tick of ${tick.toFixed()}`);
  const tickUnitsAt = assetClass === 'kr_equity' ? (units: number) => krxTickOfNumber(units / unitsPerWhole) * unitsPerWhole : () => fixedTickUnits;
  const smallestTick = tickUnitsAt(0);

  const onGrid = (price: number, round: (x: number) => number): number => {
    const units = price * unitsPerWhole;
    const step = tickUnitsAt(units);
    return Math.max(smallestTick, round(units / step) * step);
  };

  const gaussian = normals(sfc32(hash128(`${seed}\u0000${assetClass}\u0000${symbol}`)));
  const { volatility, drift } = profile;

  // Log closes, walked back from the reference; index -1 (a day before `from`) seeds the first open.
  const logCloses = new Float64Array(days.length + 1);
  const top = Math.log(reference.toNumber() * CEILING_FACTOR);
  const floorPrice = Math.max(reference.toNumber() / profile.floorFactor, (100 * smallestTick) / unitsPerWhole);
  const bottom = Math.min(Math.log(reference.toNumber()), Math.log(floorPrice));
  logCloses[days.length] = Math.log(reference.toNumber());
  for (let i = days.length; i > 0; i--) {
    let previous = (logCloses[i] ?? 0) - (drift + volatility * gaussian());
    if (previous < bottom) previous = Math.min(top, 2 * bottom - previous);
    if (previous > top) previous = Math.max(bottom, 2 * top - previous);
    logCloses[i - 1] = previous;
  }

  const bars: TBar[] = new Array<TBar>(days.length);
  let previousClose = Math.exp(logCloses[0] ?? 0);
  for (let i = 0; i < days.length; i++) {
    const isLast = i === days.length - 1;
    const closePrice = Math.exp(logCloses[i + 1] ?? 0);
    const openPrice = profile.sessions ? previousClose * Math.exp(0.35 * volatility * gaussian()) : previousClose;
    const close = isLast ? referenceUnits : onGrid(closePrice, Math.round);
    const open = onGrid(openPrice, Math.round);
    const highPrice = Math.max(openPrice, closePrice) * Math.exp(Math.abs(0.5 * volatility * gaussian()));
    const lowPrice = Math.min(openPrice, closePrice) * Math.exp(-Math.abs(0.5 * volatility * gaussian()));
    const high = Math.max(onGrid(highPrice, Math.ceil), open, close);
    const low = Math.min(onGrid(lowPrice, Math.floor), open, close);
    const move = Math.abs((logCloses[i + 1] ?? 0) - (logCloses[i] ?? 0));
    const volume = Math.max(1, Math.round((profile.dailyValue / closePrice) * Math.exp(0.35 * gaussian()) * (1 + 8 * move)));
    bars[i] = {
      date: days[i] ?? '',
      open: formatUnits(open, scale),
      high: formatUnits(high, scale),
      low: formatUnits(low, scale),
      close: formatUnits(close, scale),
      volume: String(volume),
    };
    previousClose = closePrice;
  }
  return bars;
};
