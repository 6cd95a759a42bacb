// The opening bell of a simulator whose price walk is off (SIM_TICK_INTERVAL_MS=0): no loop starts
// a round then, so the open of a stock market with working orders starts one itself (what rested
// while closed, or met a price set overnight, trades at the open). One timer on the clock, to the
// earliest next open among the markets that have working orders; never a poll.
import type { TAssetClass } from '../../../contracts/common.ts';
import { wakeAt, type Clock } from '../../clock.ts';
import type { Db } from '../../db/client.ts';
import type { ExchangeRules } from './exchange-rules.ts';
import { hasWorkingOrders } from './queries.ts';

/** The markets that close; crypto trades at every hour and needs no bell. */
const CALENDAR_CLASSES: readonly TAssetClass[] = ['us_equity', 'kr_equity'];

export interface OpeningBellDeps {
  db: Db;
  clock: Clock;
  rules: ExchangeRules;
  /** The round an open starts, given the markets that trade at that moment. */
  round: (opened: readonly TAssetClass[]) => Promise<void>;
  /** Runs work after the caller's turn, for the simulator's idle() and stop() to wait on. */
  track: (work: Promise<void>) => void;
}

export interface OpeningBell {
  /** An order works in the asset class: the bell rings at its market's next open, unless it rings sooner. */
  expect(assetClass: TAssetClass): void;
  /** Arms the bell from the books: every market with working orders (at start, and after each ring). */
  rearm(): Promise<void>;
  stop(): void;
}

export const createOpeningBell = ({ db, clock, rules, round, track }: OpeningBellDeps): OpeningBell => {
  let armed: { at: number; cancel: () => void } | undefined;
  let stopped = false;

  /** Whether a bell at `at` would come no sooner than the one armed. */
  const coveredAt = (at: Date) => armed !== undefined && armed.at <= at.getTime();

  const ringAt = (at: Date) => {
    if (stopped || coveredAt(at)) return;
    armed?.cancel();
    armed = { at: at.getTime(), cancel: wakeAt(clock, at, ring) };
  };

  const rearm = async () => {
    for (const assetClass of CALENDAR_CLASSES) {
      // Asked of the clock each time: a round may take a while.
      const opensAt = rules.nextOpen(assetClass, clock.now());
      if (opensAt && !coveredAt(opensAt) && (await hasWorkingOrders(db, assetClass))) ringAt(opensAt);
    }
  };

  function ring() {
    armed = undefined;
    if (stopped) return;
    const at = clock.now();
    const opened = CALENDAR_CLASSES.filter((assetClass) => rules.isOpen(assetClass, at));
    // The markets that opened get their round; the bell is armed again for the next open even
    // when the round failed (its orders are still working).
    track(round(opened).finally(rearm));
  }

  return {
    expect: (assetClass) => {
      const opensAt = rules.nextOpen(assetClass, clock.now());
      if (opensAt) ringAt(opensAt);
    },
    rearm,
    stop: () => {
      stopped = true;
      armed?.cancel();
      armed = undefined;
    },
  };
};
