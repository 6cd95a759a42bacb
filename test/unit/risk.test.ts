// The risk manager at its edges: the order of its checks, the lock and its exits, market hours
// across the New York DST switch and NYSE/KRX holidays, KRX price limits and ticks, funds,
// position sizing and the daily loss bound, each exactly at its bound and a hair beyond.
import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../server/errors.ts';
import { krxTickSize } from '../../server/instruments/ticks.ts';
import {
  type RiskAttempt,
  type RiskSettings,
  type RiskVerdict,
  RISK_CHECK_ORDER,
  checkRisk,
  riskRefusalError,
  riskSettingsFromConfig,
} from '../../server/orders/risk.ts';
import { dailyPnlPct, dayStartSnapshot } from '../../server/controls/day-start.ts';
import type { WorkingOrder } from '../../server/brokers/funds.ts';
import { krxPriceLimits } from '../../server/markets/krx-prices.ts';
import { offTickGrid } from '../../server/orders/risk/price-grid.ts';

const d = (value: Decimal.Value) => new Decimal(value);
const at = (iso: string) => new Date(iso);

const SETTINGS: RiskSettings = {
  marketHours: 'enforce',
  defaultStopPct: d(5),
  maxRiskPerTradePct: d(2),
  dailyLossLimitPct: d(5),
};

/** Tuesday 2026-03-10, 11:00 in New York (EDT): the NYSE is open. */
const NYSE_OPEN = '2026-03-10T15:00:00Z';
/** Tuesday 2026-03-10, 10:00 in Seoul: the KRX is open. */
const KRX_OPEN = '2026-03-10T01:00:00Z';

/** A market buy of 10 US shares at 100 that every check lets through. */
const usBuy = (over: Partial<RiskAttempt> = {}): RiskAttempt => ({
  assetClass: 'us_equity',
  side: 'buy',
  qty: d(10),
  orderType: 'market',
  referencePrice: d(100),
  tickRule: 'fixed',
  tickSize: d('0.01'),
  account: { equity: d(100_000), buyingPower: d(100_000) },
  heldQty: d(0),
  at: at(NYSE_OPEN),
  ...over,
});

/** A limit buy of one KRX share at 61,100 (previous close 47,000, so the upper limit is 61,100). */
const krBuy = (over: Partial<RiskAttempt> = {}): RiskAttempt => ({
  assetClass: 'kr_equity',
  side: 'buy',
  qty: d(1),
  orderType: 'limit',
  limitPrice: d(61_100),
  referencePrice: d(61_000),
  previousClose: d(47_000),
  tickRule: 'krx_bands',
  tickSize: d(1),
  account: { equity: d(100_000_000), buyingPower: d(100_000_000) },
  heldQty: d(0),
  at: at(KRX_OPEN),
  ...over,
});

/** The refusal without its message, or 'ok'. */
const outcome = (verdict: RiskVerdict) => (verdict.ok ? 'ok' : { code: verdict.code, rule: verdict.rule });
const messageOf = (verdict: RiskVerdict) => (verdict.ok ? '' : verdict.message);
const check = (attempt: RiskAttempt, settings: Partial<RiskSettings> = {}) => checkRisk(attempt, { ...SETTINGS, ...settings });

const LOCKED = { code: 'RISK_RULE_VIOLATION', rule: 'emergency_lock' } as const;
const CLOSED = { code: 'MARKET_CLOSED', rule: 'market_hours' } as const;
const PRICE_LIMIT = { code: 'RISK_RULE_VIOLATION', rule: 'price_limit' } as const;
const TICK = { code: 'RISK_RULE_VIOLATION', rule: 'tick_size' } as const;
const FUNDS = { code: 'INSUFFICIENT_FUNDS', rule: 'funds' } as const;
const SIZING = { code: 'RISK_RULE_VIOLATION', rule: 'position_sizing' } as const;
const DAILY_LOSS = { code: 'RISK_RULE_VIOLATION', rule: 'daily_loss' } as const;

