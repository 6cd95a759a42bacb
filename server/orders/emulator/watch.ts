// The order emulator (DESIGN §6 "Advanced orders"): for an account whose broker does not hold a
// trailing stop, the instance that holds the account's ingestion lease watches its working
// triggers on the broker's quote stream (started beside the account's event stream, under the
// same lease: server/brokers/real/ingestion.ts). Each quote moves a trigger's mark and stop (saved
// at most once a second, and always at the trigger); a quote that reaches the stop fires it: the
// trigger and its order marked triggered (an order event `triggered`, audited) in one transaction,
// then a market order for the quantity goes to the broker as the order's child. The child's
// events update the parent (intake.ts, by the trigger row): one order row for the user.
import { createHash } from 'node:crypto';
import type { TBrokerEvent } from '../../../contracts/brokers.ts';
import { EMULATED_CHILD_SUFFIX } from '../../../contracts/orders.ts';
import type { TTickSizeAt } from '../../brokers/fills.ts';
import type { TrailingState } from '../../brokers/matching.ts';
import { BrokerRejectedError, type Broker, type BrokerQuote } from '../../brokers/types.ts';
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/client.ts';
import type { OrderTriggerRow } from '../../db/schema/index.ts';
import { ExactDecimal } from '../../decimal.ts';
import type { Instruments } from '../../instruments/instruments.ts';
import type { Logger } from '../../observability/logger.ts';
import { BROKER_TIMEOUT_MS, withTimeout } from '../broker-calls.ts';
import type { OrderAudit } from '../order-audit.ts';
import type { OrderPublisher } from '../publisher.ts';
import { findOrderByClientId } from '../queries.ts';
import { orderEventOf } from '../records.ts';
import { HWM } from '../trailing.ts';
import { mergeOrderMetadata, updateOrder } from '../write-queries.ts';
import { childClientOrderIdOf, stepOf, tickOf, trailingStateOfTrigger } from './trail.ts';
import { markTriggered, saveMark, setChildBrokerOrderId, triggerOfChild, workingTriggers, type EmulatedAccount, type TriggerKey } from './trigger-queries.ts';

export const CHILD_CLIENT_ORDER_ID = 'child_client_order_id';
export const CHILD_BROKER_ORDER_ID = 'child_broker_order_id';

export interface OrderEmulatorDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  instruments: Pick<Instruments, 'resolve'>;
  audit: OrderAudit;
  publisher: Pick<OrderPublisher, 'appendEvents' | 'announce' | 'signalTriggers' | 'followTriggers'>;
  /** How often a watch of working triggers reads them again (new ones, canceled ones) and saves marks left unsaved. */
  reloadMs?: number;
  /**
   * How often the watch of an account with no working trigger looks again on its own: a bound on
   * a lost signal, not the mechanism. A trigger placed or changed anywhere signals the watch (a
   * look every second for each account with a key would cost the database a statement a second
   * per account, most of them with nothing to watch).
   */
  idleReloadMs?: number;
  /** The least time between two saves of one trigger's moving mark. */
  saveEveryMs?: number;
}

/** A working trigger as its watch holds it between saves. */
interface Watched {
  row: OrderTriggerRow;
  state: TrailingState;
  tick: TTickSizeAt;
  savedAt: number;
  unsaved: boolean;
}

/**
 * The iterable's items until the signal aborts, then no more at once: a quote stream still
 * connecting when its signal aborts may take its time to notice, and a lost lease (or a shutdown)
 * must not wait for it. The stream is told to end all the same.
 */
async function* untilAborted<T>(iterable: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  const iterator = iterable[Symbol.asyncIterator]();
  const aborted = new Promise<'aborted'>((resolve) => {
    if (signal.aborted) resolve('aborted');
    signal.addEventListener('abort', () => resolve('aborted'), { once: true });
  });
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), aborted]);
      if (next === 'aborted' || next.done) return;
      yield next.value;
    }
  } finally {
    void iterator.return?.()?.catch(() => undefined);
  }
}

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const accountKeyOf = ({ userId, assetClass, mode }: EmulatedAccount) => `${userId}:${assetClass}:${mode}`;
const symbolsOf = (rows: readonly OrderTriggerRow[]) => [...new Set(rows.map((row) => row.symbol))].sort();

