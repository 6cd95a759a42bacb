// The order service: placement through the five gates with idempotent client order ids and the
// intent written before the broker is called; cancel, reads, positions and account through the
// user's broker; the intake of broker events (fills and statuses in one transaction with their
// audit record); the reconciler that settles intents a crash left without an answer; and the
// in-process publisher of order events.
import { createHash, randomUUID } from 'node:crypto';
import type { TBrokerEvent, TTradingMode } from '../../contracts/brokers.ts';
import { CURRENCY_OF_ASSET_CLASS, ZAssetClass, type TAssetClass } from '../../contracts/common.ts';
import {
  STATUSES_OF_FILTER,
  type TOrderEvent,
  type TOrderListQuery,
  type TOrderResponse,
  type TOrderStatus,
  type TPlaceOrderRequest,
  type TReplaceOrderRequest,
} from '../../contracts/orders.ts';
import { normaliseSymbol } from '../../contracts/symbols.ts';
import type { TAccountResponse } from '../../contracts/simulator.ts';
import { recordAudit, type AuditRecord, type RequestOrigin } from '../audit/log.ts';
import type { Alerts } from '../alerts/index.ts';
import type { EventBus, NewEvent } from '../events/bus.ts';
import { toAccountResponse } from '../brokers/brokers.ts';
import { checkLot, ExactDecimal } from '../brokers/fills.ts';
import { BrokerOrderAmbiguousError, BrokerRejectedError, BrokerUnavailableError, type Broker, type BrokerOrder, type BrokerOrderRequest, type RecordedPlacement } from '../brokers/types.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db, Queryable } from '../db/client.ts';
import { isDatabaseUnavailable } from '../db/errors.ts';
import type { OrderRow } from '../db/schema/index.ts';
import type { OrderInsert } from './queries.ts';
import { AppError } from '../errors.ts';
import type { Instruments } from '../instruments/instruments.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { GateRefusal, MINUTE_SCOPE, minuteClaimOf, minuteLimitError, runGates, type OrderAttempt } from './gates.ts';
import { dayPnlOf } from './day-pnl.ts';
import { emergencyLockError } from './risk.ts';
import { createDayStartEquity } from './risk/day-start-cache.ts';
import { utcDateOf } from './risk/day-start.ts';
import {
  fillsOf,
  findDayStartEquity,
  findAuditedOrder,
  findOrderByClientId,
  insertFill,
  insertIntentRecorded,
  insertOrderIntent,
  listAuditedOrders,
  listUnfinishedOrders,
  listWorkingSymbols,
  markFirstLiveOrder,
  rateWindowStart,
  readPreflight,
  recordAcceptance,
  recordAnswer,
  releaseRate,
  type IntentOutcome,
  type OutboxInsert,
  setLiveEnabled,
  updateOrder,
} from './queries.ts';

/** How long a placement waits for the broker before it counts as unavailable. */
const BROKER_TIMEOUT_MS = 10_000;
/**
 * An intent the broker does not know is settled as never placed only once it is older than this:
 * a younger one may still be on its way to the broker from another instance.
 */
const SETTLE_AFTER_MS = 60_000;
/** How long a duplicate waits for the first copy's answer. */
const REPLAY_WAIT_MS = 15_000;
const TERMINAL = new Set<TOrderStatus>(['filled', 'canceled', 'rejected', 'expired']);

const num = (value: string | null) => (value === null ? null : Number(value));
/** The reason an intent stays pending when several broker orders could be it (see `reconcile`). */
const AMBIGUOUS = 'ambiguous_at_broker';
/** The reason of a pending order whose placement failed with its outcome unknown. */
const UNCONFIRMED = 'broker_unavailable';
/** A refused or failed order has no broker id: it gets one of its own so that it can be listed and read. */
/** The answer to a placement (and to its copies) whose outcome at the broker is not known yet. */
const unconfirmedError = () => new AppError('BROKER_UNAVAILABLE', 'The broker did not answer: the order may have reached it, and stays pending until it is reconciled with the broker');
const localBrokerId = (clientOrderId: string) => `rejected-${clientOrderId}`;

export const toOrderResponse = (row: OrderRow): TOrderResponse => ({
  order_id: row.clientOrderId,
  broker_order_id: row.brokerOrderId ?? localBrokerId(row.clientOrderId),
  client_order_id: row.clientOrderId,
  asset_class: row.assetClass,
  exchange: row.broker,
  symbol: row.symbol,
  side: row.side,
  qty: Number(row.qty),
  filled_qty: Number(row.filledQty),
  avg_fill_price: num(row.avgFillPrice),
  order_type: row.orderType,
  limit_price: num(row.limitPrice),
  stop_price: num(row.stopPrice),
  status: row.status,
  currency: CURRENCY_OF_ASSET_CLASS[row.assetClass],
  submitted_at: row.submittedAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
  bracket: row.bracket ? { take_profit: row.bracket.take_profit, stop_loss: row.bracket.stop_loss, stop_loss_limit: row.bracket.stop_loss_limit } : null,
  metadata: { ...row.metadata, live: row.live, ...(row.reason ? { reason: row.reason } : {}) },
});

/** The request as it will be compared with a replay: symbol forms and defaults settled. */
const normalised = (request: TPlaceOrderRequest, symbol: string) => ({
  asset_class: request.asset_class,
  symbol,
  side: request.side,
  qty: new ExactDecimal(request.qty).toFixed(),
  order_type: request.order_type,
  limit_price: request.limit_price ?? null,
  stop_price: request.stop_price ?? null,
  bracket: request.bracket ? { take_profit: request.bracket.take_profit, stop_loss: request.bracket.stop_loss, stop_loss_limit: request.bracket.stop_loss_limit ?? null } : null,
  time_in_force: request.time_in_force,
  report_uuid: request.report_uuid ?? null,
  live_mode: request.live_mode,
});

const withTimeout = <T>(promise: Promise<T>, ms: number): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer from the broker within ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });

/**
 * What a broker event changes in the order's row, or undefined when it changes nothing. A
 * finished order stays finished whatever arrives late, and a late event never takes back what is
 * already recorded as filled (by the reconciler, say).
 */
const changeOf = (row: OrderRow, event: TBrokerEvent) => {
  const status = TERMINAL.has(row.status) && !TERMINAL.has(event.status) ? row.status : event.status;
  const brokerOrderId = row.brokerOrderId && !row.brokerOrderId.startsWith('rejected-') ? row.brokerOrderId : event.broker_order_id;
  const behind = new ExactDecimal(event.filled_qty).lt(row.filledQty);
  const filledQty = behind ? row.filledQty : event.filled_qty;
  const avgFillPrice = behind ? row.avgFillPrice : event.avg_fill_price;
  // A replace changes what the broker holds (qty, prices), not these fields: it is always news.
  const same =
    event.type !== 'replaced' &&
    !event.fill &&
    status === row.status &&
    brokerOrderId === row.brokerOrderId &&
    new ExactDecimal(filledQty).eq(row.filledQty) &&
    (avgFillPrice === null ? row.avgFillPrice === null : row.avgFillPrice !== null && new ExactDecimal(avgFillPrice).eq(row.avgFillPrice));
  return same ? undefined : { status, brokerOrderId, filledQty, avgFillPrice };
};