describe('order of the checks', () => {
  it('runs in DESIGN order', () => {
    expect(RISK_CHECK_ORDER).toEqual(['emergency_lock', 'market_hours', 'price_limit', 'tick_size', 'funds', 'position_sizing', 'daily_loss']);
  });

  it('answers the first refusal: a request failing the lock and the funds check gets the lock', () => {
    const attempt = usBuy({ lockedUntil: at('2026-03-11T15:00:00Z'), account: { equity: d(100), buyingPower: d(1) } });
    expect(outcome(check(attempt))).toEqual(LOCKED);
  });

  it('puts each check before the next one', () => {
    const broke = { account: { equity: d(100), buyingPower: d(1) }, dayStartEquity: d(1_000) };
    // Closed market over funds, sizing and loss.
    expect(outcome(check(usBuy({ ...broke, at: at('2026-03-07T15:00:00Z') })))).toEqual(CLOSED);
    // The daily band over the tick grid and funds.
    expect(outcome(check(krBuy({ ...broke, limitPrice: d(61_150) })))).toEqual(PRICE_LIMIT);
    // The tick grid over funds.
    expect(outcome(check(krBuy({ ...broke, limitPrice: d(61_050) })))).toEqual(TICK);
    // Funds over sizing and loss.
    expect(outcome(check(usBuy(broke)))).toEqual(FUNDS);
    // Sizing over the loss bound: 10 × 100.05 × 5 % = 50.025 is over 2 % of 100.
    expect(outcome(check(usBuy({ ...broke, account: { equity: d(100), buyingPower: d(10_000) } })))).toEqual(SIZING);
  });

  it('lets an ordinary order through', () => {
    expect(check(usBuy())).toEqual({ ok: true });
    expect(check(krBuy())).toEqual({ ok: true });
  });
});

describe('emergency lock', () => {
  const lockedUntil = at('2026-03-11T15:00:00Z');

  it('refuses while the lock holds and says until when', () => {
    const verdict = check(usBuy({ lockedUntil }));
    expect(outcome(verdict)).toEqual(LOCKED);
    expect(messageOf(verdict)).toContain('until 2026-03-11T15:00:00.000Z');
  });

  it('lets orders through from the lock end on, and without a lock', () => {
    expect(check(usBuy({ lockedUntil, at: at('2026-03-11T15:00:00Z') }))).toEqual({ ok: true });
    expect(outcome(check(usBuy({ lockedUntil, at: at('2026-03-11T14:59:59.999Z') })))).toEqual(LOCKED);
    expect(check(usBuy({ lockedUntil: null }))).toEqual({ ok: true });
  });

  it('judges buys only: a sell of what is held passes, a sell beyond it meets the funds rule, a buy stays locked', () => {
    const exit = usBuy({ side: 'sell', heldQty: d(10), lockedUntil });
    expect(check(exit)).toEqual({ ok: true });
    expect(outcome(check({ ...exit, qty: d(11) }))).toEqual({ code: 'INSUFFICIENT_FUNDS', rule: 'funds' });
    expect(outcome(check({ ...exit, side: 'buy' }))).toEqual(LOCKED);
  });

  it('does not open a closed market for a sell under the lock: liquidations wait for the open', () => {
    const exit = usBuy({ side: 'sell', heldQty: d(10), lockedUntil, at: at('2026-03-07T15:00:00Z') });
    expect(outcome(check(exit))).toEqual(CLOSED);
  });
});

