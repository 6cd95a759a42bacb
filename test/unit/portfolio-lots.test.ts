// FIFO tax lots (server/portfolio/lots.ts) and the performance built on them
// (server/portfolio/performance.ts), on sequences computed by hand.
import { describe, expect, it } from 'vitest';
import type { TPortfolioPoint } from '../../contracts/portfolio.ts';
import { textOf } from '../../server/portfolio/fixed-point.ts';
import { fifoLots } from '../../server/portfolio/lots.ts';
import { isoWeekOf, performanceOf } from '../../server/portfolio/performance.ts';
import type { AccountFill } from '../../server/portfolio/queries.ts';

const fill = (at: string, side: 'buy' | 'sell', qty: string, price: string, fee: string, tax = '0', symbol = 'BTC/USDT'): AccountFill => ({ symbol, side, clientOrderId: `${side}-${at}`, qty, price, fee, tax, at: new Date(at) });
const plain = (lots: ReturnType<typeof fifoLots>['closed']) =>
  lots.map((lot) => ({ symbol: lot.symbol, qty: textOf(lot.qty), acquired: lot.acquiredAt.toISOString().slice(0, 10), sold: lot.soldAt.toISOString().slice(0, 10), cost: textOf(lot.costBasis), proceeds: textOf(lot.proceeds), gain: textOf(lot.gain) }));

describe('fifoLots', () => {
  it('closes the oldest lots first, in part across partial fills, fees shared by quantity', () => {
    const { closed, open } = fifoLots([
      // Lot A: 2 at 100, fee 2 → cost 202 (101 a unit). Lot B: 3 at 110, fee 3 → cost 333 (111 a unit).
      fill('2026-01-01T10:00:00Z', 'buy', '2', '100', '2'),
      fill('2026-01-02T10:00:00Z', 'buy', '3', '110', '3'),
      // A partial sell of 1 at 120, fee 1.2 → proceeds 118.8: 1 of lot A (cost 101), gain 17.8.
      fill('2026-01-03T10:00:00Z', 'sell', '1', '120', '1.2'),
      // Its second fill, 3 at 130, fee 3.9 → proceeds 386.1: the last 1 of lot A (cost 101, proceeds
      // 128.7, gain 27.7) and 2 of lot B (cost 222, proceeds 257.4, gain 35.4).
      fill('2026-01-04T10:00:00Z', 'sell', '3', '130', '3.9'),
    ]);
    expect(plain(closed)).toEqual([
      { symbol: 'BTC/USDT', qty: '1', acquired: '2026-01-01', sold: '2026-01-03', cost: '101', proceeds: '118.8', gain: '17.8' },
      { symbol: 'BTC/USDT', qty: '1', acquired: '2026-01-01', sold: '2026-01-04', cost: '101', proceeds: '128.7', gain: '27.7' },
      { symbol: 'BTC/USDT', qty: '2', acquired: '2026-01-02', sold: '2026-01-04', cost: '222', proceeds: '257.4', gain: '35.4' },
    ]);
    // 1 of lot B is left, at 111.
    expect(open.map((lot) => [textOf(lot.qty), textOf(lot.costBasis), lot.acquiredAt.toISOString().slice(0, 10)])).toEqual([['1', '111', '2026-01-02']]);
  });

  it('takes a sell’s tax out of its proceeds (a KRX sell), keeps symbols apart, and ends every lot at a reset', () => {
    const { closed, open } = fifoLots(
      [
        fill('2026-01-01T01:00:00Z', 'buy', '10', '70000', '105', '0', '005930'),
        fill('2026-01-01T02:00:00Z', 'buy', '1', '50', '0.05'),
        // 10 at 71,000: fee 1,349 of which tax 1,278 → proceeds 708,651; cost 700,105; gain 8,546.
        fill('2026-01-02T01:00:00Z', 'sell', '10', '71000', '1349', '1278', '005930'),
        fill('2026-01-03T01:00:00Z', 'buy', '5', '69000', '52', '0', '005930'),
      ],
      [new Date('2026-01-02T12:00:00Z')],
    );
    expect(plain(closed)).toEqual([{ symbol: '005930', qty: '10', acquired: '2026-01-01', sold: '2026-01-02', cost: '700105', proceeds: '708651', gain: '8546' }]);
    // The reset ended the BTC lot without a sale; the buy after it is the only open lot.
    expect(open.map((lot) => `${lot.symbol} ${textOf(lot.qty)} ${textOf(lot.costBasis)}`)).toEqual(['005930 5 345052']);
  });

  it('closes only what its lots hold when a sell exceeds them', () => {
    const { closed, open } = fifoLots([fill('2026-01-01T00:00:00Z', 'buy', '1', '10', '0'), fill('2026-01-02T00:00:00Z', 'sell', '3', '12', '0.3')]);
    // A third of the sell's proceeds (35.7) for the one lot held.
    expect(plain(closed)).toEqual([{ symbol: 'BTC/USDT', qty: '1', acquired: '2026-01-01', sold: '2026-01-02', cost: '10', proceeds: '11.9', gain: '1.9' }]);
    expect(open).toEqual([]);
  });
});

