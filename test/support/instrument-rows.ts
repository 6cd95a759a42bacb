// Instrument rows as the registry stores them, for unit tests of the rules that read one.
import type { InstrumentRow } from '../../server/db/schema/index.ts';

/** BTC/USDT as the crypto profile registers it: a cent's tick, a lot of 0.001, fractional. */
export const btcUsdtRow = (at: Date): InstrumentRow => ({
  assetClass: 'crypto',
  symbol: 'BTC/USDT',
  exchange: 'BINANCE',
  currency: 'USDT',
  name: 'Bitcoin',
  referencePrice: '50000',
  tickRule: 'fixed',
  tickSize: '0.01',
  lotSize: '0.001',
  fractional: true,
  createdAt: at,
  updatedAt: at,
});
