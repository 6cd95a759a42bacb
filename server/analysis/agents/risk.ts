// The risk analyst: volatility, drawdown, ATR and liquidity of the daily bars, named as flags that
// set a risk level and may veto a buy. Every threshold is a named constant, by asset class.
import type { TAssetClass } from '../../../contracts/common.ts';
import type { Agent, AnalysisInput } from '../types.ts';
import {
  annualisedVolatility,
  atr,
  averageDailyValue,
  columnsOf,
  formatAmount,
  formatNumber,
  formatPercent,
  formatShare,
  maxDrawdown,
  PERIODS_PER_YEAR,
  significant,
} from './indicators.ts';
import { answerFormat, ZRiskOutput } from './schemas.ts';
import type { TRiskLevel, TRiskOutput, TTechnicalOutput } from './schemas.ts';

export interface RiskContext {
  input: AnalysisInput;
  technical: TTechnicalOutput;
}

/** Below this mean daily traded value (close × volume, 20 days, in the asset class's currency) a position is hard to exit. */
export const LOW_LIQUIDITY_DAILY_VALUE: Record<TAssetClass, number> = { us_equity: 1e6, crypto: 1e6, kr_equity: 1e9 };
/** Annualised volatility above this is high: crypto's ordinary swings are wider than a stock's. */
export const HIGH_VOLATILITY: Record<TAssetClass, number> = { us_equity: 0.45, kr_equity: 0.45, crypto: 0.8 };
/** A fall from a peak at least this deep within the last year is a deep drawdown. */
export const DEEP_DRAWDOWN: Record<TAssetClass, number> = { us_equity: -0.25, kr_equity: -0.25, crypto: -0.4 };
/** Fewer bars than this is a short history: the long averages and the year's drawdown are not there. */
export const SHORT_HISTORY_BARS = 60;
/** Recent volatility is what a new position lives with: the last 60 daily returns. */
const VOLATILITY_RETURNS = 60;
export const ATR_STOP_MULTIPLE = 2;
/**
 * Levels are drawn with an ATR of at most this share of the close, so that a wild instrument's
 * stop (close − 2 × ATR) stays a positive price instead of falling to zero or below.
 */
export const MAX_ATR_SHARE_FOR_LEVELS = 0.25;

export type TRiskFlag = 'high_volatility' | 'deep_drawdown' | 'low_liquidity' | 'short_history' | 'downtrend';

/** A severe flag alone makes the risk high; the two mild ones together do too. */
const FLAG_WEIGHT: Record<TRiskFlag, number> = { high_volatility: 2, deep_drawdown: 2, low_liquidity: 2, short_history: 1, downtrend: 1 };

/** The ATR a price level is drawn with: capped at MAX_ATR_SHARE_FOR_LEVELS of the close. */
export const levelAtr = (close: number, atrValue: number): number => Math.min(atrValue, close * MAX_ATR_SHARE_FOR_LEVELS);

/** The ATR stop: close − 2 × ATR (with the ATR capped as levelAtr says). */
export const atrStopOf = (close: number, atrValue: number): number => close - ATR_STOP_MULTIPLE * levelAtr(close, atrValue);

const riskLevelOf = (flags: readonly TRiskFlag[]): TRiskLevel => {
  const weight = flags.reduce((sum, flag) => sum + FLAG_WEIGHT[flag], 0);
  return weight >= 2 ? 'high' : weight === 1 ? 'medium' : 'low';
};

/** The numbers the risk view rests on, computed from the bars alone. */
export const readRisk = (input: AnalysisInput) => {
  const { closes, highs, lows, volumes } = columnsOf(input.bars);
  const close = closes.at(-1) ?? null;
  const atrValue = atr(highs, lows, closes, 14);
  return {
    close,
    volatility: annualisedVolatility(closes, input.assetClass, VOLATILITY_RETURNS),
    maxDrawdown: maxDrawdown(closes.slice(-PERIODS_PER_YEAR[input.assetClass])),
    atr: atrValue,
    atrStop: close !== null && close > 0 && atrValue !== null ? atrStopOf(close, atrValue) : null,
    averageDailyValue: averageDailyValue(closes, volumes, 20),
  };
};

