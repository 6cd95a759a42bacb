// Prices and quantities by their instrument: prices to the tick's decimals (KRX band ticks are
// whole won), quantities to the lot's. Without an instrument a price takes the currency's minor
// units and a quantity up to 8 decimals.
import { fixed, decimalsOf, upTo } from './decimal.ts';
import { currencyDecimals } from './money.ts';

/** What formatting needs of a registry instrument (GET /api/instruments). */
export interface InstrumentSteps {
  readonly tick_rule: 'fixed' | 'krx_bands';
  readonly tick_size: number;
  readonly lot_size: number;
}

/** The decimals of an instrument's prices: its tick's, none for the KRX bands (every band's tick is whole won). */
export const priceDecimals = (instrument: InstrumentSteps): number => (instrument.tick_rule === 'krx_bands' ? 0 : decimalsOf(instrument.tick_size));

/** `65,000.50 USDT`: to the tick's decimals, or the currency's without an instrument; `– USDT` without a value. */
export const price = (value: number | null | undefined, currency: string, instrument?: InstrumentSteps): string =>
  value === null || value === undefined ? `– ${currency}` : `${fixed(value, instrument ? priceDecimals(instrument) : currencyDecimals(currency))} ${currency}`;

/** `0.010`: to the lot's decimals, or up to 8 without an instrument; `–` without a value. */
export const quantity = (value: number | null | undefined, instrument?: InstrumentSteps): string =>
  value === null || value === undefined ? '–' : instrument ? fixed(value, decimalsOf(instrument.lot_size)) : upTo(value, 8);