describe('market hours', () => {
  const usAt = (iso: string) => check(usBuy({ at: at(iso) }));
  const krAt = (iso: string) => check(krBuy({ at: at(iso) }));

  it('opens the NYSE at 09:30 New York time on the first Monday of EDT (13:30 UTC)', () => {
    expect(usAt('2026-03-09T13:30:00Z')).toEqual({ ok: true });
    const before = usAt('2026-03-09T13:29:59Z');
    expect(outcome(before)).toEqual(CLOSED);
    expect(messageOf(before)).toContain('opens at 2026-03-09T13:30:00.000Z');
  });

  it('opens it at 14:30 UTC the Friday before, still on EST', () => {
    expect(usAt('2026-03-06T14:30:00Z')).toEqual({ ok: true });
    expect(outcome(usAt('2026-03-06T14:29:59Z'))).toEqual(CLOSED);
    expect(outcome(usAt('2026-03-06T21:00:00Z'))).toEqual(CLOSED);
    expect(usAt('2026-03-06T20:59:59Z')).toEqual({ ok: true });
  });

  it('is closed on a weekend and points at Monday', () => {
    const saturday = usAt('2026-03-07T15:00:00Z');
    expect(outcome(saturday)).toEqual(CLOSED);
    expect(messageOf(saturday)).toContain('opens at 2026-03-09T13:30:00.000Z');
    expect(outcome(krAt('2026-03-08T01:00:00Z'))).toEqual(CLOSED);
  });

  it('is closed on an NYSE holiday and closes at 13:00 on an early-close day', () => {
    expect(outcome(usAt('2026-11-26T16:00:00Z'))).toEqual(CLOSED); // Thanksgiving
    expect(outcome(usAt('2026-07-03T15:00:00Z'))).toEqual(CLOSED); // Independence Day, observed
    expect(usAt('2026-11-27T17:59:59Z')).toEqual({ ok: true }); // the day after Thanksgiving, EST
    expect(outcome(usAt('2026-11-27T18:00:00Z'))).toEqual(CLOSED);
  });

  it('is closed on a KRX holiday (Seollal 2026) and points at the next session', () => {
    const seollal = krAt('2026-02-17T01:00:00Z');
    expect(outcome(seollal)).toEqual(CLOSED);
    expect(messageOf(seollal)).toContain('opens at 2026-02-19T00:00:00.000Z');
    expect(krAt('2026-02-19T00:00:00Z')).toEqual({ ok: true });
  });

  it('keeps the KRX session 09:00–15:30 Seoul time', () => {
    expect(outcome(krAt('2026-03-09T23:59:59Z'))).toEqual(CLOSED);
    expect(krAt('2026-03-10T00:00:00Z')).toEqual({ ok: true });
    expect(krAt('2026-03-10T06:29:59Z')).toEqual({ ok: true });
    expect(outcome(krAt('2026-03-10T06:30:00Z'))).toEqual(CLOSED);
  });

  it('keeps crypto open on weekends and exchange holidays', () => {
    const crypto = usBuy({ assetClass: 'crypto' });
    for (const iso of ['2026-03-07T03:00:00Z', '2026-03-08T06:30:00Z', '2026-02-17T01:00:00Z', '2026-11-26T16:00:00Z']) {
      expect(check({ ...crypto, at: at(iso) })).toEqual({ ok: true });
    }
  });

  it('is not checked with RISK_MARKET_HOURS=ignore', () => {
    expect(check(usBuy({ at: at('2026-03-07T15:00:00Z') }), { marketHours: 'ignore' })).toEqual({ ok: true });
    expect(check(krBuy({ at: at('2026-02-17T01:00:00Z') }), { marketHours: 'ignore' })).toEqual({ ok: true });
  });
});

