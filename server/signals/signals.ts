// Signals from TradingView-style alerts (DESIGN §6 "Integrations"): a call to /hooks/{token} is
// judged at once (its body, passphrase and age), written as a signal row with its audit record,
// and answered 202; its order is then placed through the order service's one placement (the five
// gates, idempotency by client order id, metadata.source `webhook`), in the hook's mode, and the
// signal records what became of it. GET /api/signals lists them.
//
// Where the placement runs: in this process, right after the signal's row commits, not on a
// pg-boss queue. A queued job waits for a worker's poll (half a second at best, pg-boss has no
// wake-up), which an alert's order should not; and the row written first (status pending) is
// what makes it durable. A pg-boss job (SIGNALS_SWEEP, server/jobs) settles what a crash or a
// lost database left pending: a signal whose order exists takes it as its outcome, one still
// younger than its hook's max_lag_sec is placed then (its client order id makes a second try
// the same order), an older one is refused as too late, never traded on a stale alert.
import { randomUUID } from 'node:crypto';
import { ZPlaceOrderRequest } from '../../contracts/orders.ts';
import type { TWebhookSignal, TWebhookSignalList, TSignalListQuery, TSignalPayload, TSignalReceived } from '../../contracts/signals.ts';
import { recordAudit, type RequestOrigin } from '../audit/log.ts';
import { roundDownToLot } from '../brokers/fills.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/client.ts';
import { isDatabaseUnavailable } from '../db/errors.ts';
import type { SignalRow, SignalWebhookRow } from '../db/schema/index.ts';
import { ExactDecimal } from '../decimal.ts';
import { AppError } from '../errors.ts';
import type { Instruments } from '../instruments/instruments.ts';
import type { Logger } from '../observability/logger.ts';
import { viaBrokerRead, type BrokerOfAccount } from '../orders/broker-calls.ts';
import type { Orders } from '../orders/orders.ts';
import { claimRate, rateWindowStart } from '../controls/rate-queries.ts';
import type { Users } from '../users/users.ts';
import { judgeSignal, orderRequestOf, payloadOfStored, storedPayloadOf, webhookClientOrderId, type SignalRefusal } from './payload.ts';
import { decideSignal, insertSignal, findWebhookByTokenHash, listSignals, listStalePending, type ListedSignal, type SignalDecision } from './queries.ts';
import { createWebhooks, tokenHashOf } from './webhooks.ts';

/** The rate counter of a user's hook calls (controls/rate-queries.ts keeps it beside the order counters). */
const CALLS_SCOPE = 'signal-webhook-calls';
const MINUTE_MS = 60_000;
/** What a token looks like (webhooks.ts makes them): anything else is 404 without a read. */
const TOKEN_SHAPE = /^wh_[A-Za-z0-9_-]{43}$/;
/** Codes after which an order may stand under the signal's client order id. */
const ORDER_MAY_STAND = new Set(['BROKER_REJECTED', 'BROKER_UNAVAILABLE', 'IDEMPOTENCY_CONFLICT']);
/** Signals the sweep settles per round. */
const SWEEP_BATCH = 200;

/** What a placement needs of a signal; the row's fields, read back by the sweep too. */
interface PendingSignal {
  id: string;
  userId: number;
  webhookId: string;
  hook: Pick<SignalWebhookRow, 'assetClass' | 'mode'>;
  payload: TSignalPayload;
  clientOrderId: string;
}

/** A signal whose outcome was just decided, for whoever listens (the benchmark; a test). */
export interface SettledSignal {
  id: string;
  userId: number;
  outcome: 'accepted' | 'refused';
}

const decimalOrNull = (value: string | null) => (value === null ? null : Number(value));

