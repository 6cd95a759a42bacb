// Matching of the simulated broker: every order type × time in force against one observation,
// partial fills across ticks, bracket OCO pairs and the status machine with its events.
import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import {
  type MatchableOrder,
  type OrderState,
  type TMatchOutcome,
  type TOrderStatus,
  type TOrderTrigger,
  type TTimeInForce,
  bracketLegs,
  type TTrail,
  evaluate,
  followTrail,
  onChildFilled,
  trailStopOf,
  transition,
  validateBracket,
} from '../../server/brokers/matching.ts';
import { krxTickSize } from '../../server/instruments/ticks.ts';

const d = (value: Decimal.Value) => new Decimal(value);

const order = (fields: Partial<MatchableOrder> & Pick<MatchableOrder, 'side' | 'orderType'>): MatchableOrder => ({
  timeInForce: 'gtc',
  qty: d(10),
  filledQty: d(0),
  ...fields,
});

/** An outcome with its decimals as strings, for exact comparison. */
const plain = (outcome: TMatchOutcome) =>
  outcome.kind === 'fill' ? { ...outcome, fillQty: outcome.fillQty.toFixed(), fillReference: outcome.fillReference.toFixed() } : outcome;

const at = (price: Decimal.Value, liquidity?: Decimal.Value, lotSize?: Decimal.Value) => ({
  price: d(price),
  liquidity: liquidity === undefined ? undefined : d(liquidity),
  lotSize: lotSize === undefined ? undefined : d(lotSize),
});

const REST = { kind: 'rest', rest: true };
const fill = (fillQty: string, fillReference: string, thenCancel?: 'ioc') => ({ kind: 'fill', fillQty, fillReference, ...(thenCancel ? { thenCancel } : {}) });

describe('evaluate: market', () => {
  it.each<TTimeInForce>(['day', 'gtc', 'ioc', 'fok'])('fills all at once at the observed price, whatever the liquidity (%s)', (timeInForce) => {
    for (const side of ['buy', 'sell'] as const) {
      expect(plain(evaluate(order({ side, orderType: 'market', timeInForce }), at(100, 1)))).toEqual(fill('10', '100'));
    }
  });

  it('fills only what is left of the order', () => {
    expect(plain(evaluate(order({ side: 'buy', orderType: 'market', filledQty: d('9.7') }), at(100)))).toEqual(fill('0.3', '100'));
  });
});