/** A broker's `expired` reaches clients as `canceled` with status `expired`. */
const eventTypeOf = (event: TBrokerEvent): TOrderEvent['event_type'] => (event.type === 'expired' ? 'canceled' : event.type);

/** Thrown inside an event's transaction to roll it back when its fill was recorded before. */
class DuplicateFill extends Error {
  override readonly name = 'DuplicateFill';
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface OrderDeps {
  db: Db;
  clock: Clock;
  config: Config;
  logger: Logger;
  metrics: Metrics;
  instruments: Instruments;
  forUser: (account: { userId: number; assetClass: TAssetClass; mode: TTradingMode }) => Promise<Broker>;
  alerts: Alerts;
  events: EventBus;
  /** Whether an operator has suspended live orders (cached; never false by default in production wiring). */
  liveSuspended?: () => boolean;
}

export type Orders = ReturnType<typeof createOrders>;

export const createOrders = ({ db, clock, config, logger, metrics, instruments, forUser, alerts, events, liveSuspended = () => false }: OrderDeps) => {
  const listeners = new Set<(event: TOrderEvent) => void>();
  /** Publishes after commit, to listeners in this process (the events area carries them further). */
  const publish = (event: TOrderEvent) => {
    for (const listener of listeners) {
      try {
        listener(event);
      } catch (error) {
        logger.error({ err: error }, 'order event listener failed');
      }
    }
  };
  const orderEventOf = (row: OrderRow, eventType: TOrderEvent['event_type'], payload: Record<string, unknown>): TOrderEvent => ({
    type: 'order_event',
    event_type: eventType,
    asset_class: row.assetClass,
    broker: row.broker,
    // An order the broker has not answered yet has no broker id: a placeholder says so.
    broker_order_id: row.brokerOrderId ?? (row.status === 'pending' ? `pending-${row.clientOrderId}` : localBrokerId(row.clientOrderId)),
    client_order_id: row.clientOrderId,
    symbol: row.symbol,
    filled_qty: Number(row.filledQty),
    avg_fill_price: num(row.avgFillPrice),
    status: row.status,
    received_at: clock.now().toISOString(),
    payload,
  });

  /** The outbox rows of order events (and of a fill's trade, for /ws/live). */
  const outboxRowsOf = (row: Pick<OrderRow, 'userId' | 'symbol' | 'assetClass' | 'side'>, frames: TOrderEvent[], fill?: NonNullable<TBrokerEvent['fill']>): OutboxInsert[] => {
    const at = clock.now();
    const rows: NewEvent[] = frames.map((frame) => ({ userId: row.userId, channel: 'orders', frame, at }));
    if (fill) {
      const trade = { type: 'trade', symbol: row.symbol, asset_class: row.assetClass, side: row.side, amount: Number(fill.qty), price: Number(fill.price), fee: Number(fill.fee), ts: at.toISOString() };
      rows.push({ userId: row.userId, channel: 'live', frame: trade, at });
    }
    return rows;
  };

  /**
   * Writes order events (and a fill's trade) to the outbox in the caller's transaction, so each is
   * delivered if and only if the change it reports commits; returns them for publish() after.
   */
  const emit = async (tx: Queryable, row: OrderRow, frames: TOrderEvent[], fill?: NonNullable<TBrokerEvent['fill']>): Promise<TOrderEvent[]> => {
    await events.append(tx, outboxRowsOf(row, frames, fill));
    return frames;
  };
  /** After the commit that wrote them to the outbox: wakes its readers and tells this process's listeners. */
  const publishAll = (frames: TOrderEvent[]) => {
    if (frames.length === 0) return;
    events.wake();
    for (const frame of frames) publish(frame);
  };

  type AuditedOrder = Pick<OrderRow, 'userId' | 'clientOrderId' | 'assetClass' | 'broker' | 'live' | 'brokerOrderId'>;
  const auditRecordOf = (row: AuditedOrder, action: string, data: Record<string, unknown>, origin?: RequestOrigin): AuditRecord => ({
    action,
    actorUserId: origin ? row.userId : null,
    subjectUserId: row.userId,
    origin,
    data: { client_order_id: row.clientOrderId, broker_order_id: row.brokerOrderId, asset_class: row.assetClass, broker: row.broker, live: row.live, ...data },
    at: clock.now(),
  });
  const audit = (tx: Queryable, row: AuditedOrder, action: string, data: Record<string, unknown>, origin?: RequestOrigin) => recordAudit(tx, auditRecordOf(row, action, data, origin));

  const gateDeps = { db, clock, config, forUser, dayStart: createDayStartEquity(db), liveSuspended };

  const countGate = (assetClass: TAssetClass, gate: string, outcome: 'passed' | 'refused' | 'failed') => metrics.ordersByGate.labels({ asset_class: assetClass, gate, outcome }).inc();

  /** The answer a replay of an order gets: its current state, or the refusal it ended with. */
  const replayOf = async (userId: number, clientOrderId: string, hash: string): Promise<TOrderResponse> => {
    // A wait bound in real time, not a rule of the domain: the injected clock may stand still.
    const deadline = performance.now() + REPLAY_WAIT_MS;
    let row = await findOrderByClientId(db, { userId, clientOrderId });
    if (row && row.requestHash !== hash) throw new AppError('IDEMPOTENCY_CONFLICT', 'This client_order_id was used for a different order');
    // A copy that arrives while the first is still with the broker waits for its answer; one whose
    // placement failed with its outcome unknown has no answer to wait for until it is reconciled.
    while (row?.status === 'pending' && row.reason !== UNCONFIRMED && performance.now() < deadline) {
      await sleep(20);
      row = await findOrderByClientId(db, { userId, clientOrderId });
    }
    if (!row) throw new AppError('INTERNAL_ERROR', 'The order vanished while a duplicate waited for it');
    if (row.status === 'pending' && row.reason === UNCONFIRMED) throw unconfirmedError();
    if (row.status === 'rejected' && row.reason === 'broker_unavailable') throw new AppError('BROKER_UNAVAILABLE', 'The broker could not be reached');
    if (row.status === 'rejected') throw new AppError('BROKER_REJECTED', `The broker refused the order: ${row.reason ?? 'rejected'}`);
    return toOrderResponse(row);
  };

  const releaseClaims = async (attempt: OrderAttempt) => {
    for (const scope of attempt.claimed) await releaseRate(db, { userId: attempt.userId, scope });
  };

  /**
   * A copy of a request that raced its original past the first lookup is a replay after all:
   * it answers as one and does not count toward the per-minute limit.
   */
  const asReplay = async (attempt: OrderAttempt, clientOrderId: string, hash: string) => {
    await releaseClaims(attempt);
    if (attempt.countedThisMinute) await releaseRate(db, { userId: attempt.userId, scope: MINUTE_SCOPE });
    return replayOf(attempt.userId, clientOrderId, hash);
  };

  /** Placements under way in this process, by user and client order id. */
  const inFlight = new Map<string, Promise<TOrderResponse>>();
  /**
   * Broker events that arrived while their order's placement was under way (a simulated market
   * order's fill comes before the broker's answer returns), by the same key: the placement
   * records them with the answer when it can, and the intake applies whatever it leaves.
   */
  const early = new Map<string, TBrokerEvent[]>();

  /**
   * A paper order's acceptance with the broker events that came with or before it: the order's
   * state after them, their fills, audit records and events, ready for one statement.
   */
  const answerOf = (intent: OrderRow, accepted: BrokerOrder, events: readonly TBrokerEvent[]) => {
    const acceptedRow: OrderRow = { ...intent, brokerOrderId: accepted.brokerOrderId, status: 'accepted', updatedAt: clock.now() };
    const frames = [orderEventOf(acceptedRow, 'accepted', { broker_order: { ...accepted, submittedAt: accepted.submittedAt.toISOString(), updatedAt: accepted.updatedAt.toISOString() } })];
    const audits = [auditRecordOf(acceptedRow, 'order.accepted', { broker_status: accepted.status })];
    const outbox = outboxRowsOf(acceptedRow, frames);
    const fills: Parameters<typeof recordAnswer>[3]['fills'] = [];
    let row = acceptedRow;
    for (const event of events) {
      // A broker reports every order of the account: only this order's events belong here.
      if (event.client_order_id !== intent.clientOrderId) continue;
      const change = changeOf(row, event);
      if (!change) continue;
      const { fill } = event;
      const recordsFill = fill && !new ExactDecimal(row.filledQty).plus(fill.qty).gt(event.filled_qty);
      row = { ...row, ...change, updatedAt: clock.now() };
      if (recordsFill) fills.push({ executionId: fill.execution_id, qty: fill.qty, price: fill.price, fee: fill.fee, at: new Date(event.at) });
      const frame = orderEventOf(row, eventTypeOf(event), event);
      frames.push(frame);
      audits.push(auditRecordOf(row, `order.${event.type}`, { event_type: event.type, status: event.status, payload: event }));
      outbox.push(...outboxRowsOf(row, [frame], recordsFill ? fill : undefined));
    }
    const { brokerOrderId, status, filledQty, avgFillPrice, updatedAt } = row;
    return { acceptedRow, frames, change: { brokerOrderId, status, filledQty, avgFillPrice, updatedAt }, records: { fills, audit: audits, events: outbox } };
  };

  /**
   * Records the answer in one statement, in `q` (the broker's own transaction where it offers
   * one). Undefined, with nothing written, when the order is no longer pending.
   */
  const recordAnswerOf = async (q: Queryable, intent: OrderRow, accepted: BrokerOrder, events: readonly TBrokerEvent[]): Promise<{ row: OrderRow; frames: TOrderEvent[] } | undefined> => {
    const answer = answerOf(intent, accepted, events);
    return (await recordAnswer(q, intent, answer.change, answer.records)) ? { row: answer.acceptedRow, frames: answer.frames } : undefined;
  };

  /**
   * Records a paper order's acceptance together with the broker events that came before it (the
   * intake kept them aside). Undefined (nothing written, the events left to the intake) when the
   * order is no longer pending.
   */
  const recordWithEarlyEvents = async (intent: OrderRow, accepted: BrokerOrder): Promise<{ row: OrderRow; frames: TOrderEvent[] } | undefined> => {
    const key = `${intent.userId}:${intent.clientOrderId}`;
    const taken = early.get(key) ?? [];
    early.delete(key);
    const giveBack = () => early.set(key, [...taken, ...(early.get(key) ?? [])]);
    const written = await recordAnswerOf(db, intent, accepted, taken).catch((error: unknown) => {
      giveBack();
      throw error;
    });
    if (!written) giveBack();
    return written;
  };

  /** The intake also received the events an answer recorded itself: they are done with. */
  const forgetEarly = (key: string, recorded: readonly TBrokerEvent[]) => {
    const left = (early.get(key) ?? []).filter((event) => !recorded.includes(event));
    if (left.length > 0) early.set(key, left);
    else early.delete(key);
  };

  /**
   * Places an order, or answers as a replay. A copy that arrives while its original is still
   * being placed in this process waits for it and answers the same (or its refusal), so copies
   * never run the gates (nor count toward the rate limit) beside it.
   */
  const place = async (opts: PlaceOptions): Promise<TOrderResponse> => {
    const clientOrderId = opts.request.client_order_id ?? randomUUID().replaceAll('-', '');
    const key = `${opts.user.id}:${clientOrderId}`;
    const original = inFlight.get(key);
    if (original) {
      const failure = await original.then(
        () => undefined,
        (error: unknown) => error,
      );
      if (failure && !(await findOrderByClientId(db, { userId: opts.user.id, clientOrderId }))) throw failure;
    }
    const run = placeOnce({ ...opts, clientOrderId });
    inFlight.set(key, run);
    try {
      return await run;
    } finally {
      if (inFlight.get(key) === run) inFlight.delete(key);
    }
  };

  const placeOnce = async ({ user, request, origin, clientOrderId, liquidation }: PlaceOptions & { clientOrderId: string }): Promise<TOrderResponse> => {
    const assetClass = request.asset_class;
    const mode: TTradingMode = request.live_mode ? 'live' : 'paper';
    const instrument = await instruments.resolve({ symbol: request.symbol, assetClass });
    const symbol = instrument?.symbol ?? (normaliseSymbol(request.symbol, assetClass) as { symbol?: string }).symbol ?? request.symbol.toUpperCase();
    if (instrument) {
      const lot = checkLot(new ExactDecimal(request.qty), new ExactDecimal(instrument.lotSize), instrument.fractional);
      if (lot) throw new AppError('VALIDATION_ERROR', `qty: ${lot}`, { errors: [{ path: 'qty', message: lot }] });
    }
    const hash = createHash('sha256').update(JSON.stringify(normalised(request, symbol))).digest('hex');
    // A paper account's books are read beside the preflight rather than after it: the risk gate
    // needs them, and the read is local. A refusal before that gate leaves them unused; a failure
    // of the read is the risk gate's to report, as when it reads them itself.
    const snapshot = instrument && mode === 'paper' ? forUser({ userId: user.id, assetClass, mode }).then((broker) => broker.snapshot({ symbol: instrument.symbol })) : undefined;
    snapshot?.catch(() => undefined);
    // A live order reads, before its gates, whether its id is taken, the account's lock and the
    // user's live flag. A paper order reads none of them (one statement less on the hot path): it
    // needs no live flag, the statement that writes its intent checks the lock and the id, and a
    // copy that reaches the gates answers as a replay wherever it stops.
    const preflight = mode === 'live' ? await readPreflight(db, { userId: user.id, clientOrderId, assetClass }) : undefined;
    if (preflight?.taken) return replayOf(user.id, clientOrderId, hash);

    const attempt: OrderAttempt = {
      userId: user.id,
      assetClass,
      mode,
      side: request.side,
      qty: new ExactDecimal(request.qty).toFixed(),
      orderType: request.order_type,
      limitPrice: request.limit_price === undefined ? null : String(request.limit_price),
      stopPrice: request.stop_price === undefined ? null : String(request.stop_price),
      bracket: request.bracket ? { takeProfit: String(request.bracket.take_profit), stopLoss: String(request.bracket.stop_loss) } : null,
      instrument,
      liveEnabled: preflight?.liveEnabled ?? false,
      lockedUntil: preflight ? preflight.lockedUntil : undefined,
      snapshot,
      claimed: [],
      liquidation: liquidation === true && request.side === 'sell',
    };
    const identity = { userId: user.id, clientOrderId, assetClass, broker: 'simulator', live: mode === 'live', brokerOrderId: null };
    /** Refusals at gates 1-4 create no order: the id stays unused, the refusal is audited. */
    const refuse = async (refusal: GateRefusal): Promise<never> => {
      await releaseClaims(attempt);
      await audit(db, identity, 'order.refused', { gate: refusal.gate, code: refusal.error.code, reason: refusal.error.message, symbol }, origin);
      countGate(assetClass, refusal.gate, 'refused');
      throw refusal.error;
    };
    try {
      await runGates(attempt, gateDeps);
    } catch (error) {
      if (!(error instanceof GateRefusal)) throw error;
      if (await findOrderByClientId(db, { userId: user.id, clientOrderId })) return asReplay(attempt, clientOrderId, hash);
      return refuse(error);
    }
    const broker = attempt.broker!;
    const at = clock.now();
    const metadata: Record<string, unknown> = {
      ...(attempt.liquidation ? { liquidation: true } : {}),
      ...(request.report_uuid ? { report_uuid: request.report_uuid } : {}),
      ...(request.order_type === 'stop_limit' ? { stop_limit_price: request.limit_price } : {}),
    };
    // The intent and its audit record, before the broker is called: a crash after this point is
    // found by the reconciler, never lost.
    const values: OrderInsert & OrderRow = {
      userId: user.id,
      clientOrderId,
      brokerOrderId: null,
      assetClass,
      live: mode === 'live',
      broker: broker.name,
      symbol,
      side: request.side,
      orderType: request.order_type,
      timeInForce: request.time_in_force,
      qty: attempt.qty,
      filledQty: '0',
      avgFillPrice: null,
      limitPrice: attempt.limitPrice,
      stopPrice: attempt.stopPrice,
      status: 'pending',
      reason: null,
      bracket: request.bracket ? { take_profit: request.bracket.take_profit, stop_loss: request.bracket.stop_loss, stop_loss_limit: request.bracket.stop_loss_limit ?? null } : null,
      metadata,
      requestHash: hash,
      submittedAt: at,
      updatedAt: at,
    };
    // The intent in one statement, with the minute's rate unit when it is still to be claimed and
    // the emergency lock when it was not read before the gates: a full window or a running lock
    // writes nothing, and nor does a copy that won the race for the id.
    const claim = attempt.minuteClaimDeferred ? minuteClaimOf(attempt, gateDeps) : undefined;
    const placedFrames = [orderEventOf(values, 'placed', { request: normalised(request, symbol) })];
    const writeIntent = (q: Queryable) =>
      insertIntentRecorded(q, values, {
        audit: [auditRecordOf(values, 'order.placed', { symbol, side: request.side, qty: attempt.qty, order_type: request.order_type }, origin)],
        events: outboxRowsOf(values, placedFrames),
        claim,
        // A lock not read before the gates is checked here (a liquidation passes it).
        lockCheck: attempt.lockedUntil === undefined && !attempt.liquidation ? { at } : undefined,
      });
    /**
     * What a committed intent statement means for the placement: undefined when the intent stands
     * (the order goes to the broker), else the answer (a full window's 429, a running lock's 422,
     * or a copy's replay).
     */
    const intentAnswer = async ({ claimed, placed, lockedUntil }: IntentOutcome): Promise<TOrderResponse | undefined> => {
      if (claim && claimed) attempt.countedThisMinute = true;
      const windowFull = claim && !claimed ? claim : undefined;
      // Refused at the last moment, unless it is a copy of an order made meanwhile: a replay.
      if ((windowFull || lockedUntil) && (await findOrderByClientId(db, { userId: user.id, clientOrderId }))) return asReplay(attempt, clientOrderId, hash);
      // The rate limit's answer comes before the risk gate's, as the gates run.
      if (windowFull) {
        const windowStartedAt = await rateWindowStart(db, { userId: user.id, scope: windowFull.scope, at: windowFull.at });
        return refuse(new GateRefusal('rate_limit', minuteLimitError(windowStartedAt, windowFull.at, config)));
      }
      if (lockedUntil) {
        // The risk gate's first rule, checked with the write: its refusal, as the gate gives it.
        attempt.lockedUntil = lockedUntil;
        return refuse(new GateRefusal('risk', emergencyLockError(lockedUntil)));
      }
      // A copy of this request won the race for the id: answer as its replay.
      if (!placed) return asReplay(attempt, clientOrderId, hash);
      countGate(assetClass, 'risk', 'passed');
      publishAll(placedFrames);
      return undefined;
    };
    const intent: OrderRow = values;
    const brokerRequest: BrokerOrderRequest = {
      clientOrderId,
      symbol,
      side: request.side,
      qty: attempt.qty,
      // stop_limit is collapsed to stop at the broker layer; its limit stays in metadata.
      orderType: request.order_type === 'stop_limit' ? 'stop' : request.order_type,
      timeInForce: request.time_in_force,
      limitPrice: request.order_type === 'stop_limit' ? null : attempt.limitPrice,
      stopPrice: attempt.stopPrice,
      bracket: request.bracket
        ? { takeProfit: String(request.bracket.take_profit), stopLoss: String(request.bracket.stop_loss), stopLossLimit: request.bracket.stop_loss_limit == null ? null : String(request.bracket.stop_loss_limit) }
        : null,
      metadata,
    };

    // A paper order at a broker whose books share our database: the intent, the broker's
    // acceptance and our record of it (with the fill on arrival) commit together, or none of them
    // does, so there is no moment at which the broker holds an order we have no record of. No timer
    // here: one that fired while the transaction ran on would mark the order failed and then see it
    // commit. Anywhere else the intent commits first, and the broker is called after.
    let placement: RecordedPlacement<{ row: OrderRow; frames: TOrderEvent[] } | undefined> | undefined;
    let placementFailure: { error: unknown } | undefined;
    if (broker.placeOrderRecorded && !intent.live && instrument) {
      let written: IntentOutcome | undefined;
      let answered: readonly TBrokerEvent[] = [];
      try {
        placement = await broker.placeOrderRecorded(brokerRequest, {
          intent: async (tx) => {
            written = await writeIntent(tx);
            return written.claimed && written.placed;
          },
          record: (tx, answer) => {
            answered = answer.events;
            return recordAnswerOf(tx, intent, answer.order, answer.events);
          },
        });
      } catch (error) {
        if (isDatabaseUnavailable(error)) {
          // The database failed, not the broker: the placement's one transaction committed whole
          // (its COMMIT went out before the connection broke) or not at all. Committed, it is this
          // order's answer; else nothing of the order stands, and the caller's retry with the same
          // client order id places it (503, or 503 again while the database stays away).
          if (await findOrderByClientId(db, { userId: user.id, clientOrderId })) return asReplay(attempt, clientOrderId, hash);
          await releaseClaims(attempt);
          throw error;
        }
        // Nothing committed, the intent neither: it is written now, and the failure marks it below.
        placementFailure = { error };
        written = undefined;
      }
      const answer = await intentAnswer(written ?? (await writeIntent(db)));
      if (answer) return answer;
      if (placement?.outcome === 'taken' && placement.recorded) forgetEarly(`${user.id}:${clientOrderId}`, answered);
    } else {
      const answer = await intentAnswer(await writeIntent(db));
      if (answer) return answer;
    }

    let accepted: BrokerOrder;
    let recordedWithBroker: { row: OrderRow; frames: TOrderEvent[] } | undefined;
    /** Whether the call went to a broker outside our database, whose failure can leave the outcome unknown. */
    let external = false;
    try {
      if (placementFailure) throw placementFailure.error;
      if (placement) {
        if (placement.outcome === 'refused') throw placement.error;
        // A withdrawn placement's intent did not stand: intentAnswer answered it above.
        if (placement.outcome !== 'taken') throw new Error('a withdrawn placement reached the broker step');
        accepted = placement.order;
        recordedWithBroker = placement.recorded;
      } else {
        if (!instrument) throw new BrokerRejectedError(`unknown symbol ${symbol}`);
        external = true;
        accepted = await withTimeout(broker.placeOrder(brokerRequest), BROKER_TIMEOUT_MS);
      }
    } catch (error) {
      if (external && !(error instanceof BrokerRejectedError) && !(error instanceof BrokerUnavailableError && error.notTaken)) {
        // The request may have reached the broker (a timeout, a connection broken after sending, a
        // 5xx): the order stays pending, and the reconciler (every minute) asks the broker for it by
        // its client order id, links what it finds, and settles it as not at the broker otherwise.
        // Its rate units stay counted: it may be an order.
        const detail = error instanceof Error ? error.message : String(error);
        await db.transaction(async (tx) => {
          const updated = await updateOrder(tx, intent, { reason: UNCONFIRMED, updatedAt: clock.now() });
          await audit(tx, updated!, 'order.unconfirmed', { gate: 'broker', code: 'BROKER_UNAVAILABLE', reason: detail, decision: 'pending until reconciled with the broker' });
        });
        countGate(assetClass, 'broker', 'failed');
        logger.warn({ err: error, clientOrderId }, 'broker call failed with its outcome unknown; the order stays pending for reconciliation');
        throw unconfirmedError();
      }
      await releaseClaims(attempt);
      const refused = error instanceof BrokerRejectedError;
      const reason = refused ? error.message : 'broker_unavailable';
      const frames = await db.transaction(async (tx) => {
        const updated = await updateOrder(tx, intent, { status: 'rejected', reason, brokerOrderId: localBrokerId(clientOrderId), updatedAt: clock.now() });
        await audit(tx, updated!, 'order.rejected', { gate: 'broker', code: refused ? 'BROKER_REJECTED' : 'BROKER_UNAVAILABLE', reason: refused ? reason : String(error instanceof Error ? error.message : error) });
        return emit(tx, updated!, [orderEventOf(updated!, 'rejected', { reason })]);
      });
      countGate(assetClass, 'broker', refused ? 'refused' : 'failed');
      publishAll(frames);
      if (refused) throw new AppError('BROKER_REJECTED', `The broker refused the order: ${reason}`);
      logger.warn({ err: error, clientOrderId }, 'broker call failed');
      throw new AppError('BROKER_UNAVAILABLE', 'The broker could not be reached; the order was not placed');
    }
    countGate(assetClass, 'broker', 'passed');
    const recorded = recordedWithBroker ?? (intent.live ? undefined : await recordWithEarlyEvents(intent, accepted));
    if (recorded) {
      publishAll(recorded.frames);
      return { ...toOrderResponse(recorded.row), broker_order_id: accepted.brokerOrderId, status: 'accepted', filled_qty: 0, avg_fill_price: null };
    }
    const { row, firstLive, frames } = await db.transaction(async (tx) => {
      const recorded: OrderRow = { ...intent, brokerOrderId: accepted.brokerOrderId, status: 'accepted', updatedAt: clock.now() };
      const acceptedEvent = orderEventOf(recorded, 'accepted', { broker_order: { ...accepted, submittedAt: accepted.submittedAt.toISOString(), updatedAt: accepted.updatedAt.toISOString() } });
      if (!intent.live) {
        // Sent together: one round trip for the update, its audit record and its event.
        const [updated, , written] = await Promise.all([
          recordAcceptance(tx, intent, { brokerOrderId: accepted.brokerOrderId, at: recorded.updatedAt }),
          audit(tx, recorded, 'order.accepted', { broker_status: accepted.status }),
          emit(tx, recorded, [acceptedEvent]),
        ]);
        return { row: updated!, firstLive: false, frames: written };
      }
      const updated = await recordAcceptance(tx, intent, { brokerOrderId: accepted.brokerOrderId, at: recorded.updatedAt });
      const first = await markFirstLiveOrder(tx, { userId: user.id, assetClass, at });
      await audit(tx, recorded, 'order.accepted', { broker_status: accepted.status, ...(first ? { first_live_order: true } : {}) });
      return { row: updated!, firstLive: first, frames: await emit(tx, recorded, [acceptedEvent]) };
    });
    publishAll(frames);
    if (firstLive) {
      alerts.critical({ kind: 'first_live_order', title: `First live ${assetClass} order of user ${user.id}`, text: `User ${user.id} placed its first live ${assetClass} order: ${request.side} ${attempt.qty} ${symbol}`, data: { user_id: user.id, asset_class: assetClass, client_order_id: clientOrderId } });
    }
    // The creation answer is the order as the broker accepted it.
    return { ...toOrderResponse(row), broker_order_id: accepted.brokerOrderId, status: 'accepted', filled_qty: 0, avg_fill_price: null };
  };

  const ownOrder = async ({ user, brokerOrderId, assetClass }: { user: { id: number }; brokerOrderId: string; assetClass: TAssetClass }) => {
    const row = await findAuditedOrder(db, { userId: user.id, brokerOrderId, assetClass });
    if (!row) throw new AppError('ORDER_NOT_FOUND', 'Order not found');
    return row;
  };

  const get = async (opts: { user: { id: number }; brokerOrderId: string; assetClass: TAssetClass }): Promise<TOrderResponse> => toOrderResponse(await ownOrder(opts));

  const list = async ({ user, query }: { user: { id: number }; query: TOrderListQuery }) => {
    const { rows, total } = await listAuditedOrders(db, {
      userId: user.id,
      assetClass: query.asset_class,
      statuses: query.status === undefined ? undefined : STATUSES_OF_FILTER[query.status],
      live: query.mode === undefined ? undefined : query.mode === 'live',
      page: query.page,
      size: query.size,
    });
    return { items: rows.map(toOrderResponse), total, page: query.page, size: query.size };
  };

  /** Cancels a working order; without an origin the service itself asks (the kill switch), named by `by`. */
  const cancel = async ({ user, brokerOrderId, assetClass, origin, by }: { user: { id: number }; brokerOrderId: string; assetClass: TAssetClass; origin?: RequestOrigin; by?: string }): Promise<void> => {
    const row = await ownOrder({ user, brokerOrderId, assetClass });
    if (TERMINAL.has(row.status) || row.status === 'pending') throw new AppError('ORDER_NOT_CANCELABLE', `The order is ${row.status} and cannot be canceled`);
    const broker = await forUser({ userId: user.id, assetClass, mode: row.live ? 'live' : 'paper' });
    await audit(db, row, 'order.cancel_requested', by ? { by } : {}, origin);
    try {
      await withTimeout(broker.cancelOrder({ brokerOrderId }), BROKER_TIMEOUT_MS);
    } catch (error) {
      if (error instanceof BrokerRejectedError) throw new AppError('ORDER_NOT_CANCELABLE', `The broker refused the cancel: ${error.message}`);
      throw new AppError('BROKER_UNAVAILABLE', 'The broker could not be reached; the order was not canceled');
    }
  };

  /**
   * Replaces the qty, limit or stop of a working order at its broker, then records the order as
   * replaced (with the broker's id, which a real broker may change) and its audit record at once.
   */
  const replace = async ({ user, change, origin }: { user: { id: number }; change: TReplaceOrderRequest; origin: RequestOrigin }): Promise<TOrderResponse> => {
    const row = await ownOrder({ user, brokerOrderId: change.broker_order_id, assetClass: change.asset_class });
    if (TERMINAL.has(row.status) || row.status === 'pending') throw new AppError('ORDER_NOT_CANCELABLE', `The order is ${row.status} and cannot be replaced`);
    const qty = change.qty === undefined ? undefined : new ExactDecimal(change.qty).toFixed();
    const instrument = await instruments.resolve({ symbol: row.symbol, assetClass: row.assetClass });
    if (qty !== undefined && instrument) {
      const lot = checkLot(new ExactDecimal(qty), new ExactDecimal(instrument.lotSize), instrument.fractional);
      if (lot) throw new AppError('VALIDATION_ERROR', `qty: ${lot}`, { errors: [{ path: 'qty', message: lot }] });
    }
    const broker = await forUser({ userId: user.id, assetClass: row.assetClass, mode: row.live ? 'live' : 'paper' });
    let replaced: BrokerOrder;
    try {
      replaced = await withTimeout(
        broker.replaceOrder({
          brokerOrderId: change.broker_order_id,
          qty,
          limitPrice: change.limit_price === undefined ? undefined : String(change.limit_price),
          stopPrice: change.stop_price === undefined ? undefined : String(change.stop_price),
        }),
        BROKER_TIMEOUT_MS,
      );
    } catch (error) {
      if (error instanceof BrokerRejectedError) throw new AppError('BROKER_REJECTED', `The broker refused the replace: ${error.message}`);
      throw new AppError('BROKER_UNAVAILABLE', 'The broker could not be reached; the order was not replaced');
    }
    const updated = await db.transaction(async (tx) => {
      const next = await updateOrder(tx, row, {
        brokerOrderId: replaced.brokerOrderId,
        qty: replaced.qty,
        limitPrice: row.orderType === 'stop_limit' ? row.limitPrice : replaced.limitPrice,
        stopPrice: replaced.stopPrice,
        updatedAt: clock.now(),
      });
      await audit(tx, next!, 'order.replace_requested', { qty, limit_price: change.limit_price ?? null, stop_price: change.stop_price ?? null, previous_broker_order_id: row.brokerOrderId }, origin);
      return next!;
    });
    return toOrderResponse(updated);
  };

  /** Cancels every working order of the user in an asset class (and mode, when given); reports what happened. */
  const cancelAll = async ({ user, assetClass, mode, origin }: { user: { id: number }; assetClass: TAssetClass; mode?: TTradingMode; origin: RequestOrigin }) => {
    const working = await listAuditedOrders(db, { userId: user.id, assetClass, statuses: STATUSES_OF_FILTER.open, live: mode === undefined ? undefined : mode === 'live', page: 1, size: 1000 });
    const canceled: string[] = [];
    const failed: { broker_order_id: string; reason: string }[] = [];
    for (const row of working.rows) {
      try {
        await cancel({ user, brokerOrderId: row.brokerOrderId!, assetClass, origin });
        canceled.push(row.brokerOrderId!);
      } catch (error) {
        failed.push({ broker_order_id: row.brokerOrderId!, reason: error instanceof Error ? error.message : 'failed' });
      }
    }
    return { canceled, failed };
  };

  /** Closes a position at market: a sell of the whole held quantity through the same gates. */
  const closePosition = async ({ user, assetClass, symbol, mode, origin }: { user: { id: number }; assetClass: TAssetClass; symbol: string; mode: TTradingMode; origin: RequestOrigin }): Promise<TOrderResponse> => {
    const noPosition = () => new AppError('NOT_FOUND', `No ${assetClass} position in ${symbol.slice(0, 32)}`);
    const instrument = await instruments.resolve({ symbol, assetClass });
    if (!instrument) throw noPosition();
    const broker = await forUser({ userId: user.id, assetClass, mode });
    const held = (await viaBroker(() => broker.positions())).find((position) => position.symbol === instrument.symbol);
    if (!held || new ExactDecimal(held.qty).isZero()) throw noPosition();
    return place({
      user,
      request: { asset_class: assetClass, symbol: instrument.symbol, side: 'sell', qty: Number(held.qty), order_type: 'market', time_in_force: 'day', live_mode: mode === 'live' },
      origin,
    });
  };

  const positions = async ({ user, assetClass, mode }: { user: { id: number }; assetClass: TAssetClass; mode: TTradingMode }) => {
    const broker = await forUser({ userId: user.id, assetClass, mode });
    const held = await viaBroker(() => broker.positions());
    return {
      items: held.map((position) => {
        const qty = new ExactDecimal(position.qty);
        const entry = new ExactDecimal(position.avgEntryPrice);
        const current = new ExactDecimal(position.currentPrice);
        const unrealized = current.minus(entry).times(qty);
        return {
          asset_class: assetClass,
          exchange: broker.name,
          symbol: position.symbol,
          qty: qty.toNumber(),
          avg_entry_price: entry.toNumber(),
          current_price: current.toNumber(),
          unrealized_pnl: unrealized.toNumber(),
          unrealized_pnl_pct: entry.isZero() ? 0 : current.div(entry).minus(1).toNumber(),
          currency: position.currency,
          side: 'LONG' as const,
          metadata: { realized_pnl: Number(position.realizedPnl), live: mode === 'live' },
        };
      }),
    };
  };

  const account = async ({ user, assetClass, mode }: { user: { id: number }; assetClass: TAssetClass; mode: TTradingMode }): Promise<TAccountResponse> => {
    const broker = await forUser({ userId: user.id, assetClass, mode });
    const snapshot = await viaBroker(() => broker.account());
    const dayStartEquity = await findDayStartEquity(db, { userId: user.id, assetClass, mode, day: utcDateOf(clock.now()) });
    return toAccountResponse(assetClass, snapshot, { ...dayPnlOf({ equity: snapshot.equity, dayStartEquity }) });
  };

  // Events of one order are applied one after another, in the order the broker sent them.
  const chains = new Map<string, Promise<void>>();

  /**
   * Applies one broker event: the fill, the order's status and its audit record in one
   * transaction, with the order event (and a fill's trade) in the outbox. An event that changes
   * nothing the order records (the broker's `accepted` after the placement recorded and announced
   * that answer) writes and announces nothing; that is seen without a lock.
   */
  const apply = async (event: TBrokerEvent, child?: OrderInsert): Promise<void> => {
    const key = { userId: event.user_id, clientOrderId: event.client_order_id };
    if (!event.fill && !child) {
      // Events of one order are applied in order and the order's state only moves forward, so a
      // committed row that already says what the event says stays that way.
      const seen = await findOrderByClientId(db, key);
      if (seen && changeOf(seen, event) === undefined) return;
    }
    const eventType = eventTypeOf(event);
    const outcome = await db
      .transaction(async (tx): Promise<TOrderEvent[] | 'unknown'> => {
        let row = await findOrderByClientId(tx, { ...key, forUpdate: true });
        let inserted = false;
        if (!row) {
          if (!child) return 'unknown';
          const made = await insertOrderIntent(tx, child);
          inserted = made !== undefined;
          row = made ?? (await findOrderByClientId(tx, { ...key, forUpdate: true }))!;
          if (inserted) await audit(tx, row, 'order.placed', { origin: 'broker', parent: child.metadata?.parent_client_order_id ?? null });
        }
        const change = changeOf(row, event);
        // A child the broker made is news to the user even when its first event changes nothing.
        if (!change) return inserted ? emit(tx, row, [orderEventOf(row, eventType, event)]) : [];
        const { fill } = event;
        // The event says how much is filled in all; the row holds what the recorded fills add up
        // to (every fill is recorded with its row update, under this lock). A fill the reconciler
        // already recorded after a crash is not recorded twice.
        const record = fill && !new ExactDecimal(row.filledQty).plus(fill.qty).gt(event.filled_qty);
        const next: OrderRow = { ...row, ...change, updatedAt: clock.now() };
        // Sent together, one round trip; a fill delivered twice rolls the rest back.
        const [recorded, , , frames] = await Promise.all([
          record ? insertFill(tx, { ...key, executionId: fill.execution_id, qty: fill.qty, price: fill.price, fee: fill.fee, at: new Date(event.at) }) : Promise.resolve(true),
          updateOrder(tx, key, { ...change, updatedAt: next.updatedAt }),
          audit(tx, next, `order.${event.type}`, { event_type: event.type, status: event.status, payload: event }),
          emit(tx, next, [orderEventOf(next, eventType, event)], record ? fill : undefined),
        ]);
        if (!recorded) throw new DuplicateFill(fill!.execution_id);
        return frames;
      })
      .catch((error: unknown) => {
        if (error instanceof DuplicateFill) return [];
        throw error;
      });
    // An order the broker made itself (a bracket's take-profit or stop-loss child) is read from
    // the broker, outside the transaction (inside it only `tx` may be used), and applied again.
    if (outcome === 'unknown') {
      const made = child ? undefined : await childOrder(event);
      if (made) await apply(event, made);
      return;
    }
    publishAll(outcome);
  };

  /** The order row of a child the broker created, from the broker's own record of it. */
  const childOrder = async (event: TBrokerEvent): Promise<OrderInsert | undefined> => {
    const broker = await forUser({ userId: event.user_id, assetClass: event.asset_class, mode: event.mode }).catch(() => undefined);
    const order = await broker?.getOrder({ brokerOrderId: event.broker_order_id }).catch(() => undefined);
    if (!order) return undefined;
    const parent = order.parentId ? await db.query.orders.findFirst({ where: (o, { and, eq }) => and(eq(o.userId, event.user_id), eq(o.brokerOrderId, order.parentId!)) }) : undefined;
    const at = clock.now();
    return {
      userId: event.user_id,
      clientOrderId: order.clientOrderId,
      brokerOrderId: order.brokerOrderId,
      assetClass: order.assetClass,
      live: order.mode === 'live',
      broker: event.broker,
      symbol: order.symbol,
      side: order.side,
      orderType: order.orderType,
      timeInForce: order.timeInForce,
      qty: order.qty,
      limitPrice: order.limitPrice,
      stopPrice: order.stopPrice,
      status: 'accepted' as const,
      bracket: null,
      metadata: { ...order.metadata, ...(parent ? { parent_client_order_id: parent.clientOrderId } : {}) },
      requestHash: null,
      submittedAt: order.submittedAt,
      updatedAt: at,
    };
  };

  /** Applies an event that came during its order's placement, unless the placement recorded it. */
  const applyLeftOver = async (id: string, event: TBrokerEvent): Promise<void> => {
    const waiting = early.get(id);
    const index = waiting?.indexOf(event) ?? -1;
    if (!waiting || index < 0) return;
    waiting.splice(index, 1);
    if (waiting.length === 0) early.delete(id);
    await apply(event);
  };

  const ingest = (event: TBrokerEvent): Promise<void> => {
    const id = `${event.user_id}:${event.client_order_id}`;
    // The first events of an order (its `accepted`, a fill on arrival) come while its placement
    // is still recording the broker's answer: they wait for it, which records them with the
    // answer when it can; what it leaves is applied here after it.
    const placement = inFlight.get(id);
    if (placement) early.set(id, [...(early.get(id) ?? []), event]);
    const placing = placement?.then(
      () => undefined,
      () => undefined,
    );
    const next = (chains.get(id) ?? placing ?? Promise.resolve())
      .then(() => (placement ? applyLeftOver(id, event) : apply(event)))
      .catch((error: unknown) => logger.error({ err: error, clientOrderId: event.client_order_id, type: event.type }, 'could not apply a broker event'));
    chains.set(id, next);
    void next.finally(() => {
      if (chains.get(id) === next) chains.delete(id);
    });
    return next;
  };

  /** Resolves when every broker event received so far has been applied (tests, shutdown). */
  const idle = async () => {
    while (chains.size > 0) await Promise.all([...chains.values()]);
  };

  /**
   * Settles every order a crash may have left behind the broker: asks the broker by client order
   * id (with the intent's details, for a broker that keeps no client id of ours), links what it
   * has (its status and the fills made meanwhile), settles the intents it never got. A broker that
   * fails to answer decides nothing: the order is left for the next run. One that has several
   * orders that could be an intent's leaves it pending too, marked `ambiguous_at_broker` for a
   * human. Each decision is audited. With an account, only that account's orders (after its
   * broker stream reconnected, say).
   */
  const reconcile = async (account?: { userId: number; assetClass: TAssetClass; mode: TTradingMode }): Promise<{ linked: number; settled: number; ambiguous: number }> => {
    let linked = 0;
    let settled = 0;
    let ambiguous = 0;
    for (const intent of await listUnfinishedOrders(db, account)) {
      const broker = await forUser({ userId: intent.userId, assetClass: intent.assetClass, mode: intent.live ? 'live' : 'paper' }).catch(() => undefined);
      const lookup = { clientOrderId: intent.clientOrderId, intent: { symbol: intent.symbol, side: intent.side, qty: intent.qty, sentAt: intent.submittedAt } };
      let found: BrokerOrder | undefined;
      let ambiguity: BrokerOrderAmbiguousError | undefined;
      try {
        found = await broker?.getOrder(lookup);
      } catch (error) {
        // Not "not there": an unreachable broker, or one that cannot tell yet. Left for the next run.
        if (!(error instanceof BrokerOrderAmbiguousError)) continue;
        ambiguity = error;
      }
      await db.transaction(async (tx) => {
        // Under the row's lock, as the event intake works: the two never both add one fill.
        const current = await findOrderByClientId(tx, { userId: intent.userId, clientOrderId: intent.clientOrderId, forUpdate: true });
        if (!current || TERMINAL.has(current.status)) return; // finished meanwhile
        if (ambiguity) {
          // Several broker orders fit and nothing tells them apart: audited once, left to a human.
          if (current.status !== 'pending' || current.reason === AMBIGUOUS) return;
          const row = await updateOrder(tx, intent, { reason: AMBIGUOUS, updatedAt: clock.now() });
          await audit(tx, row!, 'order.reconciled', { decision: 'ambiguous', candidates: ambiguity.candidates, reason: ambiguity.message });
          ambiguous++;
          return;
        }
        if (!found && current.status !== 'pending') return; // a working order the broker does not list: left for the next run
        if (!found && clock.now().getTime() - current.submittedAt.getTime() < SETTLE_AFTER_MS) return; // maybe still in flight elsewhere
        if (!found) {
          const row = await updateOrder(tx, intent, { status: 'rejected', reason: 'not_at_broker', brokerOrderId: localBrokerId(intent.clientOrderId), updatedAt: clock.now() });
          await audit(tx, row!, 'order.reconciled', { decision: 'settled', reason: broker ? 'the broker has no such order' : 'no broker for the account' });
          settled++;
          return;
        }
        const recorded = await fillsOf(tx, intent);
        const ourQty = recorded.reduce((sum, fill) => sum.plus(fill.qty), new ExactDecimal(0));
        const missing = new ExactDecimal(found.filledQty).minus(ourQty);
        if (missing.gt(0) && found.avgFillPrice !== null) {
          // Fills the broker made while this process was down: one reconciling fill for what is missing.
          const ourNotional = recorded.reduce((sum, fill) => sum.plus(new ExactDecimal(fill.qty).times(fill.price)), new ExactDecimal(0));
          const price = new ExactDecimal(found.avgFillPrice).times(found.filledQty).minus(ourNotional).div(missing);
          await insertFill(tx, { userId: intent.userId, clientOrderId: intent.clientOrderId, executionId: `reconcile:${intent.clientOrderId}:${found.filledQty}`, qty: missing.toFixed(), price: price.toFixed(), fee: '0', at: clock.now() });
        }
        if (current.status === found.status && missing.lte(0) && current.brokerOrderId === found.brokerOrderId) return;
        const row = await updateOrder(tx, intent, { brokerOrderId: found.brokerOrderId, status: found.status, filledQty: found.filledQty, avgFillPrice: found.avgFillPrice, ...(current.reason === AMBIGUOUS ? { reason: null } : {}), updatedAt: clock.now() });
        await audit(tx, row!, 'order.reconciled', { decision: 'linked', was: current.status, broker_status: found.status });
        linked++;
      });
    }
    if (linked + settled + ambiguous > 0) logger.warn({ linked, settled, ambiguous }, 'reconciled order intents left by an interrupted run');
    return { linked, settled, ambiguous };
  };

  /**
   * The instruments a user follows, as `asset_class:symbol`: those it has working orders in and
   * those it holds (through each broker it has; an asset class without a key holds nothing).
   */
  const watchedSymbols = async ({ user }: { user: { id: number } }): Promise<Set<string>> => {
    const watched = new Set<string>();
    for (const { assetClass, symbol } of await listWorkingSymbols(db, { userId: user.id })) watched.add(`${assetClass}:${symbol}`);
    const held = await Promise.all(
      ZAssetClass.options.flatMap((assetClass) =>
        (['paper', 'live'] as const).map(async (mode) => {
          const broker = await forUser({ userId: user.id, assetClass, mode }).catch(() => undefined);
          const positions = await broker?.positions().catch(() => []);
          return (positions ?? []).map((position) => `${assetClass}:${position.symbol}`);
        }),
      ),
    );
    for (const key of held.flat()) watched.add(key);
    return watched;
  };

  /** Sets a user's live flag for an asset class (the live-promotion area will call this). */
  const setLive = ({ userId, assetClass, enabled }: { userId: number; assetClass: TAssetClass; enabled: boolean }) => setLiveEnabled(db, { userId, assetClass, enabled, at: clock.now() });

  return {
    place,
    get,
    list,
    cancel,
    replace,
    cancelAll,
    closePosition,
    positions,
    account,
    ingest,
    idle,
    reconcile,
    watchedSymbols,
    setLive,
    onEvent: (listener: (event: TOrderEvent) => void) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
};

export interface PlaceOptions {
  user: { id: number };
  request: TPlaceOrderRequest;
  /** The request's origin; absent when the service places it itself (a liquidation). */
  origin?: RequestOrigin;
  /** A kill-switch liquidation (a sell only): passes the flag and rate gates and the lock. */
  liquidation?: boolean;
}

/** A broker call whose failure is the broker's: 502 BROKER_UNAVAILABLE. */
const viaBroker = async <T>(call: () => Promise<T>): Promise<T> => {
  try {
    return await call();
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new AppError('BROKER_UNAVAILABLE', 'The broker could not be reached');
  }
};