describe('KRX daily price limit', () => {
  const atLimit = (limitPrice: Decimal.Value, over: Partial<RiskAttempt> = {}) => check(krBuy({ previousClose: d(50_000), limitPrice: d(limitPrice), ...over }));

  it('passes exactly +30 % and refuses one tick beyond', () => {
    expect(atLimit(65_000)).toEqual({ ok: true });
    const beyond = atLimit(65_100);
    expect(outcome(beyond)).toEqual(PRICE_LIMIT);
    expect(messageOf(beyond)).toContain('above the upper price limit 65000');
  });

  it('passes exactly −30 % and refuses one tick below (a finer band)', () => {
    expect(atLimit(35_000)).toEqual({ ok: true });
    const below = atLimit(34_950);
    expect(outcome(below)).toEqual(PRICE_LIMIT);
    expect(messageOf(below)).toContain('below the lower price limit 35000');
  });

  it('holds stop prices to the band as well, sells included', () => {
    const stopBuy = { orderType: 'stop', stopPrice: d(65_100), limitPrice: undefined } as const;
    expect(outcome(atLimit(0, stopBuy))).toEqual(PRICE_LIMIT);
    const sell = { side: 'sell', heldQty: d(1), orderType: 'stop', stopPrice: d(34_950), limitPrice: undefined } as const;
    expect(outcome(atLimit(0, sell))).toEqual(PRICE_LIMIT);
  });

  it('holds a market order to the band at the price it would fill at (slippage and tick included)', () => {
    const market = (referencePrice: number, over: Partial<RiskAttempt> = {}) => check(krBuy({ previousClose: d(50_000), orderType: 'market', limitPrice: undefined, referencePrice: d(referencePrice), ...over }));
    expect(market(64_000)).toEqual({ ok: true });
    // 65,000 is the upper limit itself, but a market buy fills a tick above it after slippage.
    const above = market(65_000);
    expect(outcome(above)).toEqual(PRICE_LIMIT);
    expect(messageOf(above)).toContain('expected fill price 65100 is above the upper price limit 65000');
    const below = market(35_000, { side: 'sell', heldQty: d(1) });
    expect(outcome(below)).toEqual(PRICE_LIMIT);
    expect(messageOf(below)).toContain('below the lower price limit 35000');
  });

  it('is skipped without a previous close and outside kr_equity', () => {
    expect(check(krBuy({ previousClose: undefined, limitPrice: d(90_000) }))).toEqual({ ok: true });
    expect(check(usBuy({ orderType: 'limit', limitPrice: d(200), previousClose: d(100) }))).toEqual({ ok: true });
  });

  it('computes the limits the way KRX does, across tick bands', () => {
    const limits = (base: number) => {
      const { lower, upper } = krxPriceLimits(d(base), krxTickSize);
      return [lower.toFixed(), upper.toFixed()];
    };
    expect(limits(47_000)).toEqual(['32900', '61100']);
    // KRX's own example base (9,940 × 0.3 = 2,982 → 2,980), with today's 10-won tick above 10,000.
    expect(limits(9_940)).toEqual(['6960', '12920']);
    // 16,010 + 4,800 = 20,810 lands in the 50-won band and is cut down to 20,800.
    expect(limits(16_010)).toEqual(['11210', '20800']);
  });
});

describe('KRX tick grid', () => {
  it('refuses a limit one step off the 100-won grid and names the nearest valid prices', () => {
    const verdict = check(krBuy({ limitPrice: d(61_050) }));
    expect(outcome(verdict)).toEqual(TICK);
    expect(messageOf(verdict)).toContain('tick 100');
    expect(messageOf(verdict)).toContain('nearest valid prices are 61000 or 61100');
  });

  it('passes prices on the grid of their band, band edges included', () => {
    expect(check(krBuy({ limitPrice: d(61_000) }))).toEqual({ ok: true });
    expect(check(krBuy({ limitPrice: d(50_000) }))).toEqual({ ok: true });
    expect(check(krBuy({ limitPrice: d(49_950) }))).toEqual({ ok: true });
  });

  it('names neighbours on their own bands at a band edge', () => {
    expect(offTickGrid(d(49_990), krxTickSize)?.nearest.map(String)).toEqual(['49950', '50000']);
    expect(offTickGrid(d(50_050), krxTickSize)?.nearest.map(String)).toEqual(['50000', '50100']);
    expect(offTickGrid(d('0.5'), krxTickSize)?.nearest.map(String)).toEqual(['1']);
    expect(offTickGrid(d(61_100), krxTickSize)).toBeUndefined();
  });

  it('checks stop prices and the bracket legs too', () => {
    const stopBuy = check(krBuy({ orderType: 'stop', stopPrice: d(61_010), limitPrice: undefined }));
    expect(outcome(stopBuy)).toEqual(TICK);
    expect(messageOf(stopBuy)).toContain('stop price 61010');
    const bracket = check(krBuy({ bracket: { takeProfit: d(70_000), stopLoss: d(58_050) } }));
    expect(outcome(bracket)).toEqual(TICK);
    expect(messageOf(bracket)).toContain('stop-loss price 58050');
  });

  it("checks a bracket's stop-loss limit on the grid of its own band", () => {
    const legs = { takeProfit: d(70_000), stopLoss: d(58_000) };
    const off = check(krBuy({ bracket: { ...legs, stopLossLimit: d(49_990) } }));
    expect(outcome(off)).toEqual(TICK);
    expect(messageOf(off)).toContain('stop-loss limit price 49990');
    expect(messageOf(off)).toContain('nearest valid prices are 49950 or 50000');
    expect(check(krBuy({ bracket: { ...legs, stopLossLimit: d(57_900) } }))).toEqual({ ok: true });
  });

  it('uses a fixed tick where the instrument has one (an ETF trades in 5 won)', () => {
    const etf = { tickRule: 'fixed', tickSize: d(5), previousClose: d(10_000) } as const;
    expect(check(krBuy({ ...etf, limitPrice: d(10_005) }))).toEqual({ ok: true });
    const off = check(krBuy({ ...etf, limitPrice: d(10_003) }));
    expect(outcome(off)).toEqual(TICK);
    expect(messageOf(off)).toContain('10000 or 10005');
  });

});