describe('evaluate: limit', () => {
  const buy = (timeInForce: TTimeInForce) => order({ side: 'buy', orderType: 'limit', limitPrice: d(100), timeInForce });
  const sell = (timeInForce: TTimeInForce) => order({ side: 'sell', orderType: 'limit', limitPrice: d(100), timeInForce });

  it.each<TTimeInForce>(['day', 'gtc'])('%s: rests until the price reaches the limit, then fills at the better price', (tif) => {
    expect(evaluate(buy(tif), at('100.01'))).toEqual(REST);
    expect(plain(evaluate(buy(tif), at(100)))).toEqual(fill('10', '100'));
    expect(plain(evaluate(buy(tif), at('98.5')))).toEqual(fill('10', '98.5'));
    expect(evaluate(sell(tif), at('99.99'))).toEqual(REST);
    expect(plain(evaluate(sell(tif), at(100)))).toEqual(fill('10', '100'));
    expect(plain(evaluate(sell(tif), at('101.5')))).toEqual(fill('10', '101.5'));
  });

  it.each<TTimeInForce>(['day', 'gtc'])('%s: takes at most the liquidity and keeps the rest resting', (tif) => {
    expect(plain(evaluate(buy(tif), at(99, 4)))).toEqual(fill('4', '99'));
    expect(plain(evaluate(sell(tif), at(101, 4)))).toEqual(fill('4', '101'));
    expect(evaluate(buy(tif), at(99, 0))).toEqual(REST);
  });

  it('ioc: fills what it can now and cancels the rest', () => {
    expect(plain(evaluate(buy('ioc'), at(99)))).toEqual(fill('10', '99'));
    expect(plain(evaluate(buy('ioc'), at(99, 4)))).toEqual(fill('4', '99', 'ioc'));
    expect(plain(evaluate(sell('ioc'), at(101, 4)))).toEqual(fill('4', '101', 'ioc'));
    expect(evaluate(buy('ioc'), at(99, 0))).toEqual({ kind: 'cancel', cancel: 'ioc' });
    expect(evaluate(buy('ioc'), at(101))).toEqual({ kind: 'cancel', cancel: 'ioc' });
    expect(evaluate(sell('ioc'), at(99))).toEqual({ kind: 'cancel', cancel: 'ioc' });
  });

  it('fok: fills everything now or cancels', () => {
    expect(plain(evaluate(buy('fok'), at(99, 10)))).toEqual(fill('10', '99'));
    expect(plain(evaluate(sell('fok'), at(101)))).toEqual(fill('10', '101'));
    expect(evaluate(buy('fok'), at(99, '9.99'))).toEqual({ kind: 'cancel', cancel: 'fok' });
    expect(evaluate(buy('fok'), at(101, 100))).toEqual({ kind: 'cancel', cancel: 'fok' });
    expect(evaluate(sell('fok'), at(99, 100))).toEqual({ kind: 'cancel', cancel: 'fok' });
  });

  it('cuts a partial fill down to whole lots', () => {
    expect(plain(evaluate(buy('gtc'), at(99, '2.7', 1)))).toEqual(fill('2', '99'));
    expect(evaluate(buy('gtc'), at(99, '0.7', 1))).toEqual(REST);
  });

  it('refuses a limit order without a limit price', () => {
    expect(() => evaluate(order({ side: 'buy', orderType: 'limit' }), at(1))).toThrow(/limitPrice/);
  });
});

describe('evaluate: stop', () => {
  const buyStop = (timeInForce: TTimeInForce) => order({ side: 'buy', orderType: 'stop', stopPrice: d(105), timeInForce });
  const sellStop = (timeInForce: TTimeInForce) => order({ side: 'sell', orderType: 'stop', stopPrice: d(95), timeInForce });

  it.each<TTimeInForce>(['day', 'gtc'])('%s: rests until triggered, then fills all as a market order at the observed price', (tif) => {
    expect(evaluate(buyStop(tif), at('104.99'))).toEqual(REST);
    expect(plain(evaluate(buyStop(tif), at(105, 1)))).toEqual(fill('10', '105'));
    // A gap through the stop fills at the worse observed price.
    expect(plain(evaluate(buyStop(tif), at(107)))).toEqual(fill('10', '107'));
    expect(evaluate(sellStop(tif), at('95.01'))).toEqual(REST);
    expect(plain(evaluate(sellStop(tif), at(95, 1)))).toEqual(fill('10', '95'));
    expect(plain(evaluate(sellStop(tif), at(90)))).toEqual(fill('10', '90'));
  });

  it.each<'ioc' | 'fok'>(['ioc', 'fok'])('%s: fills all when triggered at once, else cancels', (tif) => {
    expect(plain(evaluate(buyStop(tif), at(106, 1)))).toEqual(fill('10', '106'));
    expect(evaluate(buyStop(tif), at(100))).toEqual({ kind: 'cancel', cancel: tif });
    expect(plain(evaluate(sellStop(tif), at(94)))).toEqual(fill('10', '94'));
    expect(evaluate(sellStop(tif), at(100))).toEqual({ kind: 'cancel', cancel: tif });
  });

  it('refuses a stop order without a stop price', () => {
    expect(() => evaluate(order({ side: 'sell', orderType: 'stop' }), at(1))).toThrow(/stopPrice/);
  });
});

