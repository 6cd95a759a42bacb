// Daily bars: reading them, the operator's import (JSON or CSV, all or nothing), and the demo
// data an empty database gets when DEMO_DATA is on.
import type { TAssetClass } from '../../contracts/common.ts';
import type { TOhlcvImport, TOhlcvImportResult, TOhlcvQuery, TOhlcvResponse } from '../../contracts/marketdata.ts';
import { recordAudit, type RequestOrigin } from '../audit/log.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/client.ts';
import type { InstrumentRow } from '../db/schema/index.ts';
import { AppError } from '../errors.ts';
import type { Instruments } from '../instruments/instruments.ts';
import { listInstruments } from '../instruments/queries.ts';
import { lastOpenedSessionDate } from '../markets/calendar.ts';
import type { Logger } from '../observability/logger.ts';
import { checkedImportBars } from './import-check.ts';
import { countBars, deleteBarsOfSource, readBars, upsertBars } from './queries.ts';
import { syntheticBars } from './synthetic.ts';

export const SYNTHETIC = 'synthetic';
const IMPORTED = 'import';
const DEMO_FROM = '2015-01-01';

const unknownSymbol = (message: string) => new AppError('VALIDATION_ERROR', message, { errors: [{ path: 'symbol', message }] });

export type MarketData = ReturnType<typeof createMarketData>;

export const createMarketData = ({ db, clock, logger, instruments }: { db: Db; clock: Clock; logger: Logger; instruments: Instruments }) => {
  const instrumentOf = async (assetClass: TAssetClass, symbol: string): Promise<InstrumentRow> => {
    const instrument = await instruments.resolve({ symbol, assetClass });
    if (!instrument) throw unknownSymbol(`${symbol.slice(0, 32)} is not a registered ${assetClass} instrument`);
    return instrument;
  };

  const read = async ({ query }: { query: TOhlcvQuery }): Promise<TOhlcvResponse> => {
    const instrument = await instrumentOf(query.asset_class, query.symbol);
    const rows = await readBars(db, { assetClass: instrument.assetClass, symbol: instrument.symbol, from: query.from, to: query.to });
    return {
      asset_class: instrument.assetClass,
      symbol: instrument.symbol,
      currency: instrument.currency,
      bars: rows.map((row) => ({
        date: row.date,
        open: Number(row.open),
        high: Number(row.high),
        low: Number(row.low),
        close: Number(row.close),
        adj_close: row.adjClose === null ? null : Number(row.adjClose),
        volume: Number(row.volume),
        source: row.source,
      })),
    };
  };

  /**
   * Imports one file's or request's bars for one instrument: every row is checked first, and a
   * single bad row writes nothing. Re-importing a date replaces it; the instrument's synthetic
   * bars go, since real bars replace demo data.
   */
  const importBars = async ({ actor, input, origin }: { actor: { id: number } | null; input: TOhlcvImport; origin?: RequestOrigin }): Promise<TOhlcvImportResult> => {
    const instrument = await instrumentOf(input.asset_class, input.symbol);
    const bars = checkedImportBars(input);
    const key = { assetClass: instrument.assetClass, symbol: instrument.symbol };
    const at = clock.now();
    const replaced = await db.transaction(async (tx) => {
      const removed = await deleteBarsOfSource(tx, { ...key, source: SYNTHETIC });
      await upsertBars(tx, { ...key, bars, source: IMPORTED, at });
      await recordAudit(tx, {
        action: 'marketdata.import',
        actorUserId: actor?.id ?? null,
        origin,
        data: { asset_class: instrument.assetClass, symbol: instrument.symbol, count: bars.length, format: input.csv === undefined ? 'json' : 'csv' },
        at,
      });
      return removed;
    });
    return {
      asset_class: instrument.assetClass,
      symbol: instrument.symbol,
      imported: bars.length,
      replaced_synthetic: replaced,
      first_date: bars[0]!.date,
      last_date: bars[bars.length - 1]!.date,
    };
  };

  /** Deterministic synthetic bars for every instrument, into a database that has no bars at all. */
  const seedDemoIfEmpty = async (): Promise<number> => {
    if ((await countBars(db)) > 0) return 0;
    const at = clock.now();
    let written = 0;
    for (let page = 1; ; page++) {
      const { rows } = await listInstruments(db, { page, size: 100 });
      for (const instrument of rows) {
        const bars = syntheticBars({
          symbol: instrument.symbol,
          assetClass: instrument.assetClass,
          referencePrice: instrument.referencePrice,
          tickSize: instrument.tickSize,
          from: DEMO_FROM,
          // Up to the last session that has opened: no bar for a session still to come today.
          to: lastOpenedSessionDate({ assetClass: instrument.assetClass, at }),
          seed: 'demo',
        });
        written += await upsertBars(db, { assetClass: instrument.assetClass, symbol: instrument.symbol, bars, source: SYNTHETIC, at });
      }
      if (rows.length < 100) break;
    }
    logger.info({ bars: written }, 'demo bars seeded');
    return written;
  };

  return { read, importBars, seedDemoIfEmpty };
};
