// normaliseSymbol: every accepted form to its canonical symbol, the asset-class hint deciding
// between readings or refusing a form of another class, and each class of junk refused with a reason.
import { describe, expect, it } from 'vitest';
import type { TAssetClass } from '../../contracts/common.ts';
import { normaliseSymbol, ZSymbolInput } from '../../contracts/symbols.ts';

const readsAs = (input: string, assetClass: TAssetClass, symbol: string, hint?: TAssetClass) =>
  expect(normaliseSymbol(input, hint)).toEqual({ ok: true, assetClass, symbol });

const refusal = (input: string, hint?: TAssetClass) => {
  const result = normaliseSymbol(input, hint);
  if (result.ok) throw new Error(`${JSON.stringify(input)} was accepted as ${result.assetClass} ${result.symbol}`);
  return result.reason;
};

describe('crypto forms', () => {
  it.each([
    ['BTC/USDT', 'BTC/USDT'],
    ['BTC-USDT', 'BTC/USDT'],
    ['btc/usdt', 'BTC/USDT'],
    ['Eth-Usdc', 'ETH/USDC'],
    ['BTC-USD', 'BTC/USD'], // Yahoo
    ['SOL/EUR', 'SOL/EUR'], // any quote of 2+ characters after a separator
    ['1INCH/USDT', '1INCH/USDT'],
    ['BTCUSDT', 'BTC/USDT'], // Binance: a known quote suffix
    ['ethbtc', 'ETH/BTC'],
    ['XRPKRW', 'XRP/KRW'],
    ['SOLUSDC', 'SOL/USDC'],
    ['DOGEUSD', 'DOGE/USD'],
    ['  BTC/USDT  ', 'BTC/USDT'],
  ])('%s → %s', (input, symbol) => {
    readsAs(input, 'crypto', symbol);
    readsAs(input, 'crypto', symbol, 'crypto');
  });

  it('USDT wins over USD as the quote suffix', () => readsAs('BTCUSDT', 'crypto', 'BTC/USDT'));

  it('reads a short joined form as a pair only when told it is crypto', () => {
    readsAs('OPUSD', 'us_equity', 'OPUSD');
    readsAs('OPUSD', 'crypto', 'OP/USD', 'crypto');
  });

  it('leaves real US funds that end in a coin code as tickers', () => {
    readsAs('GBTC', 'us_equity', 'GBTC');
    readsAs('FETH', 'us_equity', 'FETH');
    readsAs('BTC', 'us_equity', 'BTC');
  });

  it('refuses a joined form without a known quote', () => {
    expect(refusal('BTCEUR', 'crypto')).toMatch(/not a symbol form/);
    expect(refusal('ABCDEFG')).toMatch(/not a symbol form/);
  });
});

describe('kr_equity forms', () => {
  it.each([
    ['005930', '005930'],
    ['KRX:005930', '005930'],
    ['krx:005930', '005930'],
    ['KOSPI:005930', '005930'],
    ['KOSDAQ:247540', '247540'],
    ['005930.KS', '005930'],
    ['247540.KQ', '247540'],
    ['005930.ks', '005930'],
    ['0088M0', '0088M0'], // newer alphanumeric codes
    ['0088m0.KS', '0088M0'],
  ])('%s → %s', (input, symbol) => {
    readsAs(input, 'kr_equity', symbol);
    readsAs(input, 'kr_equity', symbol, 'kr_equity');
  });

  it.each(['05930', '0059300', 'A05930', '005930.KX', '005930.T', 'KRX:005930.KS', 'KRX:AAPL', 'KRX:'])('refuses %s', (input) => {
    expect(refusal(input)).toBeTruthy();
  });
});

describe('us_equity forms', () => {
  it.each([
    ['AAPL', 'AAPL'],
    ['aapl', 'AAPL'],
    ['V', 'V'],
    ['GOOGL', 'GOOGL'],
    ['BRK.B', 'BRK.B'],
    ['BRK-B', 'BRK.B'], // Yahoo
    ['BRK/B', 'BRK.B'], // a single letter after the separator is a share class, never a quote
    ['brk.b', 'BRK.B'],
    ['NASDAQ:AAPL', 'AAPL'],
    ['NYSE:BRK-B', 'BRK.B'],
    ['NYSEARCA:SPY', 'SPY'],
  ])('%s → %s', (input, symbol) => {
    readsAs(input, 'us_equity', symbol);
    readsAs(input, 'us_equity', symbol, 'us_equity');
  });

  it.each(['ABCDEF', 'AAPL.BB', 'AAPL1', 'NASDAQ:005930', 'NYSE:BTC/USDT'])('refuses %s', (input) => {
    expect(refusal(input)).toBeTruthy();
  });
});