describe('US and crypto tick grids', () => {
  it('holds US prices to whole cents at or above $1 (SEC Rule 612) and names the nearest', () => {
    const off = check(usBuy({ orderType: 'limit', limitPrice: d('100.005') }));
    expect(outcome(off)).toEqual(TICK);
    expect(messageOf(off)).toContain('SEC Rule 612');
    expect(messageOf(off)).toContain('nearest valid prices are 100 or 100.01');
    expect(check(usBuy({ orderType: 'limit', limitPrice: d('100.01') }))).toEqual({ ok: true });
    expect(outcome(check(usBuy({ orderType: 'limit', limitPrice: d('1.0001') })))).toEqual(TICK);
  });

  it('takes $0.0001 below $1, whatever the instrument says, and refuses finer', () => {
    const penny = { referencePrice: d('0.5'), qty: d(100) } as const;
    expect(check(usBuy({ ...penny, orderType: 'limit', limitPrice: d('0.5001') }))).toEqual({ ok: true });
    const off = check(usBuy({ ...penny, orderType: 'limit', limitPrice: d('0.99995') }));
    expect(outcome(off)).toEqual(TICK);
    expect(messageOf(off)).toContain('0.9999 or 1');
  });

  it('checks US stop prices and bracket legs', () => {
    expect(outcome(check(usBuy({ orderType: 'stop', stopPrice: d('101.001') })))).toEqual(TICK);
    const bracket = check(usBuy({ orderType: 'limit', limitPrice: d(100), bracket: { takeProfit: d('110.5'), stopLoss: d('95.555') } }));
    expect(outcome(bracket)).toEqual(TICK);
    expect(messageOf(bracket)).toContain('stop-loss price 95.555');
  });

  it("checks a US bracket's stop-loss limit (SEC Rule 612)", () => {
    const limitBuy = { orderType: 'limit', limitPrice: d(100) } as const;
    const legs = { takeProfit: d('110.5'), stopLoss: d(95) };
    const off = check(usBuy({ ...limitBuy, bracket: { ...legs, stopLossLimit: d('94.505') } }));
    expect(outcome(off)).toEqual(TICK);
    expect(messageOf(off)).toContain('stop-loss limit price 94.505');
    expect(messageOf(off)).toContain('nearest valid prices are 94.5 or 94.51');
    expect(check(usBuy({ ...limitBuy, bracket: { ...legs, stopLossLimit: d('94.5') } }))).toEqual({ ok: true });
  });

  it("checks a crypto bracket's stop-loss limit against the instrument's tick", () => {
    const btc = { assetClass: 'crypto', tickSize: d('0.1'), at: at('2026-03-14T03:00:00Z'), orderType: 'limit', limitPrice: d(100) } as const;
    const legs = { takeProfit: d(110), stopLoss: d(95) };
    const off = check(usBuy({ ...btc, bracket: { ...legs, stopLossLimit: d('94.85') } }));
    expect(outcome(off)).toEqual(TICK);
    expect(messageOf(off)).toContain('stop-loss limit price 94.85');
    expect(messageOf(off)).toContain('94.8 or 94.9');
    expect(check(usBuy({ ...btc, bracket: { ...legs, stopLossLimit: d('94.8') } }))).toEqual({ ok: true });
  });

  it("holds crypto prices to the instrument's tick", () => {
    const btc = { assetClass: 'crypto', tickSize: d('0.1'), at: at('2026-03-14T03:00:00Z') } as const;
    expect(check(usBuy({ ...btc, orderType: 'limit', limitPrice: d('100.1') }))).toEqual({ ok: true });
    const off = check(usBuy({ ...btc, orderType: 'limit', limitPrice: d('100.15') }));
    expect(outcome(off)).toEqual(TICK);
    expect(messageOf(off)).toContain('100.1 or 100.2');
  });

  it('leaves a market order without prices alone', () => {
    expect(check(usBuy({ referencePrice: d('100.005') }))).toEqual({ ok: true });
  });
});

