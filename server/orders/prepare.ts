// The first step of a placement: the request prepared for the gates. Its symbol resolved and
// its quantity checked against the lot (422), the hash a replay must match, a live order's
// preflight read, and the attempt the gates will judge, with the paper account's snapshot read
// beside them where the risk gate judges one.
import { createHash } from 'node:crypto';
import { orderClassOf, type TOrderSource, type TPlaceOrderRequest } from '../../contracts/orders.ts';
import { normaliseSymbol } from '../../contracts/symbols.ts';
import type { RequestOrigin } from '../audit/log.ts';
import { checkLot } from '../brokers/fills.ts';
import { ExactDecimal } from '../decimal.ts';
import type { Db } from '../db/client.ts';
import type { InstrumentRow } from '../db/schema/index.ts';
import { AppError } from '../errors.ts';
import type { Instruments } from '../instruments/instruments.ts';
import type { OrderAttempt } from './attempt.ts';
import type { BrokerOfAccount } from './broker-calls.ts';
import { brokerBracketOf } from './brackets.ts';
import { readPreflight } from './queries.ts';
import { normalisedRequest } from './records.ts';
import { trailRequestOf } from './trailing.ts';

export interface PlaceOptions {
  user: { id: number };
  request: TPlaceOrderRequest;
  /** The request's origin; absent when the service places it itself (a liquidation). */
  origin?: RequestOrigin;
  /** A kill-switch liquidation (a sell only): passes the flag and rate gates. */
  liquidation?: boolean;
  /**
   * A position's close (commands.ts): run once the gates have passed and before the sell is
   * submitted, it cancels the symbol's working sells, which the gates therefore leave out of what
   * the sell may use. A close the gates refuse cancels nothing.
   */
  beforeClose?: () => Promise<void>;
  /** Who placed it, shown in `metadata.source`; `api` unless the bot or a signal webhook did. */
  source?: TOrderSource;
}

/** An attempt as prepared: what the steps after the preparation share. */
export interface PreparedPlacement {
  user: { id: number };
  request: TPlaceOrderRequest;
  origin?: RequestOrigin;
  source: TOrderSource;
  clientOrderId: string;
  /** The symbol in its registered form. */
  symbol: string;
  instrument: InstrumentRow | undefined;
  /** The SHA-256 of the normalised request: a replay must match it. */
  hash: string;
  attempt: OrderAttempt;
  /** A live order's preflight found the id used: the placement answers as a replay. */
  taken: boolean;
}

export interface PreparationDeps {
  db: Db;
  instruments: Instruments;
  forUser: BrokerOfAccount;
  /** Whether the account's submission judges the risk rules under its lock (placement.ts): then no snapshot is read here. */
  judgesRiskUnderLock: (attempt: Pick<OrderAttempt, 'userId' | 'assetClass' | 'mode' | 'closing'>) => boolean;
}

export const createPreparation = ({ db, instruments, forUser, judgesRiskUnderLock }: PreparationDeps) => {
  /** The symbol resolved and the lot checked (422), the request's hash, and what the gates will judge. */
  const prepare = async ({ user, request, origin, clientOrderId, liquidation, beforeClose, source = 'api' }: PlaceOptions & { clientOrderId: string }): Promise<PreparedPlacement> => {
    const assetClass = request.asset_class;
    const mode = request.live_mode ? 'live' : 'paper';
    const instrument = await instruments.resolve({ symbol: request.symbol, assetClass });
    const symbol = instrument?.symbol ?? (normaliseSymbol(request.symbol, assetClass) as { symbol?: string }).symbol ?? request.symbol.toUpperCase();
    if (instrument) {
      const lot = checkLot(new ExactDecimal(request.qty), new ExactDecimal(instrument.lotSize), instrument.fractional);
      if (lot) throw new AppError('VALIDATION_ERROR', `qty: ${lot}`, { errors: [{ path: 'qty', message: lot }] });
    }
    const hash = createHash('sha256').update(JSON.stringify(normalisedRequest(request, symbol))).digest('hex');
    // A paper account's books are read before the gates rather than after them, where the risk
    // gate judges a snapshot (a close): it needs them, and the read is local. A refusal before that
    // gate leaves them unused; a failure of the read is the risk gate's to report, as when it reads
    // them itself. Books that judge the risk rules under their lock need no snapshot.
    const snapshotRead = instrument && mode === 'paper' && !judgesRiskUnderLock({ userId: user.id, assetClass, mode, closing: beforeClose !== undefined });
    const snapshot = snapshotRead ? forUser({ userId: user.id, assetClass, mode }).then((broker) => broker.snapshot({ symbol: instrument.symbol })) : undefined;
    snapshot?.catch(() => undefined);
    // A live order reads, before its gates, whether its id is taken, the account's lock and the
    // user's live flag. A paper order reads none of them (one statement less on the hot path): it
    // needs no live flag, the statement that writes its intent checks the lock and the id, and a
    // copy that reaches the gates answers as a replay wherever it stops.
    const preflight = mode === 'live' ? await readPreflight(db, { userId: user.id, clientOrderId, assetClass }) : undefined;
    const attempt: OrderAttempt = {
      userId: user.id,
      assetClass,
      mode,
      side: request.side,
      qty: new ExactDecimal(request.qty).toFixed(),
      orderType: request.order_type,
      limitPrice: request.limit_price === undefined ? null : String(request.limit_price),
      stopPrice: request.stop_price === undefined ? null : String(request.stop_price),
      trail: trailRequestOf(request),
      bracket: request.bracket ? brokerBracketOf(request.bracket) : null,
      orderClass: orderClassOf(request),
      instrument,
      liveEnabled: preflight?.liveEnabled ?? false,
      lockedUntil: preflight ? preflight.lockedUntil : undefined,
      snapshot,
      claimed: [],
      liquidation: liquidation === true && request.side === 'sell',
      closing: beforeClose !== undefined,
    };
    return { user, request, origin, source, clientOrderId, symbol, instrument, hash, attempt, taken: preflight?.taken === true };
  };
  return prepare;
};
