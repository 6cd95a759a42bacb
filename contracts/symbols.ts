// The one normaliser of symbol forms: every route that takes a symbol turns what the caller typed
// into (asset class, canonical symbol) here, so `btc-usdt`, `KRX:005930` and `brk/b` mean one thing.
import type { z } from 'zod';
import { requestText, type TAssetClass } from './common.ts';

/**
 * The forms accepted, and how each reads (canonical forms: crypto `BASE/QUOTE`, kr_equity the
 * 6-character KRX code, us_equity the ticker with a `.` before a share class):
 *
 * - kr_equity: a KRX code of 6 characters, a digit then digits or capital letters (`005930`,
 *   and the newer alphanumeric codes such as `0088M0`); also `005930.KS` (KOSPI), `005930.KQ`
 *   (KOSDAQ) and `KRX:`, `KOSPI:`, `KOSDAQ:` or `KONEX:` before the code.
 * - crypto with a separator: `BTC/USDT`, `BTC-USDT` (also Yahoo's `BTC-USD`). A right-hand part
 *   of two or more characters is a quote currency, whatever it is (`SOL/EUR`), because pairs with
 *   new quotes appear all the time.
 * - us_equity share classes: `BRK.B`, `BRK-B` (Yahoo) and `BRK/B` (Bloomberg, some brokers) all
 *   read `BRK.B`. `BRK/B` looks like a pair, but no quote currency is one letter long, so a single
 *   letter after the separator is read as a share class and never as a quote.
 * - crypto without a separator (`BTCUSDT`, as Binance writes it): only with a known quote suffix
 *   (USDT, USDC, USD, KRW, BTC, ETH), a base of two or more characters and six or more characters
 *   in all. US tickers have at most five letters, so `GBTC`, `FETH` and `ETHE` (real US funds)
 *   stay US tickers. Without a separator there is no other safe way to find where the base ends.
 * - us_equity: 1 to 5 letters (`AAPL`), optionally after `NASDAQ:`, `NYSE:`, `NYSEARCA:`,
 *   `ARCA:`, `AMEX:` or `BATS:`.
 *
 * A given `assetClass` must agree with the form; where a form fits two classes it picks the
 * reading: `OPUSD` is a US ticker unless the caller says crypto (`OP/USD`), and `BTCUSDT` given
 * us_equity is refused (too long for a ticker). Letters are upper-cased; surrounding whitespace
 * is dropped. Quote-first forms (Upbit's `KRW-BTC`) are not recognised as such: they read as the
 * pair KRW/BTC, which no registry holds.
 */
export type TNormalisedSymbol =
  | { ok: true; assetClass: TAssetClass; symbol: string }
  | { ok: false; reason: string };

export const SYMBOL_MAX_LENGTH = 32;

/** Quote suffixes recognised without a separator, longest first so `USDT` wins over `USD`. */
const KNOWN_QUOTES = ['USDT', 'USDC', 'USD', 'KRW', 'BTC', 'ETH'] as const;

const EXCHANGE_PREFIXES: Readonly<Record<string, TAssetClass>> = {
  KRX: 'kr_equity',
  KOSPI: 'kr_equity',
  KOSDAQ: 'kr_equity',
  KONEX: 'kr_equity',
  NASDAQ: 'us_equity',
  NYSE: 'us_equity',
  NYSEARCA: 'us_equity',
  ARCA: 'us_equity',
  AMEX: 'us_equity',
  BATS: 'us_equity',
};

const KRX_CODE = /^[0-9][0-9A-Z]{5}$/;
const KRX_SUFFIXED = /^([0-9][0-9A-Z]{5})\.(?:KS|KQ)$/;
const US_TICKER = /^[A-Z]{1,5}$/;
const US_SHARE_CLASS = /^([A-Z]{1,5})[./-]([A-Z])$/;
const PAIR = /^([A-Z0-9]{1,15})[/-]([A-Z0-9]{2,10})$/;
const PAIR_WITHOUT_SEPARATOR = /^[A-Z0-9]{3,25}$/;
/** Everything a symbol of any form is written with; anything else (quotes, `;`, `%`) is refused. */
const SYMBOL_CHARACTERS = /^[A-Za-z0-9./:-]+$/;

const ok = (assetClass: TAssetClass, symbol: string): TNormalisedSymbol => ({ ok: true, assetClass, symbol });
const refuse = (reason: string): TNormalisedSymbol => ({ ok: false, reason });

const hasControlCharacter = (text: string) => {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
};

const isAscii = (text: string) => {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
};

