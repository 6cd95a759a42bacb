// Numbers as the console shows them: always with their currency, and the mode beside them.
import type { TAssetClass } from '@trading-service/client';

export const ASSET_CLASSES: readonly TAssetClass[] = ['crypto', 'us_equity', 'kr_equity'];

export const ASSET_CLASS_NAMES: Record<TAssetClass, string> = { crypto: 'Crypto', us_equity: 'US equity', kr_equity: 'KR equity' };

/** `12,345.67 USDT`: grouped, up to 8 decimals (crypto quantities need them), then the currency. */
export const money = (value: number | null | undefined, currency: string): string =>
  value === null || value === undefined ? `– ${currency}` : `${value.toLocaleString('en-US', { maximumFractionDigits: 8 })} ${currency}`;

export const quantity = (value: number): string => value.toLocaleString('en-US', { maximumFractionDigits: 8 });

export const percent = (fraction: number): string => `${(fraction * 100).toFixed(2)} %`;

export const when = (timestamp: string): string => new Date(timestamp).toLocaleString('en-GB', { timeZone: 'UTC' }) + ' UTC';