describe('an asset class hint that disagrees with the form', () => {
  it.each<[string, TAssetClass, RegExp]>([
    ['005930', 'crypto', /kr_equity symbol, not crypto/],
    ['005930', 'us_equity', /kr_equity symbol, not us_equity/],
    ['BTC/USDT', 'us_equity', /crypto symbol, not us_equity/],
    ['BTCUSDT', 'us_equity', /crypto symbol, not us_equity/],
    ['BTC/USDT', 'kr_equity', /crypto symbol, not kr_equity/],
    ['AAPL', 'crypto', /us_equity symbol, not crypto/],
    ['AAPL', 'kr_equity', /us_equity symbol, not kr_equity/],
    ['BRK/B', 'crypto', /us_equity symbol, not crypto/],
    ['KRX:005930', 'us_equity', /kr_equity exchange, not us_equity/],
    ['NASDAQ:AAPL', 'crypto', /us_equity exchange, not crypto/],
  ])('%s given %s', (input, hint, reason) => {
    expect(refusal(input, hint)).toMatch(reason);
  });
});

describe('junk', () => {
  it.each<[string, string, RegExp]>([
    ['empty', '', /empty/],
    ['only spaces', '   ', /empty/],
    ['longer than 32 characters', 'A'.repeat(33), /longer than 32/],
    ['a 33-character pair', `${'A'.repeat(28)}/USDT`, /longer than 32/],
    ['NUL', 'AAPL\u0000', /control characters/],
    ['a control character inside', 'BTC\u0007USDT', /control characters/],
    ['DEL', 'AAPL\u007f', /control characters/],
    ['whitespace inside', 'BTC /USDT', /whitespace/],
    ['SQL', "'; drop table users; --", /whitespace/],
    ['SQL without spaces', "AAPL';--", /only letters, digits/],
    ['a boolean trick', '1=1', /only letters, digits/],
    ['a percent sign', 'AAPL%', /only letters, digits/],
    ['non-ASCII letters', '삼성전자', /non-ASCII/],
    ['a full-width letter', 'ＡAPL', /non-ASCII/],
    ['an unknown prefix', 'FOO:AAPL', /unknown exchange prefix "FOO"/],
    ['two separators', 'BTC/USDT/X', /not a symbol form/],
    ['a lone separator', '/', /not a symbol form/],
  ])('%s', (_, input, reason) => {
    expect(refusal(input)).toMatch(reason);
  });

  it('judges 32 characters by their form, not their length', () => {
    const thirtyTwo = `${'A'.repeat(15)}/${'B'.repeat(16)}`;
    expect(thirtyTwo).toHaveLength(32);
    expect(refusal(thirtyTwo)).toMatch(/not a symbol form/);
    readsAs(`  ${'A'.repeat(15)}/${'B'.repeat(10)}  `, 'crypto', `${'A'.repeat(15)}/${'B'.repeat(10)}`);
  });

  it('does not echo control characters in the reason', () => {
    const reason = refusal('AAPL\u0000\u001b[31m');
    expect([...reason].filter((c) => c.charCodeAt(0) < 0x20)).toEqual([]);
  });
});

describe('ZSymbolInput', () => {
  it('trims and keeps 1–32 characters', () => {
    expect(ZSymbolInput.parse('  btc/usdt ')).toBe('btc/usdt');
    expect(ZSymbolInput.parse('A'.repeat(32))).toHaveLength(32);
  });

  it.each(['', '   ', 'A'.repeat(33)])('refuses %j', (input) => {
    expect(ZSymbolInput.safeParse(input).success).toBe(false);
  });

  it('refuses anything but a string', () => {
    expect(ZSymbolInput.safeParse(5930).success).toBe(false);
    expect(ZSymbolInput.safeParse(null).success).toBe(false);
  });
});