/** A reason for input that is no symbol of any form, or null when the characters are fine. */
const junkReason = (input: string): string | null => {
  if (input.length === 0) return 'symbol is empty';
  if (input.length > SYMBOL_MAX_LENGTH) return `symbol is longer than ${SYMBOL_MAX_LENGTH} characters`;
  if (hasControlCharacter(input)) return 'symbol contains control characters';
  if (!isAscii(input)) return 'symbol contains non-ASCII characters';
  if (/\s/.test(input)) return 'symbol contains whitespace';
  if (!SYMBOL_CHARACTERS.test(input)) return 'symbol may contain only letters, digits and . / - :';
  return null;
};

/** Every reading of a bare (prefix-free, upper-cased) form, in order of preference. */
const readingsOf = (form: string): Array<{ assetClass: TAssetClass; symbol: string }> => {
  const readings: Array<{ assetClass: TAssetClass; symbol: string }> = [];
  if (KRX_CODE.test(form)) readings.push({ assetClass: 'kr_equity', symbol: form });
  const suffixed = KRX_SUFFIXED.exec(form);
  if (suffixed?.[1]) readings.push({ assetClass: 'kr_equity', symbol: suffixed[1] });

  const shareClass = US_SHARE_CLASS.exec(form);
  if (shareClass) readings.push({ assetClass: 'us_equity', symbol: `${shareClass[1]}.${shareClass[2]}` });
  const pair = PAIR.exec(form);
  if (pair) readings.push({ assetClass: 'crypto', symbol: `${pair[1]}/${pair[2]}` });

  const joined = PAIR_WITHOUT_SEPARATOR.test(form) ? splitKnownQuote(form) : null;
  const joinedPair = joined ? { assetClass: 'crypto' as const, symbol: `${joined.base}/${joined.quote}` } : null;
  // Longer than any US ticker and a real base before the quote: a pair first, whatever else it fits.
  const clearlyPair = joined !== null && joined.base.length >= 2 && form.length >= 6;
  if (joinedPair && clearlyPair) readings.push(joinedPair);
  if (US_TICKER.test(form)) readings.push({ assetClass: 'us_equity', symbol: form });
  if (joinedPair && !clearlyPair) readings.push(joinedPair);
  return readings;
};

const splitKnownQuote = (form: string): { base: string; quote: string } | null => {
  const quote = KNOWN_QUOTES.find((q) => form.endsWith(q) && form.length > q.length);
  return quote ? { base: form.slice(0, -quote.length), quote } : null;
};

/**
 * The asset class and canonical symbol of `input`, or why it is refused. The first reading of
 * the form wins unless `assetClass` is given, which picks the reading of that class (and refuses
 * a form that has none).
 */
export const normaliseSymbol = (input: string, assetClass?: TAssetClass): TNormalisedSymbol => {
  const trimmed = input.trim();
  const junk = junkReason(trimmed);
  if (junk) return refuse(junk);

  const upper = trimmed.toUpperCase();
  let form = upper;
  let prefixClass: TAssetClass | undefined;
  const colon = upper.indexOf(':');
  if (colon !== -1) {
    const prefix = upper.slice(0, colon);
    prefixClass = EXCHANGE_PREFIXES[prefix];
    if (!prefixClass) return refuse(`unknown exchange prefix "${prefix}" (known: ${Object.keys(EXCHANGE_PREFIXES).join(', ')})`);
    form = upper.slice(colon + 1);
    if (form.length === 0) return refuse(`nothing follows the exchange prefix "${prefix}"`);
  }
  if (prefixClass && assetClass && prefixClass !== assetClass) {
    return refuse(`the prefix of "${trimmed}" names a ${prefixClass} exchange, not ${assetClass}`);
  }

  // A prefix names a market, so the rest must be one of that market's bare codes or tickers.
  if (prefixClass === 'kr_equity' && !KRX_CODE.test(form)) return refuse(`"${trimmed}" needs a 6-character KRX code after the prefix`);
  const readings = readingsOf(form).filter((r) => !prefixClass || r.assetClass === prefixClass);
  if (readings.length === 0) {
    return refuse(prefixClass ? `"${trimmed}" is not a ${prefixClass} symbol` : `"${trimmed}" is not a symbol form this service knows`);
  }
  const chosen = assetClass ? readings.find((r) => r.assetClass === assetClass) : readings[0];
  if (!chosen) {
    const classes = [...new Set(readings.map((r) => r.assetClass))].join(' or ');
    return refuse(`"${trimmed}" is a ${classes} symbol, not ${assetClass}`);
  }
  return ok(chosen.assetClass, chosen.symbol);
};

/**
 * A symbol as a request body carries it, before normalisation: trimmed, 1–32 characters. The
 * route then calls `normaliseSymbol` on it, which owns every other rule.
 */
export const ZSymbolInput = requestText().trim().min(1).max(SYMBOL_MAX_LENGTH);
export type TSymbolInput = z.infer<typeof ZSymbolInput>;
