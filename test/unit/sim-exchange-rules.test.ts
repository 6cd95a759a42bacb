// The simulator's exchange rules without a database: whether a market trades as the clock crosses
// its bells (the answer is kept between bells, so the edges are what matter), and the band's
// bounds on a price and on a fill.
import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import { createExchangeRules, fillBound, intoBand } from '../../server/brokers/simulator/exchange-rules.ts';
import type { Queryable } from '../../server/db/client.ts';

// isOpen never reads: a database that is not there proves it.
const noDb = undefined as unknown as Queryable;

describe('isOpen', () => {
  it('follows NYSE across its bells, a holiday and an early close, asked in order and out of it', () => {
    const rules = createExchangeRules({ db: noDb, marketHours: 'enforce' });
    const open = (at: string) => rules.isOpen('us_equity', new Date(at));
    // Wednesday 25 November 2026 (EST): 09:30–16:00 New York is 14:30–21:00 UTC.
    expect(open('2026-11-25T14:29:59.999Z')).toBe(false);
    expect(open('2026-11-25T14:30:00.000Z')).toBe(true);
    expect(open('2026-11-25T20:59:59.999Z')).toBe(true);
    expect(open('2026-11-25T21:00:00.000Z')).toBe(false);
    // Thanksgiving: closed all day.
    expect(open('2026-11-26T15:00:00.000Z')).toBe(false);
    // The day after closes at 13:00 New York.
    expect(open('2026-11-27T17:59:59.999Z')).toBe(true);
    expect(open('2026-11-27T18:00:00.000Z')).toBe(false);
    // Back in time: asked again, not taken from the last answer.
    expect(open('2026-11-25T15:00:00.000Z')).toBe(true);
    expect(open('2026-11-25T14:00:00.000Z')).toBe(false);
  });

  it('follows KRX; crypto always trades; ignore opens every market', () => {
    const rules = createExchangeRules({ db: noDb, marketHours: 'enforce' });
    // Tuesday 10 March 2026: 09:00–15:30 Seoul is 00:00–06:30 UTC.
    expect(rules.isOpen('kr_equity', new Date('2026-03-10T00:00:00.000Z'))).toBe(true);
    expect(rules.isOpen('kr_equity', new Date('2026-03-10T06:30:00.000Z'))).toBe(false);
    expect(rules.isOpen('crypto', new Date('2026-11-26T15:00:00.000Z'))).toBe(true);
    const anyHour = createExchangeRules({ db: noDb, marketHours: 'ignore' });
    expect(anyHour.isOpen('us_equity', new Date('2026-11-26T15:00:00.000Z'))).toBe(true);
    expect(anyHour.isOpen('kr_equity', new Date('2026-03-10T06:30:00.000Z'))).toBe(true);
  });
});

describe('nextOpen', () => {
  it('answers the coming bell while closed and the next session\'s while open, across a holiday and an early close', () => {
    const rules = createExchangeRules({ db: noDb, marketHours: 'enforce' });
    const next = (at: string) => rules.nextOpen('us_equity', new Date(at))?.toISOString();
    // Wednesday before the open, during the session and after the close: Thanksgiving is skipped.
    expect(next('2026-11-25T14:29:59.999Z')).toBe('2026-11-25T14:30:00.000Z');
    expect(next('2026-11-25T14:30:00.000Z')).toBe('2026-11-27T14:30:00.000Z');
    expect(next('2026-11-26T15:00:00.000Z')).toBe('2026-11-27T14:30:00.000Z');
    // Friday closes at 13:00 New York; the next bell is Monday's.
    expect(next('2026-11-27T17:00:00.000Z')).toBe('2026-11-30T14:30:00.000Z');
    // Back in time: asked again, not taken from the last answer.
    expect(next('2026-11-25T10:00:00.000Z')).toBe('2026-11-25T14:30:00.000Z');
    expect(rules.nextOpen('kr_equity', new Date('2026-03-10T06:30:00.000Z'))?.toISOString()).toBe('2026-03-11T00:00:00.000Z');
  });

  it('is null for a market that never closes', () => {
    expect(createExchangeRules({ db: noDb, marketHours: 'enforce' }).nextOpen('crypto', new Date('2026-11-26T15:00:00.000Z'))).toBeNull();
    expect(createExchangeRules({ db: noDb, marketHours: 'ignore' }).nextOpen('us_equity', new Date('2026-11-26T15:00:00.000Z'))).toBeNull();
  });
});

describe('the band', () => {
  const band = { lower: new Decimal(35000), upper: new Decimal(65000) };
  const d = (value: string) => new Decimal(value);

  it('moves a price into the band, and leaves it alone without one', () => {
    expect(intoBand(d('80000'), band).toFixed()).toBe('65000');
    expect(intoBand(d('20000'), band).toFixed()).toBe('35000');
    expect(intoBand(d('50000'), band).toFixed()).toBe('50000');
    expect(intoBand(d('80000'), undefined).toFixed()).toBe('80000');
  });

  it("bounds a fill by the edge the order pays through, and by the order's own limit when tighter", () => {
    expect(fillBound('buy', null, band)?.toFixed()).toBe('65000');
    expect(fillBound('sell', null, band)?.toFixed()).toBe('35000');
    expect(fillBound('buy', d('70000'), band)?.toFixed()).toBe('65000');
    expect(fillBound('buy', d('60000'), band)?.toFixed()).toBe('60000');
    expect(fillBound('sell', d('30000'), band)?.toFixed()).toBe('35000');
    expect(fillBound('sell', d('40000'), band)?.toFixed()).toBe('40000');
    expect(fillBound('buy', null, undefined)).toBeNull();
  });
});