describe('evaluate: stop_limit (a stop with its limit kept)', () => {
  // A sell stop 3,000 limit 2,990, and a buy stop 105 limit 106.
  const sellStopLimit = (fields: Partial<MatchableOrder> = {}) => order({ side: 'sell', orderType: 'stop', stopPrice: d(3000), stopLimit: d(2990), ...fields });
  const buyStopLimit = (fields: Partial<MatchableOrder> = {}) => order({ side: 'buy', orderType: 'stop', stopPrice: d(105), stopLimit: d(106), ...fields });

  it('rests above its stop, and fills as a limit once the stop is reached inside the limit', () => {
    expect(evaluate(sellStopLimit(), at(3001))).toEqual(REST);
    expect(plain(evaluate(sellStopLimit(), at(2995)))).toEqual(fill('10', '2995'));
    expect(evaluate(buyStopLimit(), at(104))).toEqual(REST);
    expect(plain(evaluate(buyStopLimit(), at('105.5')))).toEqual(fill('10', '105.5'));
  });

  it('past a gap beyond its limit does not fill: it triggers and rests (a stop without a limit fills there)', () => {
    expect(evaluate(sellStopLimit(), at('2498.75'))).toEqual({ kind: 'trigger' });
    expect(evaluate(buyStopLimit(), at(120))).toEqual({ kind: 'trigger' });
    expect(plain(evaluate(sellStopLimit({ stopLimit: null }), at('2498.75')))).toEqual(fill('10', '2498.75'));
  });

  it('once triggered is a limit at its limit price, whatever the price does to the stop', () => {
    expect(evaluate(sellStopLimit({ triggered: true }), at(2500))).toEqual(REST);
    // Back above the stop: a sell limit at 2,990 fills at the better price.
    expect(plain(evaluate(sellStopLimit({ triggered: true }), at(3100)))).toEqual(fill('10', '3100'));
    expect(plain(evaluate(buyStopLimit({ triggered: true }), at(100)))).toEqual(fill('10', '100'));
  });

  it('fills at most the liquidity of an observation, as a limit does, and an ioc past its limit cancels', () => {
    expect(plain(evaluate(sellStopLimit({ triggered: true }), at(2995, 4)))).toEqual(fill('4', '2995'));
    expect(evaluate(sellStopLimit({ timeInForce: 'ioc' }), at(2500))).toEqual({ kind: 'cancel', cancel: 'ioc' });
  });
});

describe('partial fills across ticks', () => {
  it('fills a resting limit order tick by tick and reports each step', () => {
    let current: MatchableOrder = order({ side: 'buy', orderType: 'limit', limitPrice: d(100), qty: d(10) });
    let state: OrderState = { status: 'open', qty: d(10), filledQty: d(0) };
    const seen: string[] = [];
    for (const tick of [at(101, 4), at('99.5', 4), at(99, 4), at(102, 4), at(98, 4)]) {
      const outcome = evaluate(current, tick);
      if (outcome.kind !== 'fill') {
        seen.push(outcome.kind);
        continue;
      }
      const next = transition(state, { kind: 'fill', fillQty: outcome.fillQty });
      if (!next.ok) throw new Error(next.reason);
      state = { ...state, status: next.status, filledQty: next.filledQty };
      current = { ...current, filledQty: next.filledQty };
      seen.push(`${next.event} ${outcome.fillQty.toFixed()}@${outcome.fillReference.toFixed()} → ${next.status} ${next.filledQty.toFixed()}`);
    }
    expect(seen).toEqual([
      'rest',
      'partial_fill 4@99.5 → partially_filled 4',
      'partial_fill 4@99 → partially_filled 8',
      'rest',
      'fill 2@98 → filled 10',
    ]);
    expect(() => evaluate(current, at(97))).toThrow(/nothing left to fill/);
  });
});

