// Numbers as the console shows them: always with their currency, and the mode beside them.
// The formatting itself is in ./format/ (exact decimal rounding, amounts, prices and quantities
// by instrument, signed percentages and P&L); this module gathers it for the views.
import type { TAssetClass } from '@trading-service/client';

export { money, currencyDecimals } from './format/money.ts';
export { price, quantity, priceDecimals, type InstrumentSteps } from './format/instrument.ts';
export { direction, percent, percentDirection, pnl, pnlPercent, share } from './format/percent.ts';

export const ASSET_CLASSES: readonly TAssetClass[] = ['crypto', 'us_equity', 'kr_equity'];

export const ASSET_CLASS_NAMES: Record<TAssetClass, string> = { crypto: 'Crypto', us_equity: 'US equity', kr_equity: 'KR equity' };

export const when = (timestamp: string): string => new Date(timestamp).toLocaleString('en-GB', { timeZone: 'UTC' }) + ' UTC';