describe('funds', () => {
  it('passes a buy costing exactly the buying power and refuses a cent less of it', () => {
    // A US market buy fills at the reference (us_broker_zero: no slippage, no commission): 10 × 100.
    const buy = (buyingPower: Decimal.Value) => check(usBuy({ account: { equity: d(100_000), buyingPower: d(buyingPower) } }));
    expect(buy('1000')).toEqual({ ok: true });
    const short = buy('999.99');
    expect(outcome(short)).toEqual(FUNDS);
    expect(messageOf(short)).toContain('1000');
  });

  it('counts the fee: KRX 10 × 61,000 + 91 won commission', () => {
    const buy = (buyingPower: number) =>
      check(krBuy({ qty: d(10), limitPrice: d(61_000), account: { equity: d(100_000_000), buyingPower: d(buyingPower) } }));
    expect(buy(610_091)).toEqual({ ok: true });
    const short = buy(610_090);
    expect(outcome(short)).toEqual(FUNDS);
    expect(messageOf(short)).toContain('fee 91');
  });

  it('prices a stop buy at its stop when that is above the market', () => {
    // Entry at the stop, 110, above the market's 100: 10 × 110 = 1,100.
    const stopBuy = (buyingPower: Decimal.Value) =>
      check(usBuy({ orderType: 'stop', stopPrice: d(110), account: { equity: d(100_000), buyingPower: d(buyingPower) } }));
    expect(stopBuy('1100')).toEqual({ ok: true });
    expect(outcome(stopBuy('1099.99'))).toEqual(FUNDS);
  });

  it('refuses a sell above the held quantity: no shorting', () => {
    const verdict = check(usBuy({ side: 'sell', qty: d('10.5'), heldQty: d(10) }));
    expect(outcome(verdict)).toEqual(FUNDS);
    expect(messageOf(verdict)).toContain('10 held, 0 in working sells');
  });

  it("counts what working sells hold, a bracket's two children once, and never says a negative quantity", () => {
    const child = (leg: string, fields: Partial<WorkingOrder>): WorkingOrder => ({ id: leg, symbol: 'SPY', side: 'sell', orderType: 'limit', qty: '100', filledQty: '0', limitPrice: null, stopPrice: null, parentId: 'entry', metadata: { leg }, ...fields });
    const position = { symbol: 'SPY', working: [child('tp', { limitPrice: '110' }), child('sl', { orderType: 'stop', stopPrice: '90' })] };
    const sell = (qty: Decimal.Value, heldQty: Decimal.Value) => check(usBuy({ side: 'sell', qty: d(qty), heldQty: d(heldQty), position }));
    // Held 150, the pair holds 100 (not 200): 50 may be sold.
    expect(sell(50, 150)).toEqual({ ok: true });
    const verdict = sell(1, 100);
    expect(outcome(verdict)).toEqual(FUNDS);
    expect(messageOf(verdict)).toBe('The sell of 1 SPY exceeds the 0 available to sell: 100 held, 100 in working sells; short selling is not allowed');
  });

  it('passes a sell of exactly what is held, in exact decimals (0.3 − 0.1 leaves 0.2 to sell)', () => {
    expect(check(usBuy({ assetClass: 'crypto', side: 'sell', qty: d('0.2'), heldQty: d('0.3').minus('0.1') }))).toEqual({ ok: true });
  });
});

