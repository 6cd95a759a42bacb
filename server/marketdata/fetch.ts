// Daily bars fetched from a provider, then imported as a file's would be: the broker of the key a
// user holds for the asset class (the US broker's data API, the KR broker's daily chart, the
// crypto exchange's OHLCV through ccxt). Reading bars places nothing, so it works in either broker
// mode; the key says which venue (its base_url, its exchange) and whose request budget is spent.
import type { TOhlcvImportResult } from '../../contracts/marketdata.ts';
import type { TAssetClass } from '../../contracts/common.ts';
import type { RealAdapters } from '../brokers/real/adapters.ts';
import { brokerError } from '../brokers/errors.ts';
import type { Clock } from '../clock.ts';
import { AppError } from '../errors.ts';
import type { Instruments } from '../instruments/instruments.ts';
import type { KeyCredentialsReader } from '../keys/credentials.ts';
import type { MarketData } from './marketdata.ts';

/** A calendar date written YYYY-MM-DD (2025-02-30 is not one). */
const isDate = (text: string) => /^\d{4}-\d{2}-\d{2}$/.test(text) && new Date(`${text}T00:00:00Z`).toISOString().startsWith(text);
const DAY_MS = 86_400_000;
/** What is fetched when no start is given: the year up to the end. */
const DEFAULT_SPAN_DAYS = 365;

export interface BarsFetchRequest {
  userId: number;
  assetClass: TAssetClass;
  symbol: string;
  /** Both included, YYYY-MM-DD, the exchange's local dates; `to` is today (UTC) and `from` a year before it when left out. */
  from?: string | undefined;
  to?: string | undefined;
}

export type BarsFetch = ReturnType<typeof createBarsFetch>;

export const createBarsFetch = ({ keys, adapters, instruments, marketData, clock }: { keys: KeyCredentialsReader; adapters: () => RealAdapters; instruments: Instruments; marketData: MarketData; clock: Clock }) => {
  const invalid = (path: string, message: string) => new AppError('VALIDATION_ERROR', `${path}: ${message}`, { errors: [{ path, message }] });

  return async ({ userId, assetClass, symbol, ...range }: BarsFetchRequest): Promise<TOhlcvImportResult> => {
    const to = range.to ?? clock.now().toISOString().slice(0, 10);
    if (!isDate(to)) throw invalid('to', 'must be a date, YYYY-MM-DD');
    const from = range.from ?? new Date(Date.parse(`${to}T00:00:00Z`) - DEFAULT_SPAN_DAYS * DAY_MS).toISOString().slice(0, 10);
    if (!isDate(from)) throw invalid('from', 'must be a date, YYYY-MM-DD');
    if (from > to) throw invalid('from', 'must not be after to');
    const instrument = await instruments.resolve({ symbol, assetClass });
    if (!instrument) throw invalid('symbol', `${symbol.slice(0, 32)} is not a registered ${assetClass} instrument`);
    // A paper key first: its venue serves the same bars, and it spends no live key's budget.
    const key = (await keys.activeKey({ userId, assetClass, mode: 'paper' })) ?? (await keys.activeKey({ userId, assetClass, mode: 'live' }));
    if (!key) throw new AppError('BROKER_NOT_CONFIGURED', `The user has no active ${assetClass} key to fetch bars with`);
    const broker = adapters().build({ userId, assetClass, mode: key.mode, credentials: key.credentials });
    if (!broker.dailyBars) throw new AppError('BROKER_NOT_CONFIGURED', `The ${assetClass} broker serves no daily bars`);
    let bars;
    try {
      bars = await broker.dailyBars(instrument.symbol, from, to);
    } catch (error) {
      throw brokerError(error, 'bars') ?? error;
    }
    if (bars.length === 0) throw new AppError('NOT_FOUND', `The broker has no daily bars of ${instrument.symbol} from ${from} to ${to}`);
    return marketData.importBars({ actor: null, input: { asset_class: instrument.assetClass, symbol: instrument.symbol, bars } });
  };
};