describe('trailing stops', () => {
  const cent = d('0.01');
  const percent = (p: Decimal.Value): TTrail => ({ percent: d(p) });
  const by = (price: Decimal.Value): TTrail => ({ price: d(price) });

  /**
   * A trailing stop walked over a price path as the simulator walks it: each observation first
   * moves the mark and the stop (followTrail), then meets the order at that stop (evaluate). Each
   * step says the stop after it (and whether it moved) and what the order did.
   */
  const walk = (side: 'buy' | 'sell', trail: TTrail, start: Decimal.Value, prices: Decimal.Value[], tickSize: Decimal | ((price: Decimal) => Decimal) = cent) => {
    let state = { side, trail, hwm: d(start), stopPrice: trailStopOf({ side, mark: d(start), trail, tickSize }) };
    const steps: Array<{ price: string; hwm: string; stop: string; moved: boolean; outcome: ReturnType<typeof plain> }> = [];
    for (const price of prices) {
      const moved = followTrail(state, d(price), tickSize);
      if (moved) state = { ...state, ...moved };
      const outcome = plain(evaluate(order({ side, orderType: 'trailing_stop', stopPrice: state.stopPrice }), at(price)));
      steps.push({ price: d(price).toFixed(), hwm: state.hwm.toFixed(), stop: state.stopPrice.toFixed(), moved: moved !== undefined, outcome });
      if (outcome.kind === 'fill') break;
    }
    return steps;
  };

  it('sets the stop from the mark: a sell below it, a buy above it, by a percent or a price', () => {
    expect(trailStopOf({ side: 'sell', mark: d(100), trail: percent(5), tickSize: cent }).toFixed()).toBe('95');
    expect(trailStopOf({ side: 'buy', mark: d(100), trail: percent(5), tickSize: cent }).toFixed()).toBe('105');
    expect(trailStopOf({ side: 'sell', mark: d(100), trail: by('2.5'), tickSize: cent }).toFixed()).toBe('97.5');
    expect(trailStopOf({ side: 'buy', mark: d(100), trail: by('2.5'), tickSize: cent }).toFixed()).toBe('102.5');
    expect(trailStopOf({ side: 'sell', mark: d(100), trail: percent(50), tickSize: cent }).toFixed()).toBe('50');
  });

  it('rounds the stop onto the grid away from the market, never tighter than asked', () => {
    // 103.09 × 0.95 = 97.9355: a sell's stop goes down to 97.93, not to the nearer 97.94.
    expect(trailStopOf({ side: 'sell', mark: d('103.09'), trail: percent(5), tickSize: cent }).toFixed()).toBe('97.93');
    // 96.67 × 1.05 = 101.5035: a buy's stop goes up to 101.51, not to the nearer 101.5.
    expect(trailStopOf({ side: 'buy', mark: d('96.67'), trail: percent(5), tickSize: cent }).toFixed()).toBe('101.51');
    // A coarse tick: 100.5 × 0.9 = 90.45 goes down to 90; 99.5 × 1.1 = 109.45 up to 110.
    expect(trailStopOf({ side: 'sell', mark: d('100.5'), trail: percent(10), tickSize: d(1) }).toFixed()).toBe('90');
    expect(trailStopOf({ side: 'buy', mark: d('99.5'), trail: percent(10), tickSize: d(1) }).toFixed()).toBe('110');
    // A price trail on a mark off a coarser grid: 100.37 − 0.5 = 99.87 goes down to 99.8 on a 0.1 tick.
    expect(trailStopOf({ side: 'sell', mark: d('100.37'), trail: by('0.5'), tickSize: d('0.1') }).toFixed()).toBe('99.8');
    // The KRX band table, the tick taken at the stop: 52,300 × 0.97 = 50,731 on the 100 KRW band
    // goes down to 50,700; 48,500 × 1.03 = 49,955 on the 50 KRW band goes up to 50,000.
    expect(trailStopOf({ side: 'sell', mark: d(52_300), trail: percent(3), tickSize: krxTickSize }).toFixed()).toBe('50700');
    expect(trailStopOf({ side: 'buy', mark: d(48_500), trail: percent(3), tickSize: krxTickSize }).toFixed()).toBe('50000');
    // A sell's trail as large as the price leaves no stop: 0, which no price reaches.
    expect(trailStopOf({ side: 'sell', mark: d(2), trail: by(3), tickSize: cent }).toFixed()).toBe('0');
  });

  it('a sell follows a rise and not a fall, and triggers at the trail on the way down, filling at the observed price', () => {
    expect(walk('sell', percent(5), 100, [102, 101, 104, 100, '98.81', '98.8', 95])).toEqual([
      { price: '102', hwm: '102', stop: '96.9', moved: true, outcome: REST },
      { price: '101', hwm: '102', stop: '96.9', moved: false, outcome: REST },
      { price: '104', hwm: '104', stop: '98.8', moved: true, outcome: REST },
      { price: '100', hwm: '104', stop: '98.8', moved: false, outcome: REST },
      { price: '98.81', hwm: '104', stop: '98.8', moved: false, outcome: REST },
      { price: '98.8', hwm: '104', stop: '98.8', moved: false, outcome: fill('10', '98.8') },
    ]);
  });

  it('a sell fills at the gap when the price jumps through its stop', () => {
    expect(walk('sell', by(2), 100, [105, 90]).map(({ stop, outcome }) => ({ stop, outcome }))).toEqual([
      { stop: '103', outcome: REST },
      { stop: '103', outcome: fill('10', '90') },
    ]);
  });

  it('a buy mirrors it: follows a fall and not a rise, triggers at the trail on the way up, fills at the gap', () => {
    expect(walk('buy', by(3), 100, [98, 99, '97.5', '100.49', '100.5'])).toEqual([
      { price: '98', hwm: '98', stop: '101', moved: true, outcome: REST },
      { price: '99', hwm: '98', stop: '101', moved: false, outcome: REST },
      { price: '97.5', hwm: '97.5', stop: '100.5', moved: true, outcome: REST },
      { price: '100.49', hwm: '97.5', stop: '100.5', moved: false, outcome: REST },
      { price: '100.5', hwm: '97.5', stop: '100.5', moved: false, outcome: fill('10', '100.5') },
    ]);
    expect(walk('buy', percent(10), 100, [90, 120]).map(({ stop, outcome }) => ({ stop, outcome }))).toEqual([
      { stop: '99', outcome: REST },
      { stop: '99', outcome: fill('10', '120') },
    ]);
  });

  it('moves nothing on a flat price or a fall, nor on a new mark the grid rounds to the same stop; it never loosens', () => {
    const state = { side: 'sell' as const, trail: percent(10), hwm: d(100), stopPrice: d(90) };
    expect(followTrail(state, d(100), d(1))).toBeUndefined();
    expect(followTrail(state, d(99), d(1))).toBeUndefined();
    // 101 × 0.9 = 90.9, down to 90 on a whole tick: the same stop, nothing to write.
    expect(followTrail(state, d(101), d(1))).toBeUndefined();
    const moved = followTrail(state, d(102), d(1))!;
    expect([moved.hwm.toFixed(), moved.stopPrice.toFixed()]).toEqual(['102', '91']);
    // A stop already tighter than a new mark would set stays where it is.
    expect(followTrail({ ...state, stopPrice: d(95) }, d(102), d(1))).toBeUndefined();
    const buy = { side: 'buy' as const, trail: percent(10), hwm: d(100), stopPrice: d(110) };
    expect(followTrail(buy, d(101), d(1))).toBeUndefined();
    expect(followTrail(buy, d('99.5'), d(1))).toBeUndefined();
    const down = followTrail(buy, d(98), d(1))!;
    expect([down.hwm.toFixed(), down.stopPrice.toFixed()]).toEqual(['98', '108']);
  });
});