export type OrderEmulator = ReturnType<typeof createOrderEmulator>;

export const createOrderEmulator = ({ db, clock, logger, instruments, audit, publisher, reloadMs = 1_000, idleReloadMs = 30_000, saveEveryMs = 1_000 }: OrderEmulatorDeps) => {
  const log = logger.child({ area: 'order-emulator' });
  /** Each running watch's wake-up, so a trigger placed or changed on any instance is watched at once. */
  const wakes = new Map<string, () => void>();
  /** The accounts watched in this process. */
  const watching = new Set<string>();
  /** Watched accounts woken while their watch was reading, not waiting: its next pause ends at once. */
  const woken = new Set<string>();

  /** Waits `ms`, or less when the account's watch is woken (now, or since its last pause) or the signal aborts. */
  const pause = (account: EmulatedAccount, ms: number, signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      if (woken.delete(accountKeyOf(account))) {
        resolve();
        return;
      }
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        if (wakes.get(accountKeyOf(account)) === done) wakes.delete(accountKeyOf(account));
        resolve();
      };
      if (signal.aborted) {
        resolve();
        return;
      }
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      wakes.set(accountKeyOf(account), done);
    });

  const watchedOf = async (row: OrderTriggerRow): Promise<Watched | undefined> => {
    const instrument = await instruments.resolve({ symbol: row.symbol, assetClass: row.assetClass });
    if (!instrument) return undefined;
    return { row, state: trailingStateOfTrigger(row), tick: tickOf(instrument), savedAt: clock.now().getTime(), unsaved: false };
  };

  /** Saves a trigger's moved mark and stop, on the trigger row and on its order (its stop_price and metadata.hwm). */
  const save = async (watched: Watched) => {
    const { row, state } = watched;
    const at = clock.now();
    watched.unsaved = false;
    watched.savedAt = at.getTime();
    const hwm = state.hwm.toFixed();
    const stopPrice = state.stopPrice.toFixed();
    await db.transaction(async (tx) => {
      if (!(await saveMark(tx, row, { hwm, stopPrice, at }))) return;
      await updateOrder(tx, row, { stopPrice, updatedAt: at });
      await mergeOrderMetadata(tx, row, { [HWM]: Number(hwm) });
    });
  };

  /**
   * Fires a trigger: marked triggered with its order (event and audit) in one transaction, unless
   * a cancel came first; then the child goes to the broker and is linked to its parent.
   */
  const fire = async (broker: Broker, watched: Watched, quote: BrokerQuote) => {
    const { row, state } = watched;
    const key: TriggerKey = { userId: row.userId, clientOrderId: row.clientOrderId };
    const child = childClientOrderIdOf(row.clientOrderId, sha);
    const at = clock.now();
    const stopPrice = state.stopPrice.toFixed();
    const fired = await db.transaction(async (tx) => {
      const trigger = await markTriggered(tx, key, { hwm: state.hwm.toFixed(), stopPrice, childClientOrderId: child, at });
      const order = trigger && (await findOrderByClientId(tx, { ...key, forUpdate: true }));
      if (!order) return undefined;
      const updated = (await updateOrder(tx, key, { stopPrice, metadata: { ...order.metadata, [HWM]: Number(state.hwm.toFixed()), [CHILD_CLIENT_ORDER_ID]: child }, updatedAt: at }))!;
      const payload = { price: quote.price, stop_price: stopPrice, hwm: state.hwm.toFixed(), [CHILD_CLIENT_ORDER_ID]: child };
      await audit(tx, updated, 'order.triggered', payload);
      return publisher.appendEvents(tx, updated, [orderEventOf(updated, 'triggered', payload, at)]);
    });
    if (!fired) return;
    publisher.announce(fired);
    log.info({ userId: row.userId, clientOrderId: row.clientOrderId, price: quote.price, stopPrice }, 'a trigger fired; its market order goes to the broker');
    try {
      const placed = await withTimeout(
        broker.placeOrder({ clientOrderId: child, symbol: row.symbol, side: row.side, qty: row.qty, orderType: 'market', timeInForce: 'day', metadata: { parent_client_order_id: row.clientOrderId } }),
        BROKER_TIMEOUT_MS,
      );
      await db.transaction(async (tx) => {
        await setChildBrokerOrderId(tx, key, placed.brokerOrderId, clock.now());
        await mergeOrderMetadata(tx, key, { [CHILD_BROKER_ORDER_ID]: placed.brokerOrderId });
      });
    } catch (error) {
      if (error instanceof BrokerRejectedError) return refuseChild(key, error);
      // It may have reached the broker: its events, if any, still come to the parent.
      log.error({ err: error, userId: row.userId, clientOrderId: row.clientOrderId }, 'the trigger’s market order may not have reached the broker');
    }
  };

  /** A child the broker refused cancels its parent, with the reason (DESIGN §6). */
  const refuseChild = async (key: TriggerKey, error: BrokerRejectedError) => {
    const at = clock.now();
    const frames = await db.transaction(async (tx) => {
      const order = await findOrderByClientId(tx, { ...key, forUpdate: true });
      if (!order) return [];
      const updated = (await updateOrder(tx, key, { status: 'canceled', reason: error.message, metadata: { ...order.metadata, cancel_reason: 'trigger_refused' }, updatedAt: at }))!;
      await audit(tx, updated, 'order.canceled', { cancel_reason: 'trigger_refused', reason: error.message });
      return publisher.appendEvents(tx, updated, [orderEventOf(updated, 'canceled', { reason: error.message }, at)]);
    });
    publisher.announce(frames);
  };

  /** One quote against the account's triggers of its symbol. */
  const onQuote = async (broker: Broker, watched: Map<string, Watched>, quote: BrokerQuote) => {
    const price = new ExactDecimal(quote.price);
    for (const [id, one] of watched) {
      if (one.row.symbol !== quote.symbol) continue;
      const step = stepOf(one.state, price, one.tick);
      if (step.kind === 'fired') {
        watched.delete(id);
        await fire(broker, one, quote);
      } else if (step.kind === 'moved') {
        one.state = { ...one.state, hwm: step.hwm, stopPrice: step.stopPrice };
        one.unsaved = true;
        if (clock.now().getTime() - one.savedAt >= saveEveryMs) await save(one);
      }
    }
  };

  /** Brings the held triggers in line with the account's working ones; false when their symbols changed (a new quote stream). */
  const sync = async (account: EmulatedAccount, watched: Map<string, Watched>, symbols: readonly string[]) => {
    const rows = await workingTriggers(db, account);
    if (symbolsOf(rows).join('\n') !== symbols.join('\n')) return false;
    const ids = new Set(rows.map((row) => row.clientOrderId));
    for (const id of watched.keys()) if (!ids.has(id)) watched.delete(id);
    for (const row of rows) {
      if (watched.has(row.clientOrderId)) continue;
      const one = await watchedOf(row);
      if (one) watched.set(row.clientOrderId, one);
    }
    const now = clock.now().getTime();
    for (const one of watched.values()) if (one.unsaved && now - one.savedAt >= saveEveryMs) await save(one);
    return true;
  };

  /** One quote stream over the symbols of the account's triggers now, until they change or the signal aborts. */
  const watchSymbols = async (account: EmulatedAccount, broker: Broker, quotes: NonNullable<Broker['quotes']>, rows: OrderTriggerRow[], signal: AbortSignal) => {
    const symbols = symbolsOf(rows);
    const watched = new Map<string, Watched>();
    for (const row of rows) {
      const one = await watchedOf(row);
      if (one) watched.set(row.clientOrderId, one);
    }
    const stream = new AbortController();
    const stop = () => stream.abort();
    // The signal may have aborted while the triggers were read: an abort event comes only once.
    if (signal.aborted) return;
    signal.addEventListener('abort', stop, { once: true });
    const reloading = (async () => {
      while (!stream.signal.aborted) {
        await pause(account, reloadMs, stream.signal);
        if (stream.signal.aborted) return;
        if (!(await sync(account, watched, symbols).catch(() => true))) stream.abort();
      }
    })();
    try {
      for await (const quote of untilAborted(quotes(symbols, stream.signal), stream.signal)) await onQuote(broker, watched, quote);
    } catch (error) {
      if (!stream.signal.aborted) log.warn({ err: error, userId: account.userId, assetClass: account.assetClass }, 'the quote stream of the account’s triggers stopped; starting again');
    } finally {
      stream.abort();
      signal.removeEventListener('abort', stop);
      await reloading;
      for (const one of watched.values()) if (one.unsaved) await save(one).catch(() => undefined);
    }
  };

  /**
   * Watches the account's working triggers until the signal aborts (the lease is lost, or the
   * event stream ended): read from Postgres on each start, so a restart or a takeover resumes them.
   */
  const watch = async (account: EmulatedAccount, broker: Broker, signal: AbortSignal): Promise<void> => {
    if (!broker.quotes) return;
    const quotes = broker.quotes.bind(broker);
    const key = accountKeyOf(account);
    watching.add(key);
    try {
      while (!signal.aborted) {
        try {
          const rows = await workingTriggers(db, account);
          if (rows.length === 0) await pause(account, idleReloadMs, signal);
          else await watchSymbols(account, broker, quotes, rows, signal);
        } catch (error) {
          if (!signal.aborted) log.warn({ err: error, userId: account.userId }, 'the account’s triggers could not be watched; trying again');
          await pause(account, reloadMs, signal);
        }
      }
    } finally {
      watching.delete(key);
      woken.delete(key);
    }
  };

  /** The account's watch in this process, if it runs here, reads its triggers now. */
  const wake = (account: EmulatedAccount) => {
    const key = accountKeyOf(account);
    const waiting = wakes.get(key);
    if (waiting) waiting();
    else if (watching.has(key)) woken.add(key);
  };
  // A change made on another instance wakes the watch here (this one's own come through `changed`).
  publisher.followTriggers(wake);

  /**
   * After the commit that placed, canceled or changed one of the account's triggers: its watch
   * reads them now, here or on the instance that holds the account's lease.
   */
  const changed = (account: EmulatedAccount) => {
    wake(account);
    publisher.signalTriggers(db, account).catch((error: unknown) => log.warn({ err: error, userId: account.userId }, 'could not signal a trigger change; the watch reads it at its next look'));
  };

  /**
   * A broker event of a trigger's child, as its parent's: the child's fills and status are the
   * parent order's (one order row for the user). Any other event as it came.
   */
  const asParentEvent = async (event: TBrokerEvent): Promise<TBrokerEvent> => {
    if (!mayBeChildEvent(event)) return event;
    const trigger = await triggerOfChild(db, { userId: event.user_id, childClientOrderId: event.client_order_id });
    const parent = trigger && (await findOrderByClientId(db, { userId: trigger.userId, clientOrderId: trigger.clientOrderId }));
    if (!parent?.brokerOrderId) return event;
    return { ...event, client_order_id: parent.clientOrderId, broker_order_id: parent.brokerOrderId };
  };

  /** Whether an event may be a trigger's child's (asParentEvent looks it up): only ids with the child's suffix, which a caller's may not carry. */
  const mayBeChildEvent = (event: TBrokerEvent) => event.client_order_id.endsWith(EMULATED_CHILD_SUFFIX);

  return { watch, changed, asParentEvent, mayBeChildEvent };
};
