// The overview's latest fills: every asset class's newest fills merged newest first, not class by class.
import { describe, expect, it } from 'vitest';
import { newestFirst } from '../../client/console/src/newest-first.ts';

const fill = (symbol: string, updated_at: string) => ({ symbol, updated_at });

describe('newestFirst', () => {
  const crypto = [fill('BTC/USDT', '2026-03-10T12:00:00.000Z'), fill('ETH/USDT', '2026-03-09T08:00:00.000Z')];
  const us = [fill('AAPL', '2026-03-10T15:30:00.000Z'), fill('MSFT', '2026-03-08T15:30:00.000Z')];
  const kr = [fill('005930', '2026-03-10T01:00:00.000Z')];

  it('orders the fills of every class by time, newest first, whatever class they are of', () => {
    expect(newestFirst([crypto, us, kr], 10).map((row) => row.symbol)).toEqual(['AAPL', 'BTC/USDT', '005930', 'ETH/USDT', 'MSFT']);
  });

  it('keeps only the newest ones', () => {
    expect(newestFirst([crypto, us, kr], 2).map((row) => row.symbol)).toEqual(['AAPL', 'BTC/USDT']);
  });

  it('takes empty lists (a class without a key or a fill)', () => {
    expect(newestFirst([[], us, []], 5).map((row) => row.symbol)).toEqual(['AAPL', 'MSFT']);
    expect(newestFirst([], 5)).toEqual([]);
  });
});