describe('brackets', () => {
  const bracket = { takeProfit: d(110), stopLoss: d(95) };

  it('accepts stop_loss < entry < take_profit on a buy', () => {
    expect(validateBracket({ side: 'buy', entryReference: d(100), bracket })).toBeUndefined();
  });

  it('refuses a stop-loss at or above the entry', () => {
    expect(validateBracket({ side: 'buy', entryReference: d(100), bracket: { ...bracket, stopLoss: d(100) } })).toBe('bracket stop_loss 100 must be below the entry price 100');
    expect(validateBracket({ side: 'buy', entryReference: d(100), bracket: { ...bracket, stopLoss: d(101) } })).toMatch(/stop_loss 101 must be below/);
  });

  it('refuses a take-profit at or below the entry', () => {
    expect(validateBracket({ side: 'buy', entryReference: d(100), bracket: { ...bracket, takeProfit: d(100) } })).toBe('bracket take_profit 100 must be above the entry price 100');
    expect(validateBracket({ side: 'buy', entryReference: d(100), bracket: { takeProfit: d(90), stopLoss: d(95) } })).toMatch(/take_profit 90 must be above/);
  });

  it('refuses a bracket on a sell and non-positive prices', () => {
    expect(validateBracket({ side: 'sell', entryReference: d(100), bracket })).toMatch(/only buy orders/);
    expect(validateBracket({ side: 'buy', entryReference: d(100), bracket: { ...bracket, stopLoss: d(0) } })).toMatch(/greater than 0/);
    expect(validateBracket({ side: 'buy', entryReference: d(100), bracket: { ...bracket, stopLossLimit: d(-1) } })).toMatch(/stop_loss_limit/);
  });

  /** The legs of an entry filled at 100 on a cent grid. */
  const legsOf = (entry: { side: 'buy' | 'sell'; filledQty: ReturnType<typeof d> }, spec: Parameters<typeof bracketLegs>[1]) => bracketLegs(entry, spec, { mark: d(100), tickSize: d('0.01') });
  const pairOf = (entry: { side: 'buy' | 'sell'; filledQty: ReturnType<typeof d> }, spec: Parameters<typeof bracketLegs>[1]) => {
    const [takeProfit, stopLoss] = legsOf(entry, spec);
    return { takeProfit: takeProfit!, stopLoss: stopLoss! };
  };

  it('makes a take-profit limit sell and a stop-loss stop sell of the filled quantity, gtc', () => {
    const pair = pairOf({ side: 'buy', filledQty: d('7.5') }, { ...bracket, stopLossLimit: d('94.5') });
    expect(pair.takeProfit).toMatchObject({ leg: 'take_profit', side: 'sell', orderType: 'limit', stopPrice: null, timeInForce: 'gtc', metadata: {} });
    expect(pair.takeProfit.limitPrice?.toFixed()).toBe('110');
    expect(pair.stopLoss).toMatchObject({ leg: 'stop_loss', side: 'sell', orderType: 'stop', limitPrice: null, timeInForce: 'gtc', metadata: { stop_limit_price: '94.5' } });
    expect(pair.stopLoss.stopPrice?.toFixed()).toBe('95');
    expect([pair.takeProfit.qty.toFixed(), pair.stopLoss.qty.toFixed()]).toEqual(['7.5', '7.5']);
    expect(pairOf({ side: 'buy', filledQty: d(1) }, bracket).stopLoss.metadata).toEqual({});
  });

  it('refuses children for a sell entry or one that filled nothing', () => {
    expect(() => legsOf({ side: 'sell', filledQty: d(1) }, bracket)).toThrow(/must be a buy/);
    expect(() => legsOf({ side: 'buy', filledQty: d(0) }, bracket)).toThrow(/filled entry/);
  });

  it('makes a trailing stop leg whose mark is the entry’s fill, and one leg only for an OTO', () => {
    const [takeProfit, trailing] = legsOf({ side: 'buy', filledQty: d(2) }, { takeProfit: d(110), stopLoss: null, trail: { percent: d(3) } });
    expect(takeProfit).toMatchObject({ leg: 'take_profit', orderType: 'limit' });
    expect(trailing).toMatchObject({ leg: 'stop_loss', side: 'sell', orderType: 'trailing_stop', limitPrice: null, timeInForce: 'gtc', metadata: { trail_percent: '3', hwm: '100' } });
    expect(trailing!.stopPrice?.toFixed()).toBe('97');
    const byPrice = legsOf({ side: 'buy', filledQty: d(2) }, { takeProfit: null, stopLoss: null, trail: { price: d('2.5') } });
    expect(byPrice).toHaveLength(1);
    expect(byPrice[0]).toMatchObject({ orderType: 'trailing_stop', metadata: { trail_price: '2.5', hwm: '100' } });
    expect(byPrice[0]!.stopPrice?.toFixed()).toBe('97.5');
    expect(legsOf({ side: 'buy', filledQty: d(2) }, { takeProfit: d(110), stopLoss: null }).map((leg) => leg.leg)).toEqual(['take_profit']);
    expect(legsOf({ side: 'buy', filledQty: d(2) }, { takeProfit: null, stopLoss: d(95) }).map((leg) => leg.leg)).toEqual(['stop_loss']);
  });

  it('judges an OTO’s one leg and a trailing leg, and refuses a bracket with no leg or two stop legs', () => {
    expect(validateBracket({ side: 'buy', entryReference: d(100), bracket: { takeProfit: d(110), stopLoss: null } })).toBeUndefined();
    expect(validateBracket({ side: 'buy', entryReference: d(100), bracket: { takeProfit: null, stopLoss: d(95) } })).toBeUndefined();
    expect(validateBracket({ side: 'buy', entryReference: d(100), bracket: { takeProfit: d(110), stopLoss: null, trail: { percent: d(2) } } })).toBeUndefined();
    expect(validateBracket({ side: 'buy', entryReference: d(100), bracket: { takeProfit: null, stopLoss: d(105) } })).toMatch(/stop_loss 105 must be below/);
    expect(validateBracket({ side: 'buy', entryReference: d(100), bracket: { takeProfit: null, stopLoss: null } })).toMatch(/needs a take_profit or a stop leg/);
    expect(validateBracket({ side: 'buy', entryReference: d(100), bracket: { takeProfit: d(110), stopLoss: d(95), trail: { percent: d(2) } } })).toMatch(/not both/);
    expect(validateBracket({ side: 'buy', entryReference: d(100), bracket: { takeProfit: d(110), stopLoss: null, stopLossLimit: d(94), trail: { percent: d(2) } } })).toMatch(/belongs to a stop_loss/);
  });

  /** Runs both legs against a price path until one fills; returns what happened to the other. */
  const runOco = (prices: ReturnType<typeof at>[]) => {
    const pair = pairOf({ side: 'buy', filledQty: d(10) }, bracket);
    const legs = [pair.takeProfit, pair.stopLoss];
    for (const tick of prices) {
      for (const leg of legs) {
        const outcome = evaluate({ ...leg, filledQty: d(0) }, tick);
        if (outcome.kind === 'fill') return { filled: leg.leg, ...onChildFilled({ pair, leg: leg.leg, filledQty: outcome.fillQty }) };
      }
    }
    return undefined;
  };

  it('cancels the stop-loss when the take-profit fills', () => {
    const result = runOco([at(105), at(109), at(111)]);
    expect(result?.filled).toBe('take_profit');
    expect(result?.action).toBe('cancel');
    expect(result?.sibling.leg).toBe('stop_loss');
  });

  it('cancels the take-profit when the stop-loss triggers', () => {
    const result = runOco([at(99), at(96), at(94)]);
    expect(result?.filled).toBe('stop_loss');
    expect(result?.action).toBe('cancel');
    expect(result?.sibling.leg).toBe('take_profit');
  });

  it('shrinks the stop-loss to what is still held when the take-profit fills in part', () => {
    const result = runOco([at(111, 3)]);
    expect(result?.filled).toBe('take_profit');
    expect(result?.action).toBe('resize');
    expect(result?.action === 'resize' ? result.qty.toFixed() : undefined).toBe('7');
    expect(result?.sibling.leg).toBe('stop_loss');
  });

  it('refuses a leg fill beyond the leg', () => {
    const pair = pairOf({ side: 'buy', filledQty: d(10) }, bracket);
    expect(() => onChildFilled({ pair, leg: 'stop_loss', filledQty: d(11) })).toThrow(/outside the leg/);
  });
});