const signalOf = (row: ListedSignal): TWebhookSignal => ({
  id: row.id,
  webhook_id: row.webhookId,
  webhook_name: row.webhookName,
  asset_class: row.assetClass,
  mode: row.mode,
  received_at: row.receivedAt.toISOString(),
  outcome: row.status,
  symbol: row.symbol,
  side: row.side,
  order_type: row.orderType,
  qty: decimalOrNull(row.qty),
  qty_pct: decimalOrNull(row.qtyPct),
  alert_id: row.alertId,
  order_id: row.clientOrderId !== null && (row.brokerOrderId !== null || row.status === 'accepted') ? row.clientOrderId : null,
  broker_order_id: row.brokerOrderId,
  error_code: row.errorCode,
  error_message: row.errorMessage,
  decided_at: row.decidedAt?.toISOString() ?? null,
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A refusal's words with its field errors, as the list shows them. */
const reasonOf = (refusal: Pick<SignalRefusal, 'message' | 'errors'>) =>
  refusal.errors?.length ? `${refusal.message}: ${refusal.errors.map(({ path, message }) => (path ? `${path}: ${message}` : message)).join('; ')}` : refusal.message;

export interface SignalsDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'SIGNAL_WEBHOOK_CALLS_PER_MIN' | 'BROKER_TIMEOUT_MS'>;
  logger: Logger;
  users: Pick<Users, 'get'>;
  instruments: Pick<Instruments, 'resolve'>;
  forUser: BrokerOfAccount;
  orders: Pick<Orders, 'place' | 'byClientOrderId'>;
}

export const createSignals = ({ db, clock, config, logger, users, instruments, forUser, orders }: SignalsDeps) => {
  const webhooks = createWebhooks({ db, clock });
  const running = new Set<Promise<void>>();
  /** Per user and client order id, the placement under way: a retried alert waits for its first copy. */
  const chains = new Map<string, Promise<void>>();
  const listeners = new Set<(settled: SettledSignal) => void>();

  /**
   * The quantity a signal orders: its `qty`, or its `qty_pct` of the buying power (a buy, at the
   * price the buy's reservation uses: the current price for a market order, else its limit or
   * stop) or of the held quantity (a sell), rounded down to the instrument's lot.
   */
  const quantityOf = async ({ userId, hook, payload }: PendingSignal): Promise<string> => {
    if (payload.qty !== undefined) return new ExactDecimal(payload.qty).toFixed();
    const fraction = new ExactDecimal(payload.qty_pct!);
    const instrument = await instruments.resolve({ symbol: payload.symbol, assetClass: hook.assetClass });
    if (!instrument) throw new AppError('BROKER_REJECTED', `The broker refused the order: unknown symbol ${payload.symbol}`);
    const broker = await forUser({ userId, assetClass: hook.assetClass, mode: hook.mode });
    let amount: InstanceType<typeof ExactDecimal>;
    let of: string;
    if (payload.side === 'buy') {
      const [price, account] = await Promise.all([
        payload.limit_price ?? payload.stop_price ?? viaBrokerRead(() => broker.quote(instrument.symbol)),
        viaBrokerRead(() => broker.account()),
      ]);
      amount = new ExactDecimal(account.buyingPower).times(fraction).div(price);
      of = `buying power ${account.buyingPower} at ${price}`;
    } else {
      const { positions } = await viaBrokerRead(() => broker.snapshot({ symbol: instrument.symbol }));
      const held = positions.find((position) => position.symbol === instrument.symbol)?.qty ?? '0';
      amount = new ExactDecimal(held).times(fraction);
      of = `the ${held} held`;
    }
    const qty = roundDownToLot(amount, instrument.lotSize, instrument.fractional);
    if (qty.lte(0)) throw new AppError('VALIDATION_ERROR', `qty_pct: ${fraction.toFixed()} of ${of} is below one lot (${instrument.lotSize})`, { errors: [{ path: 'qty_pct', message: 'below one lot' }] });
    return qty.toFixed();
  };

  const decide = async (signal: Pick<PendingSignal, 'id' | 'userId' | 'webhookId'>, decision: SignalDecision, origin: RequestOrigin) => {
    const decided = await db.transaction(async (tx) => {
      const row = await decideSignal(tx, signal.id, decision);
      if (row) {
        await recordAudit(tx, {
          action: `signal.${decision.status}`,
          actorUserId: signal.userId,
          subjectUserId: signal.userId,
          origin,
          at: decision.at,
          data: { signal_id: signal.id, webhook_id: signal.webhookId, client_order_id: decision.clientOrderId ?? null, qty: decision.qty ?? null, ...(decision.errorCode ? { code: decision.errorCode } : {}) },
        });
      }
      return row;
    });
    if (!decided) return;
    for (const listener of listeners) listener({ id: signal.id, userId: signal.userId, outcome: decision.status });
  };

  /** The outcome an order already made under the signal's client order id gives it. */
  const decisionOfStanding = (order: { clientOrderId: string; brokerOrderId: string | null; status: string; qty: string }, qty: string | null): SignalDecision =>
    order.status === 'rejected'
      ? { status: 'refused', qty: qty ?? order.qty, clientOrderId: order.clientOrderId, brokerOrderId: order.brokerOrderId, errorCode: 'BROKER_REJECTED', errorMessage: 'The broker refused the order', at: clock.now() }
      : { status: 'accepted', qty: qty ?? order.qty, clientOrderId: order.clientOrderId, brokerOrderId: order.brokerOrderId, at: clock.now() };

  /**
   * Places a signal's order and records its outcome. `standingFirst`: an order may already stand
   * under its client order id (a retried alert, a signal the sweep picks up), and is then its
   * outcome without a second placement (whose quantity, from a fraction, may differ).
   */
  const settle = async (signal: PendingSignal, origin: RequestOrigin, standingFirst: boolean): Promise<void> => {
    const { userId, clientOrderId } = signal;
    let qty: string | null = null;
    try {
      if (standingFirst) {
        const standing = await orders.byClientOrderId({ userId, clientOrderId });
        if (standing) return await decide(signal, decisionOfStanding(standing, null), origin);
      }
      qty = await quantityOf(signal);
      const request = ZPlaceOrderRequest.parse({ ...orderRequestOf(signal.hook, signal.payload, Number(qty)), client_order_id: clientOrderId });
      const order = await orders.place({ user: { id: userId }, request, origin, source: 'webhook' });
      await decide(signal, { status: 'accepted', qty, clientOrderId: order.client_order_id, brokerOrderId: order.broker_order_id, at: clock.now() }, origin);
    } catch (error) {
      // The database is away: the signal stays pending, and the sweep settles it once it is back.
      if (isDatabaseUnavailable(error)) {
        logger.warn({ err: error, signalId: signal.id }, 'a signal’s placement met the database away; the sweep will settle it');
        return;
      }
      if (!(error instanceof AppError)) logger.error({ err: error, signalId: signal.id }, 'a signal’s placement failed');
      const failure = error instanceof AppError ? error : new AppError('INTERNAL_ERROR');
      const standing = ORDER_MAY_STAND.has(failure.code) ? await orders.byClientOrderId({ userId, clientOrderId }) : undefined;
      // A copy of a retried alert made the one order, with another quantity: that order is its outcome.
      if (standing && failure.code === 'IDEMPOTENCY_CONFLICT') return decide(signal, decisionOfStanding(standing, qty), origin);
      await decide(
        signal,
        { status: 'refused', qty, clientOrderId, brokerOrderId: standing?.brokerOrderId ?? null, errorCode: failure.code, errorMessage: reasonOf({ message: failure.message, errors: failure.errors }), at: clock.now() },
        origin,
      );
    }
  };

  /** Runs a signal's settlement after any other of its client order id in this process. */
  const schedule = (signal: PendingSignal, origin: RequestOrigin, standingFirst: boolean) => {
    const key = `${signal.userId}:${signal.clientOrderId}`;
    const before = chains.get(key) ?? Promise.resolve();
    const run: Promise<void> = before
      .then(() => settle(signal, origin, standingFirst))
      .catch((error: unknown) => logger.error({ err: error, signalId: signal.id }, 'a signal could not be settled'))
      .finally(() => {
        running.delete(run);
        if (chains.get(key) === run) chains.delete(key);
      });
    chains.set(key, run);
    running.add(run);
  };

  /**
   * A call of /hooks/{token} with its body's text (JSON, whatever media type declared it). 404 for
   * a token that names no hook in force; 429 past SIGNAL_WEBHOOK_CALLS_PER_MIN; else the signal is
   * written (with its audit record) and answered: 202 with its id, or its refusal (422 invalid or
   * stale, 403 for a passphrase that does not match), the signal listed either way.
   */
  const receive = async ({ token, body, origin }: { token: string; body: string; origin: RequestOrigin }): Promise<TSignalReceived> => {
    const hook = TOKEN_SHAPE.test(token) ? await findWebhookByTokenHash(db, tokenHashOf(token)) : undefined;
    const user = hook ? await users.get(hook.userId) : null;
    if (!hook || !user?.isActive) throw new AppError('NOT_FOUND', 'No such hook');
    const at = clock.now();
    const claim = { userId: hook.userId, scope: CALLS_SCOPE, windowStart: new Date(at.getTime() - MINUTE_MS), at, max: config.SIGNAL_WEBHOOK_CALLS_PER_MIN };
    const counted = await claimRate(db, claim);
    if (!counted.counted) {
      const started = await rateWindowStart(db, claim);
      const retryAfterSec = Math.max(1, Math.ceil((started.getTime() + MINUTE_MS - at.getTime()) / 1000));
      throw new AppError('RATE_LIMIT_EXCEEDED', `More than ${config.SIGNAL_WEBHOOK_CALLS_PER_MIN} calls of your signal webhooks a minute`, { retryAfterSec });
    }
    const judged = judgeSignal(hook, body, at);
    const id = randomUUID();
    const pending: PendingSignal | undefined = judged.ok
      ? { id, userId: hook.userId, webhookId: hook.id, hook, payload: judged.payload, clientOrderId: webhookClientOrderId(hook.id, judged.payload.alert_id === undefined ? { signalId: id } : { alertId: judged.payload.alert_id }) }
      : undefined;
    const seen = judged.ok ? undefined : judged.refusal.seen;
    await db.transaction(async (tx) => {
      await insertSignal(tx, {
        id,
        userId: hook.userId,
        webhookId: hook.id,
        assetClass: hook.assetClass,
        mode: hook.mode,
        receivedAt: at,
        status: judged.ok ? 'pending' : judged.refusal.outcome,
        symbol: judged.ok ? judged.payload.symbol : (seen?.symbol ?? null),
        side: judged.ok ? judged.payload.side : (seen?.side ?? null),
        orderType: judged.ok ? judged.payload.order_type : (seen?.orderType ?? null),
        qty: judged.ok ? (judged.payload.qty === undefined ? null : String(judged.payload.qty)) : seen?.qty === undefined ? null : String(seen.qty),
        qtyPct: judged.ok ? (judged.payload.qty_pct === undefined ? null : String(judged.payload.qty_pct)) : seen?.qtyPct === undefined ? null : String(seen.qtyPct),
        alertId: judged.ok ? (judged.payload.alert_id ?? null) : (seen?.alertId ?? null),
        payload: judged.ok ? storedPayloadOf(judged.payload) : null,
        clientOrderId: pending?.clientOrderId ?? null,
        errorCode: judged.ok ? null : judged.refusal.code,
        errorMessage: judged.ok ? null : reasonOf(judged.refusal),
        decidedAt: judged.ok ? null : at,
      });
      await recordAudit(tx, {
        action: 'signal.received',
        actorUserId: hook.userId,
        subjectUserId: hook.userId,
        origin,
        at,
        data: { signal_id: id, webhook_id: hook.id, outcome: judged.ok ? 'pending' : judged.refusal.outcome, ...(judged.ok ? { client_order_id: pending!.clientOrderId } : { code: judged.refusal.code }) },
      });
    });
    if (!judged.ok) throw new AppError(judged.refusal.code, `${judged.refusal.message} (signal ${id})`, { errors: judged.refusal.errors });
    schedule(pending!, origin, judged.payload.alert_id !== undefined);
    return { signal_id: id };
  };

  const list = async ({ user, query }: { user: { id: number }; query: TSignalListQuery }): Promise<TWebhookSignalList> => {
    // Hook ids are UUIDs: another text names none of the user's hooks (and must not reach the uuid column).
    if (query.webhook_id !== undefined && !UUID.test(query.webhook_id)) return { items: [], total: 0, page: query.page, size: query.size };
    const { rows, total } = await listSignals(db, { userId: user.id, webhookId: query.webhook_id, status: query.outcome, limit: query.size, offset: (query.page - 1) * query.size });
    return { items: rows.map(signalOf), total, page: query.page, size: query.size };
  };

  /** A pending row as its placement needs it; undefined when its payload cannot be read back. */
  const pendingOf = (row: SignalRow): PendingSignal | undefined => {
    const payload = payloadOfStored(row.payload);
    if (!payload || row.clientOrderId === null) return undefined;
    return { id: row.id, userId: row.userId, webhookId: row.webhookId, hook: { assetClass: row.assetClass, mode: row.mode }, payload, clientOrderId: row.clientOrderId };
  };

  /** Resolves once every placement under way in this process has recorded its outcome. */
  const idle = async (): Promise<void> => {
    while (running.size > 0) await Promise.allSettled([...running]);
  };

  /**
   * Settles signals left pending longer than any placement takes (a crash, the database away):
   * see the module's head. Idempotent; run by a pg-boss job every minute and when workers start.
   */
  const sweep = async (): Promise<{ placed: number; late: number }> => {
    const at = clock.now();
    const stuckAfterMs = Math.max(MINUTE_MS, 3 * config.BROKER_TIMEOUT_MS);
    const stale = await listStalePending(db, { before: new Date(at.getTime() - stuckAfterMs), limit: SWEEP_BATCH });
    let placed = 0;
    let late = 0;
    for (const { signal: row, webhook } of stale) {
      const signal = pendingOf(row);
      const origin = { requestId: row.id, address: 'signal-sweep' };
      if (!signal) {
        await decide(row, { status: 'refused', errorCode: 'INTERNAL_ERROR', errorMessage: 'The signal could not be read back to place it', at }, origin);
        continue;
      }
      const standing = await orders.byClientOrderId({ userId: signal.userId, clientOrderId: signal.clientOrderId });
      const tooLate = at.getTime() - row.receivedAt.getTime() > webhook.maxLagSec * 1000;
      if (!standing && tooLate) {
        late++;
        await decide(signal, { status: 'refused', errorCode: 'SERVICE_UNAVAILABLE', errorMessage: `Not placed: the service could not place it within the hook’s max_lag_sec (${webhook.maxLagSec} s)`, at }, origin);
        continue;
      }
      placed++;
      schedule(signal, origin, true);
    }
    await idle();
    return { placed, late };
  };

  return {
    webhooks,
    receive,
    list,
    sweep,
    idle,
    /** Calls `listener` with each signal this process settles; answers its removal. */
    onSettled: (listener: (settled: SettledSignal) => void) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
};

export type Signals = ReturnType<typeof createSignals>;
