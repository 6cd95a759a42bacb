// The simulator's placement queue puts a batch of placements in rounds (roundsOf): each account
// once per round, its placements in their order, the accounts of a round in one order.
import { describe, expect, it } from 'vitest';
import { roundsOf } from '../../server/brokers/simulator/placement-queue.ts';
import type { AccountKey } from '../../server/brokers/simulator/queries.ts';

const placement = (userId: number, name: string, assetClass: AccountKey['assetClass'] = 'crypto'): { key: AccountKey; name: string } => ({ key: { userId, assetClass, mode: 'paper' }, name });
const names = (rounds: { name: string }[][]) => rounds.map((round) => round.map((item) => item.name));

describe('roundsOf', () => {
  it("puts each account's r-th placement in round r, keeping each account's order", () => {
    const batch = [placement(7, 'a1'), placement(3, 'b1'), placement(7, 'a2'), placement(7, 'a3'), placement(3, 'b2'), placement(5, 'c1')];
    expect(names(roundsOf(batch))).toEqual([['b1', 'c1', 'a1'], ['b2', 'a2'], ['a3']]);
  });

  it('orders the accounts of a round by user, then asset class, then mode, whatever their arrival', () => {
    const batch = [placement(2, 'us', 'us_equity'), placement(2, 'crypto'), placement(1, 'kr', 'kr_equity'), { key: { userId: 2, assetClass: 'crypto', mode: 'live' } as AccountKey, name: 'live' }];
    expect(names(roundsOf(batch))).toEqual([['kr', 'live', 'crypto', 'us']]);
  });

  it('gives one round of one placement for one placement, and none for none', () => {
    expect(names(roundsOf([placement(1, 'only')]))).toEqual([['only']]);
    expect(roundsOf([])).toEqual([]);
  });
});