describe('transition', () => {
  const state = (status: TOrderStatus, filledQty: Decimal.Value = 0): OrderState => ({ status, qty: d(10), filledQty: d(filledQty) });
  const result = (from: OrderState, trigger: TOrderTrigger) => {
    const next = transition(from, trigger);
    return next.ok ? { status: next.status, filledQty: next.filledQty.toFixed(), event: next.event } : { reason: next.reason };
  };

  it('walks accepted → open → partially_filled → filled, one event per step', () => {
    expect(result(state('pending'), { kind: 'accept' })).toEqual({ status: 'accepted', filledQty: '0', event: 'accepted' });
    expect(result(state('accepted'), { kind: 'open' })).toEqual({ status: 'open', filledQty: '0', event: 'open' });
    expect(result(state('open'), { kind: 'fill', fillQty: d(4) })).toEqual({ status: 'partially_filled', filledQty: '4', event: 'partial_fill' });
    expect(result(state('partially_filled', 4), { kind: 'fill', fillQty: d(6) })).toEqual({ status: 'filled', filledQty: '10', event: 'fill' });
  });

  it('fills an accepted market order straight away', () => {
    expect(result(state('accepted'), { kind: 'fill', fillQty: d(10) })).toEqual({ status: 'filled', filledQty: '10', event: 'fill' });
  });

  it('adds fractional fills exactly', () => {
    const from: OrderState = { status: 'partially_filled', qty: d('0.3'), filledQty: d('0.1') };
    expect(result(from, { kind: 'fill', fillQty: d('0.2') })).toEqual({ status: 'filled', filledQty: '0.3', event: 'fill' });
  });

  it('cancels, expires and rejects, keeping what was filled', () => {
    expect(result(state('partially_filled', 4), { kind: 'cancel' })).toEqual({ status: 'canceled', filledQty: '4', event: 'canceled' });
    expect(result(state('open'), { kind: 'expire' })).toEqual({ status: 'expired', filledQty: '0', event: 'expired' });
    expect(result(state('partially_filled', 3), { kind: 'expire' })).toEqual({ status: 'expired', filledQty: '3', event: 'expired' });
    expect(result(state('pending'), { kind: 'reject' })).toEqual({ status: 'rejected', filledQty: '0', event: 'rejected' });
    expect(result(state('accepted'), { kind: 'reject' })).toEqual({ status: 'rejected', filledQty: '0', event: 'rejected' });
  });

  it.each<TOrderStatus>(['filled', 'canceled', 'rejected', 'expired'])('moves a finished (%s) order nowhere', (status) => {
    for (const trigger of [{ kind: 'accept' }, { kind: 'open' }, { kind: 'fill', fillQty: d(1) }, { kind: 'cancel' }, { kind: 'reject' }, { kind: 'expire' }] as const) {
      expect(result(state(status), trigger)).toEqual({ reason: `cannot ${trigger.kind} an order that is ${status}` });
    }
  });

  it('refuses steps out of order', () => {
    expect(result(state('pending'), { kind: 'fill', fillQty: d(1) })).toEqual({ reason: 'cannot fill an order that is pending' });
    expect(result(state('pending'), { kind: 'cancel' })).toEqual({ reason: 'cannot cancel an order that is pending' });
    expect(result(state('open'), { kind: 'accept' })).toEqual({ reason: 'cannot accept an order that is open' });
    expect(result(state('open'), { kind: 'reject' })).toEqual({ reason: 'cannot reject an order that is open' });
    expect(result(state('partially_filled', 1), { kind: 'open' })).toEqual({ reason: 'cannot open an order that is partially_filled' });
  });

  it('refuses an overfill and an empty fill', () => {
    expect(result(state('partially_filled', 8), { kind: 'fill', fillQty: d(3) })).toEqual({ reason: 'fill of 3 would exceed the order quantity 10' });
    expect(result(state('open'), { kind: 'fill', fillQty: d(0) })).toEqual({ reason: 'a fill must have a positive quantity' });
  });
});
