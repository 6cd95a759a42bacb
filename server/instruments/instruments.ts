// The instrument registry: which instruments exist, their tick and lot rules, and how a symbol a
// caller typed becomes one of them. Reference data, seeded into every empty database.
import type { TAssetClass } from '../../contracts/common.ts';
import type { TInstrument, TInstrumentList, TInstrumentListQuery, TInstrumentUpsert } from '../../contracts/instruments.ts';
import { normaliseSymbol } from '../../contracts/symbols.ts';
import { recordAudit, type RequestOrigin } from '../audit/log.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/client.ts';
import type { InstrumentRow } from '../db/schema/index.ts';
import { AppError } from '../errors.ts';
import type { ChangeFeed } from '../events/changes.ts';
import type { Logger } from '../observability/logger.ts';
import { countInstruments, findInstrument, insertMissingInstruments, listInstruments, upsertInstrument } from './queries.ts';
import { krxTickSize } from './ticks.ts';
import { INSTRUMENT_UNIVERSE } from './universe.ts';

export const toInstrument = (row: InstrumentRow): TInstrument => ({
  symbol: row.symbol,
  asset_class: row.assetClass,
  exchange: row.exchange,
  currency: row.currency,
  name: row.name,
  reference_price: Number(row.referencePrice),
  tick_rule: row.tickRule,
  tick_size: Number(row.tickSize),
  lot_size: Number(row.lotSize),
  fractional: row.fractional,
  updated_at: row.updatedAt.toISOString(),
});

/** A JSON number as an exact decimal string: its shortest round-trip form, never a float sum. */
const decimalOf = (value: number): string => String(value);

const invalid = (path: string, message: string) => new AppError('VALIDATION_ERROR', `${path}: ${message}`, { errors: [{ path, message }] });

export type Instruments = ReturnType<typeof createInstruments>;

export const createInstruments = ({ db, clock, logger, changes }: { db: Db; clock: Clock; logger: Logger; changes?: ChangeFeed }) => {
  // Registered instruments by asset class and symbol: every order reads its instrument several
  // times, and the registry changes only by an operator's upsert, which every instance hears of
  // on the change feed. Only found rows are kept: a symbol registered later is read then.
  const cache = new Map<string, Promise<InstrumentRow | undefined>>();
  changes?.subscribe((change) => {
    if (change.kind === 'instruments' || change.kind === 'resync') cache.clear();
  });

  /** The registered instrument of an exact (already normalised) symbol, or undefined. */
  const find = ({ assetClass, symbol }: { assetClass: TAssetClass; symbol: string }): Promise<InstrumentRow | undefined> => {
    const key = `${assetClass}\u0000${symbol}`;
    const cached = cache.get(key);
    if (cached) return cached;
    const lookup = findInstrument(db, { assetClass, symbol });
    cache.set(key, lookup);
    // A miss or a failed read is not kept.
    lookup.then(
      (row) => {
        if (!row && cache.get(key) === lookup) cache.delete(key);
      },
      () => {
        if (cache.get(key) === lookup) cache.delete(key);
      },
    );
    return lookup;
  };

  const list = async ({ query }: { query: TInstrumentListQuery }): Promise<TInstrumentList> => {
    const { rows, total } = await listInstruments(db, { assetClass: query.asset_class, q: query.q, page: query.page, size: query.size });
    return { items: rows.map(toInstrument), total, page: query.page, size: query.size };
  };

  /**
   * The registered instrument a symbol names, in any of its written forms, or undefined (a junk
   * or unregistered symbol: each caller answers with its own code).
   */
  const resolve = async ({ symbol, assetClass }: { symbol: string; assetClass?: TAssetClass }): Promise<InstrumentRow | undefined> => {
    const normalised = normaliseSymbol(symbol, assetClass);
    if (!normalised.ok) return undefined;
    return find({ assetClass: normalised.assetClass, symbol: normalised.symbol });
  };

  const upsert = async ({ actor, input, origin }: { actor: { id: number }; input: TInstrumentUpsert; origin: RequestOrigin }): Promise<{ instrument: TInstrument; created: boolean }> => {
    const normalised = normaliseSymbol(input.symbol, input.asset_class);
    if (!normalised.ok) throw invalid('symbol', normalised.reason);
    const krx = input.asset_class === 'kr_equity';
    if (krx && input.fractional) throw invalid('fractional', 'KRX stocks trade in whole shares');
    if (!krx && input.tick_size === undefined) throw invalid('tick_size', 'is required for crypto and US instruments');
    const referencePrice = decimalOf(input.reference_price);
    const at = clock.now();
    const { row, created } = await db.transaction(async (tx) => {
      const result = await upsertInstrument(tx, {
        assetClass: input.asset_class,
        symbol: normalised.symbol,
        exchange: input.exchange,
        currency: input.currency,
        name: input.name,
        referencePrice,
        tickRule: krx ? 'krx_bands' : 'fixed',
        tickSize: krx ? krxTickSize(referencePrice).toFixed() : decimalOf(input.tick_size!),
        lotSize: decimalOf(input.lot_size),
        fractional: input.fractional,
        at,
      });
      await recordAudit(tx, {
        action: 'admin.instrument_upsert',
        actorUserId: actor.id,
        origin,
        data: { asset_class: input.asset_class, symbol: normalised.symbol, created: result.created },
        at,
      });
      await changes?.publish(tx, { kind: 'instruments' });
      return result;
    });
    // This instance reads its own write at once; the others when the change arrives.
    cache.clear();
    return { instrument: toInstrument(row), created };
  };

  /** Seeds the universe into an empty registry: reference data, in production too. */
  const seedIfEmpty = async (): Promise<number> => {
    if ((await countInstruments(db)) > 0) return 0;
    const at = clock.now();
    const added = await insertMissingInstruments(
      db,
      INSTRUMENT_UNIVERSE.map((instrument) => ({
        assetClass: instrument.asset_class,
        symbol: instrument.symbol,
        exchange: instrument.exchange,
        currency: instrument.currency,
        name: instrument.name,
        referencePrice: instrument.reference_price,
        tickRule: instrument.asset_class === 'kr_equity' ? ('krx_bands' as const) : ('fixed' as const),
        tickSize: instrument.tick_size,
        lotSize: instrument.lot_size,
        fractional: instrument.fractional,
        at,
      })),
    );
    logger.info({ instruments: added }, 'instrument universe seeded');
    return added;
  };

  return { list, resolve, find, upsert, seedIfEmpty };
};
