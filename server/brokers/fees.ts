// Fee and slippage profiles by name: the one table the backtest engine, paper trading and the
// simulator all read, so a fill costs the same wherever it is simulated.
import { Decimal } from 'decimal.js';
import type { TAssetClass } from '../../contracts/common.ts';

export const FEE_PROFILE_NAMES = ['us_broker_zero', 'kr_broker_default', 'crypto_default'] as const;
export type TFeeProfileName = (typeof FEE_PROFILE_NAMES)[number];

export interface FeeProfile {
  readonly name: TFeeProfileName;
  readonly assetClass: TAssetClass;
  /** Commission as a fraction of the notional, charged on buys and sells alike. */
  readonly commissionRate: Decimal;
  /** Transaction tax as a fraction of the notional, charged on sells only. */
  readonly sellTaxRate: Decimal;
  /** How far the execution price moves against the taker, as a fraction of the reference price. */
  readonly slippageRate: Decimal;
  /**
   * Each fee component is cut down to this many decimal places (the payer's favour); undefined
   * keeps it exact. KRW has no minor unit and Korean brokers and the tax office drop fractions of
   * a won, so the KRX profile uses 0.
   */
  readonly feeDecimalPlaces: number | undefined;
}

const BASIS_POINT = new Decimal('0.0001');

/**
 * Korean securities transaction tax on a sale, in force from 1 January 2026: 0.20 % of the sale
 * proceeds on KOSPI (securities transaction tax 0.05 % + special tax for rural development
 * 0.15 %) and on KOSDAQ / K-OTC (0.20 %, no special tax). Basis: the enforcement decree of the
 * Securities Transaction Tax Act as amended in the 2025 tax revision, which restored the 2023
 * rates after the financial investment income tax was abolished (2025 was 0.15 %). KONEX (0.10 %)
 * is not modelled: the instrument registry carries KOSPI and KOSDAQ names only. Revisit when the
 * decree changes again.
 */
export const KRX_SELL_TAX_RATE_2026 = new Decimal('0.0020');

/** A typical Korean online brokerage commission (KIS-style accounts charge about 0.014–0.015 %). */
export const KRX_BROKER_COMMISSION_RATE = new Decimal('0.00015');

/** Spot taker fee of the large crypto exchanges' base tier. */
export const CRYPTO_TAKER_FEE_RATE = new Decimal('0.001');

// Five basis points for KRX stocks and crypto: about half the spread of a liquid large cap or
// major pair plus a little impact, so backtests are not priced at the mid.
const DEFAULT_SLIPPAGE_RATE = BASIS_POINT.times(5);

const PROFILES: readonly FeeProfile[] = [
  Object.freeze({
    name: 'us_broker_zero',
    assetClass: 'us_equity',
    // Regulatory pass-through fees on US sells (SEC Section 31, FINRA TAF) are left out: they
    // are cents on typical orders and change every fiscal year; the profile promises zero. It
    // promises no slippage either: it is the frictionless reference that backtests are checked
    // against (the same run in backtesting.py, backtrader and a plain loop).
    commissionRate: new Decimal(0),
    sellTaxRate: new Decimal(0),
    slippageRate: new Decimal(0),
    feeDecimalPlaces: undefined,
  }),
  Object.freeze({
    name: 'kr_broker_default',
    assetClass: 'kr_equity',
    commissionRate: KRX_BROKER_COMMISSION_RATE,
    sellTaxRate: KRX_SELL_TAX_RATE_2026,
    slippageRate: DEFAULT_SLIPPAGE_RATE,
    feeDecimalPlaces: 0,
  }),
  Object.freeze({
    name: 'crypto_default',
    assetClass: 'crypto',
    commissionRate: CRYPTO_TAKER_FEE_RATE,
    sellTaxRate: new Decimal(0),
    slippageRate: DEFAULT_SLIPPAGE_RATE,
    feeDecimalPlaces: undefined,
  }),
];

// A Map, not an object literal, so a name like "toString" or "__proto__" finds nothing.
const BY_NAME = new Map<string, FeeProfile>(PROFILES.map((profile) => [profile.name, profile]));

/** The profile of that name, or undefined for a name we do not know. */
export const profileByName = (name: string): FeeProfile | undefined => BY_NAME.get(name);

const DEFAULT_PROFILE_NAME: Record<TAssetClass, TFeeProfileName> = {
  us_equity: 'us_broker_zero',
  kr_equity: 'kr_broker_default',
  crypto: 'crypto_default',
};

/** The profile every simulated fill of this asset class uses unless a backtest names another. */
export const defaultProfileFor = (assetClass: TAssetClass): FeeProfile => {
  const profile = BY_NAME.get(DEFAULT_PROFILE_NAME[assetClass]);
  if (!profile) throw new Error(`no fee profile for asset class ${assetClass}`);
  return profile;
};
