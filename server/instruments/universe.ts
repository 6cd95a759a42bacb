// The seeded instrument universe: real crypto pairs, US stocks and ETFs, and KRX stocks that every
// empty database starts with (reference data, production too; admins add more).
import type { TAssetClass } from '../../contracts/common.ts';
import { krxTickSize } from './ticks.ts';

export interface Instrument {
  /** Canonical form, as `normaliseSymbol` returns it. */
  readonly symbol: string;
  readonly asset_class: TAssetClass;
  readonly exchange: 'BINANCE' | 'NASDAQ' | 'NYSE' | 'NYSE ARCA' | 'KRX';
  readonly currency: 'USDT' | 'USD' | 'KRW';
  readonly name: string;
  /**
   * A plausible recent price (decimal string, on the tick grid): what the simulator quotes and the
   * synthetic bars end on until real prices arrive. Late-2025 levels; not market data.
   */
  readonly reference_price: string;
  /** The price increment. For KRX stocks it depends on the price (ticks.ts): this is the tick at the reference price. */
  readonly tick_size: string;
  /** The quantity step: a crypto pair's exchange step (0.00001 BTC); one share for stocks and ETFs. */
  readonly lot_size: string;
  /**
   * Whether quantities below one unit are accepted: crypto (in lot_size steps) and US shares
   * (the broker's fractional-share orders); never KRX stocks, which trade in whole shares.
   */
  readonly fractional: boolean;
}

/**
 * Binance spot pairs; tick and step are the exchange's PRICE_FILTER and LOT_SIZE filters as they
 * stood in 2025. Exchanges change these; a live order goes by the exchange's own filters.
 */
const crypto = (base: string, name: string, reference_price: string, tick_size: string, lot_size: string): Instrument => ({
  symbol: `${base}/USDT`,
  asset_class: 'crypto',
  exchange: 'BINANCE',
  currency: 'USDT',
  name: `${name} / Tether`,
  reference_price,
  tick_size,
  lot_size,
  fractional: true,
});

const us = (symbol: string, exchange: 'NASDAQ' | 'NYSE' | 'NYSE ARCA', name: string, reference_price: string): Instrument => ({
  symbol,
  asset_class: 'us_equity',
  exchange,
  currency: 'USD',
  name,
  reference_price,
  tick_size: '0.01', // Reg NMS sub-penny rule: quotes at $1.00 and above are in whole cents
  lot_size: '1',
  fractional: true,
});

const krx = (symbol: string, name: string, reference_price: string): Instrument => ({
  symbol,
  asset_class: 'kr_equity',
  exchange: 'KRX',
  currency: 'KRW',
  name,
  reference_price,
  tick_size: krxTickSize(reference_price).toFixed(),
  lot_size: '1',
  fractional: false,
});