describe('position sizing', () => {
  /** A limit buy of 100 at 100 against a market of 100: it fills at its limit, 100. */
  const sized = (over: Partial<RiskAttempt> = {}) => usBuy({ qty: d(100), orderType: 'limit', limitPrice: d(100), ...over });

  it('passes a risk of exactly 2 % of equity and refuses a hair more', () => {
    expect(check(sized({ bracket: { takeProfit: d(130), stopLoss: d(80) } }))).toEqual({ ok: true }); // 100 × 20 = 2,000
    // A cent lower (the finest US stop above $1, SEC Rule 612): 100 × 20.01 = 2,001.
    const over = check(sized({ bracket: { takeProfit: d(130), stopLoss: d('79.99') } }));
    expect(outcome(over)).toEqual(SIZING);
    expect(messageOf(over)).toContain('2001');
  });

  it('uses the default stop distance without a stop: 400 × 100 × 5 % = 2,000', () => {
    expect(check(sized({ qty: d(400) }))).toEqual({ ok: true });
    expect(outcome(check(sized({ qty: d('400.0001') })))).toEqual(SIZING);
  });

  it("never takes the buy's own stop_price as its protection: a stray one on a limit buy, or a stop buy's trigger (its entry)", () => {
    // 401 × 100 × 5 % = 2,005 either way; taken as protection, 99.99 would risk only 4.01.
    expect(outcome(check(sized({ qty: d(401), stopPrice: d('99.99') })))).toEqual(SIZING);
    const stopBuy = check(usBuy({ qty: d(401), orderType: 'stop', stopPrice: d(100) }));
    expect(outcome(stopBuy)).toEqual(SIZING);
  });

  describe('per position: the held quantity and the working buys count', () => {
    const buy = (fields: Partial<WorkingOrder>): WorkingOrder => ({ id: `b${String(fields.qty)}`, symbol: 'SPY', side: 'buy', orderType: 'limit', qty: '80', filledQty: '0', limitPrice: '100', stopPrice: null, parentId: null, metadata: {}, ...fields });
    const inPosition = (working: WorkingOrder[], heldQty: Decimal.Value = 0) => ({ heldQty: d(heldQty), position: { symbol: 'SPY', working } });

    it('two buys of 200 pass where one of 400 would; a third is refused (stacking passes nothing one buy may not)', () => {
      // Each 200 × 100 × 5 % = 1,000; 2 % of 100,000 is 2,000.
      expect(check(sized({ qty: d(200), ...inPosition([buy({ qty: '200' })]) }))).toEqual({ ok: true });
      const third = check(sized({ qty: d(1), ...inPosition([buy({ qty: '200' }), buy({ id: 'other', qty: '200' })]) }));
      expect(outcome(third)).toEqual(SIZING);
      expect(messageOf(third)).toContain('what is held and the working buys 2000');
    });

    it('counts the held quantity at the current price, against a working sell stop covering it', () => {
      // Held 300 at 100 under a sell stop at 95: 300 × 5 = 1,500; the buy adds 100 × 100 × 5 % = 500.
      const stop: WorkingOrder = { ...buy({ qty: '300' }), id: 'stop', side: 'sell', orderType: 'stop', limitPrice: null, stopPrice: '95' };
      expect(check(sized({ ...inPosition([stop], 300) }))).toEqual({ ok: true });
      // Without the stop the held 300 risk the default 1,500 too; with 10 more held, 500 more.
      expect(outcome(check(sized({ ...inPosition([stop], 310) })))).toEqual(SIZING);
    });

    it("takes a working buy's bracket stop leg as its protection", () => {
      // 200 × (100 − 99) = 200 with its stop leg, so a buy of 360 (1,800) still fits.
      expect(check(sized({ qty: d(360), ...inPosition([buy({ qty: '200', bracket: { stop_loss: '99' } })]) }))).toEqual({ ok: true });
      expect(outcome(check(sized({ qty: d(360), ...inPosition([buy({ qty: '200' })]) })))).toEqual(SIZING);
    });

    it('never refuses a sell of a position over the cap; a buy that adds to it is refused', () => {
      const over = inPosition([], 10_000);
      expect(check(usBuy({ side: 'sell', qty: d(1), ...over }))).toEqual({ ok: true });
      expect(outcome(check(sized({ qty: d(1), ...over })))).toEqual(SIZING);
    });
  });

  it('follows the settings', () => {
    const bracket = { takeProfit: d(130), stopLoss: d(90) }; // 100 × 10 = 1,000
    expect(check(sized({ bracket }))).toEqual({ ok: true });
    expect(outcome(check(sized({ bracket }), { maxRiskPerTradePct: d('0.99') }))).toEqual(SIZING);
    expect(outcome(check(sized({ qty: d(100) }), { defaultStopPct: d(21) }))).toEqual(SIZING);
  });

  it('never refuses a sell that reduces the position', () => {
    const sell = usBuy({ side: 'sell', qty: d(1_000), heldQty: d(1_000), account: { equity: d(1_000), buyingPower: d(0) } });
    expect(check(sell)).toEqual({ ok: true });
  });
});

