// A fired trigger's sell judged on its own hold (server/orders/risk-gate.ts): at a broker that
// sells only what the account holds free, the risk gate reads no account and no price there (the
// quote that fired it is the price); every rule that reads neither still judges it. Elsewhere (a
// broker that may sell short, or a buy) it reads the account as every placement does.
import { describe, expect, it } from 'vitest';
import type { Broker } from '../../server/brokers/types.ts';
import { loadConfig } from '../../server/config.ts';
import type { Db } from '../../server/db/client.ts';
import { AppError } from '../../server/errors.ts';
import type { GateDeps, OrderAttempt } from '../../server/orders/attempt.ts';
import { riskGate } from '../../server/orders/risk-gate.ts';
import { btcUsdtRow } from '../support/instrument-rows.ts';

const at = new Date('2026-03-10T15:00:00Z');
const instrument = btcUsdtRow(at);

/** A broker whose every read is counted and fails: a gate that needs one cannot pass. */
const readCountingBroker = (sellsOnlyHeld: boolean) => {
  const reads: string[] = [];
  const refuse = (what: string) => () => {
    reads.push(what);
    return Promise.reject(new Error(`${what} was read`));
  };
  const broker = { name: 'exchange', sellsOnlyHeld, quotes: () => ({}), snapshot: refuse('snapshot'), quote: refuse('quote'), account: refuse('account'), positions: refuse('positions') } as unknown as Broker;
  return { broker, reads };
};

const deps: GateDeps = {
  // Never reached: a crypto sell reads no previous close, and a read of the account fails first.
  db: undefined as unknown as Db,
  clock: { now: () => at },
  config: loadConfig({ NODE_ENV: 'test' }),
  forUser: () => Promise.reject(new Error('not used')),
  dayStart: Object.assign(() => Promise.reject(new Error('not used')), { knows: () => false }),
  liveSuspended: () => false,
};

const childSell = (broker: Broker, change: Partial<OrderAttempt> = {}): OrderAttempt => ({
  userId: 1,
  assetClass: 'crypto',
  mode: 'paper',
  side: 'sell',
  qty: '0.5',
  orderType: 'market',
  limitPrice: null,
  stopPrice: null,
  trail: null,
  bracket: null,
  orderClass: 'simple',
  instrument,
  broker,
  liveEnabled: false,
  lockedUntil: null,
  claimed: [],
  quotedPrice: '49000',
  sellsItsHold: true,
  ...change,
});

describe('the risk gate of a fired sell', () => {
  it('passes it on its hold at a broker that sells only what is held, with no read at the broker', async () => {
    const { broker, reads } = readCountingBroker(true);
    await riskGate(childSell(broker), deps);
    await riskGate(childSell(broker, { orderType: 'limit', limitPrice: '48900.5' }), deps);
    expect(reads).toEqual([]);
  });

  it('still judges what needs no read: a limit off the tick grid is refused', async () => {
    const { broker, reads } = readCountingBroker(true);
    const refused = await riskGate(childSell(broker, { orderType: 'limit', limitPrice: '48900.005' }), deps).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe('RISK_RULE_VIOLATION');
    expect(reads).toEqual([]);
  });

  it('reads the account where the broker may sell short, or for a buy, or for a sell not from a trigger', async () => {
    for (const [sellsOnlyHeld, change] of [
      [false, {}],
      [true, { side: 'buy' }],
      [true, { sellsItsHold: false }],
    ] as const) {
      const { broker, reads } = readCountingBroker(sellsOnlyHeld);
      await expect(riskGate(childSell(broker, change), deps)).rejects.toThrow('snapshot was read');
      expect(reads).toContain('snapshot');
    }
  });
});
