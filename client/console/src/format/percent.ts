// Percentages and P&L that read without colour: always a sign, and an arrow beside a P&L.
import { MINUS, round } from './decimal.ts';
import { currencyDecimals } from './money.ts';

const signed = (sign: -1 | 0 | 1, digits: string): string => (sign > 0 ? `+${digits}` : sign < 0 ? `${MINUS}${digits}` : digits);
const arrow = (sign: -1 | 0 | 1): string => (sign > 0 ? '▲ ' : sign < 0 ? '▼ ' : '');
const directionOf = (sign: -1 | 0 | 1): 'gain' | 'loss' | 'flat' => (sign > 0 ? 'gain' : sign < 0 ? 'loss' : 'flat');

/** A fraction as a signed percentage: `+1.25 %`, `−0.40 %`, and `0.00 %` for what rounds to zero; `–` without a value. */
export const percent = (fraction: number | null | undefined): string => {
  if (fraction === null || fraction === undefined) return '–';
  const { sign, digits } = round(fraction, 2, 2);
  return `${signed(sign, digits)} %`;
};

/** A share of a whole (a win rate, a confidence) as a percentage without a sign: `60.00 %`; `–` without a value. */
export const share = (fraction: number | null | undefined): string => (fraction === null || fraction === undefined ? '–' : `${round(fraction, 2, 2).digits} %`);

/** Which way a P&L went once rounded to the currency: what its colour (a CSS class) and arrow follow. */
export const direction = (value: number, currency: string): 'gain' | 'loss' | 'flat' => directionOf(round(value, currencyDecimals(currency)).sign);

/** Which way a P&L fraction went once rounded to a percentage's two decimals. */
export const percentDirection = (fraction: number): 'gain' | 'loss' | 'flat' => directionOf(round(fraction, 2, 2).sign);

/** A P&L fraction with its arrow: `▲ +1.25 %`, `▼ −0.40 %`, `0.00 %`. */
export const pnlPercent = (fraction: number): string => `${arrow(round(fraction, 2, 2).sign)}${percent(fraction)}`;

/** A P&L amount with its sign and an arrow: `▲ +12.50 USDT`, `▼ −3.00 USDT`, `0.00 USDT`; `– USDT` without a value. */
export const pnl = (value: number | null | undefined, currency: string): string => {
  if (value === null || value === undefined) return `– ${currency}`;
  const { sign, digits } = round(value, currencyDecimals(currency));
  return `${arrow(sign)}${signed(sign, digits)} ${currency}`;
};
