// Amounts in an account's currency: grouped, to the currency's minor units, then the currency.
import { fixed } from './decimal.ts';

/** Decimals of a currency's minor unit (ISO 4217; USDT settles in cents like the dollar). */
const MINOR_UNITS: Readonly<Record<string, number>> = { USD: 2, USDT: 2, USDC: 2, EUR: 2, KRW: 0, JPY: 0 };

/** A currency's minor-unit decimals; 2 for a currency the table does not know. */
export const currencyDecimals = (currency: string): number => MINOR_UNITS[currency] ?? 2;

/** `12,345.67 USDT`, `1,000,000 KRW`; `– USD` without a value. */
export const money = (value: number | null | undefined, currency: string): string =>
  value === null || value === undefined ? `– ${currency}` : `${fixed(value, currencyDecimals(currency))} ${currency}`;