export const INSTRUMENT_UNIVERSE: readonly Instrument[] = [
  crypto('BTC', 'Bitcoin', '91250.37', '0.01', '0.00001'),
  crypto('ETH', 'Ethereum', '3021.45', '0.01', '0.0001'),
  crypto('BNB', 'BNB', '882.16', '0.01', '0.001'),
  crypto('SOL', 'Solana', '139.72', '0.01', '0.001'),
  crypto('XRP', 'XRP', '2.2147', '0.0001', '0.1'),
  crypto('ADA', 'Cardano', '0.4186', '0.0001', '0.1'),
  crypto('DOGE', 'Dogecoin', '0.15243', '0.00001', '1'),
  crypto('TRX', 'TRON', '0.2791', '0.0001', '0.1'),
  crypto('AVAX', 'Avalanche', '14.38', '0.01', '0.01'),
  crypto('LINK', 'Chainlink', '13.27', '0.01', '0.01'),
  crypto('DOT', 'Polkadot', '2.491', '0.001', '0.01'),
  crypto('LTC', 'Litecoin', '84.63', '0.01', '0.001'),

  us('AAPL', 'NASDAQ', 'Apple Inc.', '276.97'),
  us('MSFT', 'NASDAQ', 'Microsoft Corporation', '485.5'),
  us('NVDA', 'NASDAQ', 'NVIDIA Corporation', '180.26'),
  us('AMZN', 'NASDAQ', 'Amazon.com, Inc.', '229.67'),
  us('GOOGL', 'NASDAQ', 'Alphabet Inc. Class A', '318.47'),
  us('META', 'NASDAQ', 'Meta Platforms, Inc. Class A', '630.12'),
  us('TSLA', 'NASDAQ', 'Tesla, Inc.', '420.75'),
  us('AVGO', 'NASDAQ', 'Broadcom Inc.', '380.62'),
  us('COST', 'NASDAQ', 'Costco Wholesale Corporation', '915.38'),
  us('NFLX', 'NASDAQ', 'Netflix, Inc.', '107.54'),
  us('AMD', 'NASDAQ', 'Advanced Micro Devices, Inc.', '215.31'),
  us('WMT', 'NASDAQ', 'Walmart Inc.', '108.21'), // moved its listing from the NYSE to Nasdaq in December 2025
  us('BRK.B', 'NYSE', 'Berkshire Hathaway Inc. Class B', '505.34'),
  us('JPM', 'NYSE', 'JPMorgan Chase & Co.', '310.42'),
  us('V', 'NYSE', 'Visa Inc. Class A', '332.58'),
  us('MA', 'NYSE', 'Mastercard Incorporated Class A', '545.83'),
  us('XOM', 'NYSE', 'Exxon Mobil Corporation', '117.29'),
  us('JNJ', 'NYSE', 'Johnson & Johnson', '205.14'),
  us('PG', 'NYSE', 'The Procter & Gamble Company', '148.93'),
  us('HD', 'NYSE', 'The Home Depot, Inc.', '355.16'),
  us('LLY', 'NYSE', 'Eli Lilly and Company', '1050.05'),
  us('KO', 'NYSE', 'The Coca-Cola Company', '72.41'),
  us('ORCL', 'NYSE', 'Oracle Corporation', '200.13'),
  us('BAC', 'NYSE', 'Bank of America Corporation', '52.61'),
  us('SPY', 'NYSE ARCA', 'SPDR S&P 500 ETF Trust', '675.24'),
  us('QQQ', 'NASDAQ', 'Invesco QQQ Trust, Series 1', '610.53'),
  us('IWM', 'NYSE ARCA', 'iShares Russell 2000 ETF', '245.32'),
  us('DIA', 'NYSE ARCA', 'SPDR Dow Jones Industrial Average ETF Trust', '475.61'),
  us('VTI', 'NYSE ARCA', 'Vanguard Total Stock Market ETF', '335.44'),
  us('GLD', 'NYSE ARCA', 'SPDR Gold Shares', '380.19'),

  krx('005930', 'Samsung Electronics', '96500'),
  krx('000660', 'SK hynix', '521000'),
  krx('373220', 'LG Energy Solution', '392500'),
  krx('207940', 'Samsung Biologics', '1083000'),
  krx('005380', 'Hyundai Motor', '254500'),
  krx('000270', 'Kia', '112800'),
  krx('068270', 'Celltrion', '181300'),
  krx('035420', 'NAVER', '252000'),
  krx('005490', 'POSCO Holdings', '303500'),
  krx('105560', 'KB Financial Group', '116900'),
  krx('055550', 'Shinhan Financial Group', '71400'),
  krx('012330', 'Hyundai Mobis', '306000'),
  krx('035720', 'Kakao', '58700'),
  krx('051910', 'LG Chem', '352500'),
  krx('006400', 'Samsung SDI', '262000'),
  krx('028260', 'Samsung C&T', '224500'),
  krx('012450', 'Hanwha Aerospace', '912000'),
  krx('329180', 'HD Hyundai Heavy Industries', '547000'),
  krx('086790', 'Hana Financial Group', '88300'),
  krx('015760', 'Korea Electric Power', '42350'),
];
