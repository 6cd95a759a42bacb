// Fills by polling: KIS's REST API has no event stream of its own (its WebSocket fill notice
// needs another key and decryption, left out here), so the day's order/fill inquiry is read at an
// interval and each order's row compared with the last reading of it. A fill that happened
// between two readings shows as an increase of the cumulative filled quantity and is reported
// once, named by (order date, order number, cumulative quantity): the same fill read again, or
// read by another instance, has the same execution id.
import type { Logger } from '../../observability/logger.ts';
import { BrokerRejectedError, type TBrokerEvent } from '../types.ts';
import { eventsBetween, isReviseOrCancelRow, isWorking, kisBrokerOrderId, readingOf, seoulDate, seoulInstant, type KisAccountKey, type KisOrderReading } from './mapping.ts';
import type { KisDailyOrderRow } from './wire.ts';
import { pause } from '../pause.ts';

export interface KisPollOptions {
  key: KisAccountKey;
  intervalMs: number;
  /** The day's rows (every page). */
  readDay: (orderDate: string) => Promise<KisDailyOrderRow[]>;
  /** Our client order id of a broker order id, '' when the order is not ours. */
  clientOrderIdOf: (brokerOrderId: string) => Promise<string>;
  /**
   * Report the day's fills from its start on the first reading (the service drops the ones it
   * has by execution id), instead of only what changes from the stream's start on. Orders placed
   * after the stream started are reported in full either way.
   */
  replayToday: boolean;
  now: () => Date;
  /** Told after every reading; the next waits for what it returns (tests hold the poller with it). */
  onPoll?: () => void | Promise<void>;
  logger?: Pick<Logger, 'warn'>;
}


/** The account's order events from now on, until the signal aborts; throws only on a refusal (a key KIS will not take). */
export async function* pollKisEvents(options: KisPollOptions, signal: AbortSignal): AsyncGenerator<TBrokerEvent> {
  const readings = new Map<string, KisOrderReading>();
  const startedAt = options.now().getTime();
  let first = true;
  let day = seoulDate(options.now());

  const compare = async function* (rows: KisDailyOrderRow[], today: string): AsyncGenerator<TBrokerEvent> {
    for (const row of rows) {
      if (isReviseOrCancelRow(row)) continue;
      const id = kisBrokerOrderId(row.ord_dt, row.odno);
      const previous = readings.get(id);
      readings.set(id, readingOf(row, today));
      // The second resolution of ORD_TMD: an order of the stream's first second counts as new.
      const placedBeforeStart = seoulInstant(row.ord_dt, row.ord_tmd).getTime() < startedAt - 1_000;
      if (!previous && first && !options.replayToday && placedBeforeStart) continue;
      const events = eventsBetween(previous, row, options.key, today, await options.clientOrderIdOf(id), options.now());
      for (const event of events) yield event;
    }
  };

  while (!signal.aborted) {
    try {
      const today = seoulDate(options.now());
      if (today !== day) {
        // A new day: yesterday's orders still working ended at its close; read them once more so
        // they report expired (or the fills that came before the close), then forget the day.
        const stillWorking = [...readings.entries()].some(([id, reading]) => id.startsWith(day) && isWorking(reading.status));
        if (stillWorking) for await (const event of compare(await options.readDay(day), today)) yield event;
        for (const id of [...readings.keys()]) if (id.startsWith(day)) readings.delete(id);
        day = today;
      }
      const rows = await options.readDay(today);
      if (signal.aborted) return;
      for await (const event of compare(rows, today)) yield event;
      first = false;
    } catch (error) {
      if (error instanceof BrokerRejectedError) throw error;
      // Unavailable: the next reading tries again; nothing is lost, the rows keep their sums.
      options.logger?.warn({ err: error }, 'kis: reading the daily orders failed; trying again at the next interval');
    }
    await options.onPoll?.();
    await pause(options.intervalMs, signal);
  }
}