describe('daily loss bound', () => {
  const afterLoss = (equity: Decimal.Value, over: Partial<RiskAttempt> = {}) =>
    usBuy({ qty: d(1), account: { equity: d(equity), buyingPower: d(50_000) }, dayStartEquity: d(100_000), ...over });

  it('refuses new buys at exactly −5 % of day-start equity', () => {
    const verdict = check(afterLoss(95_000));
    expect(outcome(verdict)).toEqual(DAILY_LOSS);
    expect(messageOf(verdict)).toContain('-5 %');
  });

  it('passes a buy a cent above the bound', () => {
    expect(check(afterLoss('95000.01'))).toEqual({ ok: true });
  });

  it('never refuses a sell that reduces the position', () => {
    expect(check(afterLoss(80_000, { side: 'sell', heldQty: d(1) }))).toEqual({ ok: true });
  });

  it("treats a missing snapshot as the day's first evaluation (no loss yet)", () => {
    expect(check(afterLoss(95_000, { dayStartEquity: undefined }))).toEqual({ ok: true });
  });

  it('follows the setting', () => {
    expect(outcome(check(afterLoss(97_000), { dailyLossLimitPct: d(3) }))).toEqual(DAILY_LOSS);
    expect(check(afterLoss(97_000))).toEqual({ ok: true });
  });
});

describe('dailyPnlPct and the day-start snapshot', () => {
  it('is the change from the day-start equity in percent', () => {
    expect(dailyPnlPct({ equity: d(95_000), dayStartEquity: d(100_000), flows: 0 })?.toFixed()).toBe('-5');
    expect(dailyPnlPct({ equity: d(104_000), dayStartEquity: d(100_000), flows: 0 })?.toFixed()).toBe('4');
    expect(dailyPnlPct({ equity: d('0.3'), dayStartEquity: d('0.1'), flows: 0 })?.toFixed()).toBe('200');
    expect(dailyPnlPct({ equity: d(100), dayStartEquity: d(0), flows: 0 })).toBeNull();
  });

  it('keeps the snapshot through the UTC day and takes a new one at 00:00 UTC', () => {
    const first = dayStartSnapshot({ held: null, equity: d(100_000), at: at('2026-03-10T00:00:00Z') });
    expect(first).toEqual({ utcDate: '2026-03-10', equity: d(100_000) });
    expect(dayStartSnapshot({ held: first, equity: d(90_000), at: at('2026-03-10T23:59:59.999Z') })).toBe(first);
    expect(dayStartSnapshot({ held: first, equity: d(90_000), at: at('2026-03-11T00:00:00Z') })).toEqual({ utcDate: '2026-03-11', equity: d(90_000) });
  });
});

describe('settings and errors', () => {
  it('reads the thresholds from the configuration', () => {
    const settings = riskSettingsFromConfig({
      RISK_MARKET_HOURS: 'ignore',
      RISK_DEFAULT_STOP_PCT: '5',
      RISK_MAX_RISK_PER_TRADE_PCT: '1.5',
      RISK_DAILY_LOSS_LIMIT_PCT: '4.25',
    });
    expect(settings.marketHours).toBe('ignore');
    expect([settings.defaultStopPct, settings.maxRiskPerTradePct, settings.dailyLossLimitPct].map(String)).toEqual(['5', '1.5', '4.25']);
  });

  it('turns a refusal into a 422 AppError with its code and message', () => {
    const verdict = check(usBuy({ side: 'sell', qty: d(2), heldQty: d(1) }));
    if (verdict.ok) throw new Error('expected a refusal');
    const error = riskRefusalError(verdict);
    expect(error).toBeInstanceOf(AppError);
    expect([error.status, error.code, error.message]).toEqual([422, 'INSUFFICIENT_FUNDS', verdict.message]);
  });
});
