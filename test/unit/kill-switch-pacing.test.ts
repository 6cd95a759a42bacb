// The kill switch's evaluations after fills are paced per user and asset class: a burst of fills
// costs one evaluation now and one at the gap's end (which reads them all), not one per fill.
// Accounts with no equity to judge need no database, so the switch runs here on stubs alone.
import { describe, expect, it } from 'vitest';
import type { TAssetClass } from '../../contracts/common.ts';
import { systemClock } from '../../server/clock.ts';
import { loadConfig } from '../../server/config.ts';
import { createKillSwitch, type KillSwitchDeps } from '../../server/live/kill-switch.ts';
import { capturedLogger } from '../support/logs.ts';

const HOUR_MS = 3_600_000;

/** A kill switch whose every evaluation is counted (and finds no account), per user and asset class. */
const countingSwitch = (evaluationGapMs: number) => {
  const evaluations: string[] = [];
  const deps: KillSwitchDeps = {
    // Unused by an evaluation that finds no account: it never reaches the database, the alerts or the orders.
    db: undefined as never,
    alerts: undefined as never,
    events: undefined as never,
    orders: undefined as never,
    forUser: undefined as never,
    jobs: undefined as never,
    mailer: undefined,
    clock: systemClock(),
    config: loadConfig({ NODE_ENV: 'test' }),
    logger: capturedLogger().logger,
    equities: (only) => {
      evaluations.push(`${only?.userId}:${only?.assetClass}`);
      return Promise.resolve([]);
    },
    evaluationGapMs,
  };
  return { killSwitch: createKillSwitch(deps), evaluations };
};

const fill = (userId: number, assetClass: TAssetClass = 'crypto') => ({ userId, assetClass });

describe('kill switch pacing after fills', () => {
  it('evaluates the first fill at once and holds the ones within the gap for its end', async () => {
    const { killSwitch, evaluations } = countingSwitch(HOUR_MS);
    await killSwitch.afterFill(fill(1));
    expect(evaluations).toEqual(['1:crypto']);
    // Within the hour's gap: nothing more runs, however many fills come (the next would run at its end).
    const held = Array.from({ length: 20 }, () => killSwitch.afterFill(fill(1)));
    await new Promise((resolve) => setImmediate(resolve));
    expect(evaluations).toEqual(['1:crypto']);
    // Another user's (or asset class's) fills have their own pace.
    await killSwitch.afterFill(fill(2));
    await killSwitch.afterFill(fill(1, 'us_equity'));
    expect(evaluations).toEqual(['1:crypto', '2:crypto', '1:us_equity']);
    expect(held).toHaveLength(20);
  });

  it('folds the fills of a gap into one evaluation at its end, which follows the last of them', async () => {
    const { killSwitch, evaluations } = countingSwitch(50);
    await killSwitch.afterFill(fill(7));
    const burst = Array.from({ length: 30 }, () => killSwitch.afterFill(fill(7)));
    await Promise.all(burst);
    expect(evaluations).toEqual(['7:crypto', '7:crypto']);
    await killSwitch.idle();
  });
});