const analyse = ({ input, technical }: RiskContext): TRiskOutput => {
  const numbers = readRisk(input);
  const { assetClass, currency } = input;
  const flags: TRiskFlag[] = [];
  const sentences: string[] = [];

  const volatilityLine = HIGH_VOLATILITY[assetClass];
  if (numbers.volatility === null) sentences.push('Volatility cannot be measured: fewer than three closes.');
  else {
    const high = numbers.volatility > volatilityLine;
    if (high) flags.push('high_volatility');
    sentences.push(
      `Annualised volatility of the last daily returns is ${formatShare(numbers.volatility)}, ${high ? 'above' : 'within'} the ${formatShare(volatilityLine)} line for ${assetClass}.`,
    );
  }

  const drawdownLine = DEEP_DRAWDOWN[assetClass];
  if (numbers.maxDrawdown !== null) {
    const deep = numbers.maxDrawdown <= drawdownLine;
    if (deep) flags.push('deep_drawdown');
    sentences.push(`The deepest fall from a peak over the last ${PERIODS_PER_YEAR[assetClass]} bars or fewer is ${formatPercent(numbers.maxDrawdown)}${deep ? `, beyond ${formatPercent(drawdownLine)}` : ''}.`);
  }

  if (numbers.close !== null && numbers.atr !== null && numbers.atrStop !== null) {
    const capped = levelAtr(numbers.close, numbers.atr) < numbers.atr;
    sentences.push(
      `ATR14 is ${formatNumber(numbers.atr)}, so the ATR stop sits at ${formatNumber(numbers.atrStop)} (close ${formatNumber(numbers.close)} − ${ATR_STOP_MULTIPLE} × ATR${capped ? `, the ATR capped at ${MAX_ATR_SHARE_FOR_LEVELS * 100}% of the close` : ''}).`,
    );
  } else sentences.push('ATR14 needs 15 bars, so there is no ATR stop.');

  const liquidityLine = LOW_LIQUIDITY_DAILY_VALUE[assetClass];
  if (numbers.averageDailyValue !== null) {
    const thin = numbers.averageDailyValue < liquidityLine;
    if (thin) flags.push('low_liquidity');
    sentences.push(
      `Average daily traded value over 20 days is ${formatAmount(numbers.averageDailyValue)} ${currency}, ${thin ? 'below' : 'above'} the ${formatAmount(liquidityLine)} ${currency} liquidity line.`,
    );
  }

  if (input.bars.length < SHORT_HISTORY_BARS) {
    flags.push('short_history');
    sentences.push(`Only ${input.bars.length} bars of history (fewer than ${SHORT_HISTORY_BARS}).`);
  }
  if (technical.trend === 'down') {
    flags.push('downtrend');
    sentences.push(`The technical trend is down (momentum ${technical.momentum}).`);
  }

  const riskLevel = riskLevelOf(flags);
  const trendVeto = technical.trend === 'down' && technical.momentum === 'negative';
  const vetoBuy = riskLevel === 'high' || trendVeto;
  const why = [riskLevel === 'high' ? 'the risk is high' : null, trendVeto ? 'the trend is down with negative momentum' : null].filter((reason) => reason !== null);
  sentences.push(
    `Flags: ${flags.length > 0 ? flags.join(', ') : 'none'}, so the risk is ${riskLevel}; ${vetoBuy ? `buys are vetoed because ${why.join(' and ')}` : 'no veto on buys'}.`,
  );

  return {
    risk_level: riskLevel,
    veto_buy: vetoBuy,
    flags,
    volatility: numbers.volatility,
    max_drawdown: numbers.maxDrawdown,
    atr: numbers.atr,
    atr_stop: numbers.atrStop,
    avg_daily_value: numbers.averageDailyValue,
    reasoning: sentences.join(' '),
  };
};

const SYSTEM = [
  'You are the risk analyst in a multi-agent analysis of one instrument on daily bars.',
  'Judge the risk of opening a long position now from the measured numbers and the technical view given, and only from them.',
  `Use flags from: high_volatility, deep_drawdown, low_liquidity, short_history, downtrend (add another only if the numbers plainly show it).`,
  'risk_level is high with any of high_volatility, deep_drawdown or low_liquidity; veto_buy is true when the risk is high or the trend is down with negative momentum.',
  'Copy volatility, max_drawdown, atr and atr_stop from the measured numbers (null where not given). Reasoning quotes the numbers.',
].join('\n');

const userPrompt = ({ input, technical }: RiskContext): string => {
  const numbers = readRisk(input);
  const measured = {
    close: significant(numbers.close),
    volatility: significant(numbers.volatility, 4),
    max_drawdown: significant(numbers.maxDrawdown, 4),
    atr: significant(numbers.atr),
    atr_stop: significant(numbers.atrStop),
    avg_daily_value: significant(numbers.averageDailyValue, 4),
    bars: input.bars.length,
  };
  const thresholds = {
    high_volatility_above: HIGH_VOLATILITY[input.assetClass],
    deep_drawdown_at_or_below: DEEP_DRAWDOWN[input.assetClass],
    low_liquidity_below: LOW_LIQUIDITY_DAILY_VALUE[input.assetClass],
    short_history_below_bars: SHORT_HISTORY_BARS,
  };
  return [
    `Symbol: ${input.symbol}`,
    `Asset class: ${input.assetClass}`,
    `Currency: ${input.currency}`,
    `Last bar date: ${input.bars.at(-1)?.date ?? 'none'}`,
    `Measured (volatility annualised over the last ${VOLATILITY_RETURNS} daily log returns; drawdown over the last year of bars; ATR Wilder 14; average daily traded value over 20 days): ${JSON.stringify(measured)}`,
    `Thresholds for ${input.assetClass}: ${JSON.stringify(thresholds)}`,
    `Technical view: ${JSON.stringify({ signal: technical.signal, confidence: technical.confidence, trend: technical.trend, momentum: technical.momentum })}`,
  ].join('\n');
};

export const riskAgent: Agent<RiskContext, TRiskOutput> = {
  name: 'risk',
  role: 'analyst',
  schema: ZRiskOutput,
  heuristic: analyse,
  prompt: (context) => ({ system: `${SYSTEM}\n${answerFormat(ZRiskOutput)}`, user: userPrompt(context) }),
};
