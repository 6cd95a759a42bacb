// The order emulator (DESIGN §6 "Advanced orders"): for an account whose broker does not hold a
// trailing stop, a stop, a stop-limit or an OCO (or a bracket's exits), the instance that holds
// the account's ingestion lease watches its working triggers on the broker's quote stream (started
// beside the account's event stream, under the same lease: server/brokers/real/ingestion.ts). Each
// quote moves a trailing trigger's mark and stop (saved at most once a second, and always at the
// trigger); a quote that reaches a trigger fires it (fire.ts): its child goes to the broker, a
// market order, or a limit at a stop-limit's or a take-profit's limit (never filling beyond it).
// The child's events update the parent (intake.ts, by the trigger row): one order row for the user.
import type { TBrokerEvent } from '../../../contracts/brokers.ts';
import { EMULATED_CHILD_SUFFIX, type TOrderStatus } from '../../../contracts/orders.ts';
import type { TTickSizeAt } from '../../brokers/fills.ts';
import type { Decimal } from 'decimal.js';
import type { Broker, BrokerQuote } from '../../brokers/types.ts';
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/client.ts';
import type { OrderTriggerRow } from '../../db/schema/index.ts';
import { ExactDecimal } from '../../decimal.ts';
import type { Instruments } from '../../instruments/instruments.ts';
import type { Logger } from '../../observability/logger.ts';
import type { OrderAudit } from '../order-audit.ts';
import type { OrderPublisher } from '../publisher.ts';
import { findOrderByClientId } from '../queries.ts';
import { HWM } from '../trailing.ts';
import { mergeOrderMetadata, updateOrder } from '../write-queries.ts';
import { armedKeyOf, createFiring, type FiringDeps } from './fire.ts';
import { tickOf, triggerStateOf, triggerStepOf, type TTriggerState } from './trail.ts';
import { saveMark, triggerOfChild, workingTrigger, workingTriggers, type EmulatedAccount } from './trigger-queries.ts';


/**
 * A child's event's status as its parent's: a step the parent has moved past (the broker took the
 * child, `accepted`; it works, `open`, while the parent has fills) leaves the parent's as it is.
 */
const parentStatusOf = (parent: TOrderStatus, event: TBrokerEvent): TBrokerEvent['status'] => {
  if (event.fill) return event.status;
  if (parent === 'open' && event.status === 'accepted') return 'open';
  if (parent === 'partially_filled' && (event.status === 'accepted' || event.status === 'open')) return 'partially_filled';
  return event.status;
};

export interface OrderEmulatorDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  instruments: Pick<Instruments, 'resolve'>;
  audit: OrderAudit;
  publisher: Pick<OrderPublisher, 'appendEvents' | 'announce' | 'signalTriggers' | 'followTriggers'>;
  /** The checks a fired trigger's child meets before it goes to the broker (fire.ts). */
  checkChild: FiringDeps['checkChild'];
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
  state: TTriggerState;
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

const accountKeyOf = ({ userId, assetClass, mode }: EmulatedAccount) => `${userId}:${assetClass}:${mode}`;
const symbolsOf = (rows: readonly OrderTriggerRow[]) => [...new Set(rows.map((row) => row.symbol))].sort();

export type OrderEmulator = ReturnType<typeof createOrderEmulator>;

export const createOrderEmulator = ({ db, clock, logger, instruments, audit, publisher, checkChild, reloadMs = 1_000, idleReloadMs = 30_000, saveEveryMs = 1_000 }: OrderEmulatorDeps) => {
  const log = logger.child({ area: 'order-emulator' });
  const fire = createFiring({ db, clock, log, instruments, audit, publisher, checkChild });
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
    return { row, state: triggerStateOf(row), tick: tickOf(instrument), savedAt: clock.now().getTime(), unsaved: false };
  };

  /** Saves a trailing trigger's moved mark and stop, on the trigger row and on its order (its stop_price and metadata.hwm). */
  const save = async (watched: Watched) => {
    const { row, state } = watched;
    const at = clock.now();
    watched.unsaved = false;
    watched.savedAt = at.getTime();
    if (state.kind !== 'trailing') return;
    const hwm = state.trailing.hwm.toFixed();
    const stopPrice = state.trailing.stopPrice.toFixed();
    await db.transaction(async (tx) => {
      if (!(await saveMark(tx, armedKeyOf(row), { hwm, stopPrice, at }))) return;
      await updateOrder(tx, row, { stopPrice, updatedAt: at });
      await mergeOrderMetadata(tx, row, { [HWM]: Number(hwm) });
    });
  };

  /** One quote against the account's triggers of its symbol. */
  const onQuote = async (broker: Broker, watched: Map<string, Watched>, quote: BrokerQuote) => {
    const price = new ExactDecimal(quote.price);
    for (const [id, one] of [...watched]) {
      if (one.row.symbol !== quote.symbol) continue;
      if ((await onQuoteOf(broker, watched, one, price, quote)) !== 'stale') continue;
      // Canceled, or armed again (a replace) since the watch read it: the new arming meets this quote too.
      const again = await workingTrigger(db, one.row);
      const fresh = again && (await watchedOf(again));
      if (!fresh) continue;
      watched.set(id, fresh);
      await onQuoteOf(broker, watched, fresh, price, quote);
    }
  };

  /** One quote against one trigger: it fires, moves, or does nothing; 'stale' when it fired on an arming no longer working. */
  const onQuoteOf = async (broker: Broker, watched: Map<string, Watched>, one: Watched, price: Decimal, quote: BrokerQuote): Promise<'stale' | undefined> => {
    const step = triggerStepOf(one.state, price, one.tick);
    if (step.kind === 'fired') {
      watched.delete(one.row.clientOrderId);
      return fire(broker, one.row, step, quote);
    }
    if (step.kind === 'moved' && one.state.kind === 'trailing') {
      one.state = { kind: 'trailing', trailing: { ...one.state.trailing, hwm: step.hwm, stopPrice: step.stopPrice } };
      one.unsaved = true;
      if (clock.now().getTime() - one.savedAt >= saveEveryMs) await save(one);
    }
    return undefined;
  };

  /** Brings the held triggers in line with the account's working ones; false when their symbols changed (a new quote stream). */
  const sync = async (account: EmulatedAccount, watched: Map<string, Watched>, symbols: readonly string[]) => {
    const rows = await workingTriggers(db, account);
    if (symbolsOf(rows).join('\n') !== symbols.join('\n')) return false;
    // A trigger armed again (a replace) is taken anew: what the watch held of it was the old arming.
    const armings = new Map(rows.map((row) => [row.clientOrderId, row.armedAt.getTime()]));
    for (const [id, one] of watched) if (armings.get(id) !== one.row.armedAt.getTime()) watched.delete(id);
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

  /**
   * The account's watch in this process, if it runs here, reads its triggers now (the intake's
   * fills arm a bracket's exits where the account's events come in: where its watch runs).
   */
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
    // The child's own first steps (the broker took it: `accepted`) are not the parent's: it has
    // worked, `open`, since its placement. They would move it back.
    return { ...event, client_order_id: parent.clientOrderId, broker_order_id: parent.brokerOrderId, status: parentStatusOf(parent.status, event) };
  };

  /** Whether an event may be a trigger's child's (asParentEvent looks it up): only ids with the child's suffix, which a caller's may not carry. */
  const mayBeChildEvent = (event: TBrokerEvent) => event.client_order_id.endsWith(EMULATED_CHILD_SUFFIX);

  return { watch, wake, changed, asParentEvent, mayBeChildEvent };
};