describe('performanceOf', () => {
  const point = (date: string, pnlPct: number | null): TPortfolioPoint => ({ date, equity: 0, cash: null, flows: 0, pnl: 0, pnl_pct: pnlPct });

  it('chains the daily returns into the TWR, by ISO week and by month, with the drawdown of that index', () => {
    const points = [point('2026-11-29', 0.1), point('2026-11-30', -0.2), point('2026-12-01', 0.05), point('2026-12-02', null)];
    const result = performanceOf({ assetClass: 'crypto', from: '2026-11-29', to: '2026-12-02', points, closed: [], open: [], fills: [], priceOf: undefined });
    expect(result.time_weighted_return).toBe(1.1 * 0.8 * 1.05 * 1 - 1);
    expect(result.daily.map((day) => day.return)).toEqual([0.1, -0.2, 0.05, 0]);
    // Sunday the 29th ends ISO week 48; Monday the 30th starts week 49.
    expect(result.weekly).toEqual([
      { week: '2026-W48', return: 1.1 - 1 },
      { week: '2026-W49', return: 0.8 * 1.05 * 1 - 1 },
    ]);
    expect(result.monthly).toEqual([
      { month: '2026-11', return: 1.1 * 0.8 - 1 },
      { month: '2026-12', return: 1.05 * 1 - 1 },
    ]);
    // From the peak 1.1 down to 0.88: −20 %.
    expect(result.max_drawdown_pct).toBeCloseTo(-0.2, 12);
    expect(result.unrealized_pnl).toBeNull();
    expect(result.profit_factor).toBeNull();
  });

  it('counts the lots closed in the range only, fees less taxes, taxes, and values open lots at today’s prices', () => {
    const { closed, open } = fifoLots([
      fill('2026-01-01T10:00:00Z', 'buy', '2', '100', '2'),
      fill('2026-01-05T10:00:00Z', 'sell', '1', '90', '1', '0.5'),
      fill('2026-01-06T10:00:00Z', 'buy', '1', '80', '1', '0', 'ETH/USDT'),
    ]);
    const inRange = [fill('2026-01-05T10:00:00Z', 'sell', '1', '90', '1', '0.5'), fill('2026-01-06T10:00:00Z', 'buy', '1', '80', '1', '0', 'ETH/USDT')];
    const prices = new Map([['BTC/USDT', '120']]);
    const result = performanceOf({ assetClass: 'crypto', from: '2026-01-05', to: '2026-01-06', points: [], closed, open, fills: inRange, priceOf: (symbol) => prices.get(symbol) });
    // The lot: cost 101, proceeds 89 → gain −12. Open: 1 BTC at 120 against its cost 101 (+19); ETH has no price now (no result).
    expect(result).toMatchObject({ realized_pnl: -12, unrealized_pnl: 19, fees: 1.5, taxes: 0.5, closed_lots: 1, win_rate: 0, profit_factor: 0 });
    expect(result.by_symbol).toEqual([
      { symbol: 'BTC/USDT', realized_pnl: -12, unrealized_pnl: 19, fees: 0.5, taxes: 0.5, closed_lots: 1, win_rate: 0 },
      { symbol: 'ETH/USDT', realized_pnl: 0, unrealized_pnl: 0, fees: 1, taxes: 0, closed_lots: 0, win_rate: 0 },
    ]);
    // Before the range: no lot closed in it.
    expect(performanceOf({ assetClass: 'crypto', from: '2026-01-07', to: '2026-01-08', points: [], closed, open, fills: [], priceOf: undefined }).closed_lots).toBe(0);
  });

  it('names ISO weeks at the years’ edges', () => {
    expect([isoWeekOf('2021-01-03'), isoWeekOf('2024-12-30'), isoWeekOf('2026-01-01')]).toEqual(['2020-W53', '2025-W01', '2026-W01']);
  });
});
