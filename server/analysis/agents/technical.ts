// The technical analyst: reads trend, momentum and stretch from the daily bars and turns them into
// a signal by a transparent point score, every point named in its reasoning.
import type { Agent, AnalysisInput } from '../types.ts';
import { atr, bollinger, columnsOf, ema, formatNumber, formatPercent, formatShare, macd, periodReturn, roundTo, rsi, significant, sma } from './indicators.ts';
import type { BollingerValue, MacdValue } from './indicators.ts';
import { answerFormat, ZTechnicalOutput } from './schemas.ts';
import type { TSignal, TTechnicalOutput } from './schemas.ts';

/** Fewer bars than this and the agent does not read a signal at all. */
export const MIN_TECHNICAL_BARS = 30;
/** The net share of points (−1..1) from which the signal is buy (or, negated, sell). */
const SIGNAL_THRESHOLD = 0.25;
/** RSI zones: above this overbought, below the other oversold. */
export const RSI_OVERBOUGHT = 70;
export const RSI_OVERSOLD = 30;
/** Every vote the heuristic can cast; fewer when the history is too short for some indicators. */
const MAX_VOTES = 9;
const CLOSES_IN_PROMPT = 30;

/** The indicator values at the last bar (null where the history is too short). */
export interface TechnicalReading {
  close: number | null;
  sma20: number | null;
  sma50: number | null;
  sma200: number | null;
  ema12: number | null;
  ema26: number | null;
  rsi14: number | null;
  macd: MacdValue | null;
  bollinger: BollingerValue | null;
  atr14: number | null;
  return20d: number | null;
}

export const readTechnicals = (input: AnalysisInput): TechnicalReading => {
  const { closes, highs, lows } = columnsOf(input.bars);
  return {
    close: closes.at(-1) ?? null,
    sma20: sma(closes, 20),
    sma50: sma(closes, 50),
    sma200: sma(closes, 200),
    ema12: ema(closes, 12),
    ema26: ema(closes, 26),
    rsi14: rsi(closes, 14),
    macd: macd(closes),
    bollinger: bollinger(closes),
    atr14: atr(highs, lows, closes, 14),
    return20d: periodReturn(closes, 20),
  };
};

/** The reading flattened into the output's `indicators` record (the wire names). */
const indicatorRecord = (reading: TechnicalReading): Record<string, number | null> => ({
  close: reading.close,
  sma20: reading.sma20,
  sma50: reading.sma50,
  sma200: reading.sma200,
  ema12: reading.ema12,
  ema26: reading.ema26,
  rsi14: reading.rsi14,
  macd: reading.macd?.line ?? null,
  macd_signal: reading.macd?.signal ?? null,
  macd_histogram: reading.macd?.histogram ?? null,
  bb_middle: reading.bollinger?.middle ?? null,
  bb_upper: reading.bollinger?.upper ?? null,
  bb_lower: reading.bollinger?.lower ?? null,
  bb_percent_b: reading.bollinger?.percentB ?? null,
  atr14: reading.atr14,
  return_20d: reading.return20d,
});

interface Vote {
  label: string;
  points: -1 | 0 | 1;
}

const signOf = (x: number): -1 | 0 | 1 => (x > 0 ? 1 : x < 0 ? -1 : 0);

/** One point each way per fact; RSI and %b vote against the stretch (overbought is a point down). */
const votesOf = (r: TechnicalReading): Vote[] => {
  const votes: Vote[] = [];
  const { close } = r;
  if (close !== null) {
    if (r.sma20 !== null) votes.push({ label: 'close vs SMA20', points: signOf(close - r.sma20) });
    if (r.sma50 !== null) votes.push({ label: 'close vs SMA50', points: signOf(close - r.sma50) });
    if (r.sma200 !== null) votes.push({ label: 'close vs SMA200', points: signOf(close - r.sma200) });
  }
  if (r.sma50 !== null && r.sma200 !== null) votes.push({ label: 'SMA50 vs SMA200', points: signOf(r.sma50 - r.sma200) });
  if (r.ema12 !== null && r.ema26 !== null) votes.push({ label: 'EMA12 vs EMA26', points: signOf(r.ema12 - r.ema26) });
  if (r.macd !== null) votes.push({ label: 'MACD histogram', points: signOf(r.macd.histogram) });
  if (r.rsi14 !== null) votes.push({ label: 'RSI14', points: r.rsi14 > RSI_OVERBOUGHT ? -1 : r.rsi14 < RSI_OVERSOLD ? 1 : 0 });
  if (r.bollinger !== null) votes.push({ label: 'Bollinger %b', points: r.bollinger.percentB > 1 ? -1 : r.bollinger.percentB < 0 ? 1 : 0 });
  if (r.return20d !== null) votes.push({ label: '20-day return', points: signOf(r.return20d) });
  return votes;
};

type TTrend = TTechnicalOutput['trend'];
type TMomentum = TTechnicalOutput['momentum'];

/** Price above a rising ladder of averages is up, below a falling one down: the longest ladder the history allows. */
const trendOf = (r: TechnicalReading): TTrend => {
  const { close } = r;
  if (close === null || r.sma20 === null) return 'sideways';
  const ladder = r.sma50 !== null && r.sma200 !== null ? [close, r.sma50, r.sma200] : r.sma50 !== null ? [close, r.sma20, r.sma50] : null;
  if (ladder !== null) {
    const [top = NaN, middle = NaN, bottom = NaN] = ladder;
    if (top > middle && middle > bottom) return 'up';
    if (top < middle && middle < bottom) return 'down';
    return 'sideways';
  }
  // 30 to 49 bars: only SMA20 and the 20-day return to go on.
  if (r.return20d === null) return 'sideways';
  if (close > r.sma20 && r.return20d > 0) return 'up';
  if (close < r.sma20 && r.return20d < 0) return 'down';
  return 'sideways';
};

/**
 * Two of the MACD line's side of zero, RSI against 50 and the 20-day return pointing the same way.
 * The line, not the histogram: in a steady geometric fall the line shrinks with the price, so the
 * histogram turns positive while the fall goes on.
 */
const momentumOf = (r: TechnicalReading): TMomentum => {
  const net = (r.macd === null ? 0 : signOf(r.macd.line)) + (r.rsi14 === null ? 0 : signOf(r.rsi14 - 50)) + (r.return20d === null ? 0 : signOf(r.return20d));
  return net >= 2 ? 'positive' : net <= -2 ? 'negative' : 'neutral';
};

const relation = (a: number, b: number): string => (a > b ? 'above' : a < b ? 'below' : 'at');

/** The reading in sentences, each quoting its numbers. */
const sentencesOf = (r: TechnicalReading): string[] => {
  const sentences: string[] = [];
  const { close } = r;
  if (close !== null) {
    const averages: [string, number | null][] = [
      ['SMA20', r.sma20],
      ['SMA50', r.sma50],
      ['SMA200', r.sma200],
    ];
    const against = averages.flatMap(([name, value]) => (value === null ? [] : [`${relation(close, value)} ${name} ${formatNumber(value)}`]));
    sentences.push(against.length > 0 ? `Close ${formatNumber(close)} is ${against.join(', ')}.` : `Close ${formatNumber(close)}.`);
  }
  if (r.sma50 !== null && r.sma200 !== null) sentences.push(`SMA50 is ${relation(r.sma50, r.sma200)} SMA200.`);
  if (r.ema12 !== null && r.ema26 !== null) sentences.push(`EMA12 ${formatNumber(r.ema12)} is ${relation(r.ema12, r.ema26)} EMA26 ${formatNumber(r.ema26)}.`);
  if (r.macd !== null) {
    sentences.push(`MACD ${formatNumber(r.macd.line)} against its signal ${formatNumber(r.macd.signal)} leaves a histogram of ${formatNumber(r.macd.histogram)}.`);
  }
  if (r.rsi14 !== null) {
    const zone = r.rsi14 > RSI_OVERBOUGHT ? 'overbought' : r.rsi14 < RSI_OVERSOLD ? 'oversold' : 'neither overbought nor oversold';
    sentences.push(`RSI14 is ${r.rsi14.toFixed(1)} (${zone}).`);
  }
  if (r.bollinger !== null) {
    const b = r.bollinger;
    sentences.push(`Bollinger %b is ${b.percentB.toFixed(2)} (bands ${formatNumber(b.lower)} to ${formatNumber(b.upper)}).`);
  }
  if (r.return20d !== null) sentences.push(`The 20-day return is ${formatPercent(r.return20d)}.`);
  if (r.atr14 !== null && close !== null && close > 0) sentences.push(`ATR14 is ${formatNumber(r.atr14)} (${formatShare(r.atr14 / close)} of the close).`);
  return sentences;
};

const formatPoints = (points: number): string => (points > 0 ? `+${points}` : `${points}`);

const shortHistory = (input: AnalysisInput, reading: TechnicalReading): TTechnicalOutput => {
  const count = input.bars.length;
  const first = input.bars[0];
  const last = input.bars.at(-1);
  const span = first && last ? ` (${first.date} to ${last.date})` : '';
  const known = sentencesOf(reading);
  const reasoning = [
    `The history is too short for a technical read: ${count} daily bar${count === 1 ? '' : 's'}${span}, at least ${MIN_TECHNICAL_BARS} are needed, so the signal is hold with confidence 0.`,
    ...known,
  ].join(' ');
  return { signal: 'hold', confidence: 0, reasoning, indicators: indicatorRecord(reading), trend: 'sideways', momentum: 'neutral' };
};

const analyse = (input: AnalysisInput): TTechnicalOutput => {
  const reading = readTechnicals(input);
  if (input.bars.length < MIN_TECHNICAL_BARS) return shortHistory(input, reading);
  const votes = votesOf(reading);
  const net = votes.reduce((sum, vote) => sum + vote.points, 0);
  const score = votes.length === 0 ? 0 : net / votes.length;
  const coverage = votes.length / MAX_VOTES;
  const signal: TSignal = score >= SIGNAL_THRESHOLD ? 'buy' : score <= -SIGNAL_THRESHOLD ? 'sell' : 'hold';
  // Buy or sell: the net agreement of the votes. Hold: how balanced they are (at most 0.5, as
  // "nothing to do" is a weaker claim). Both shrink when the history leaves indicators out.
  const agreement = signal === 'hold' ? 0.5 * (1 - Math.abs(score) / SIGNAL_THRESHOLD) : Math.abs(score);
  const confidence = roundTo(Math.min(1, Math.max(0, agreement * coverage)), 2);
  const trend = trendOf(reading);
  const momentum = momentumOf(reading);
  const tally = votes.map((vote) => `${vote.label} ${formatPoints(vote.points)}`).join(', ');
  const verdict = `Points: ${tally}; net ${formatPoints(net)} of ${votes.length} (score ${score.toFixed(2)}), so ${signal} with confidence ${confidence.toFixed(2)}; trend ${trend}, momentum ${momentum}.`;
  return { signal, confidence, reasoning: [...sentencesOf(reading), verdict].join(' '), indicators: indicatorRecord(reading), trend, momentum };
};

const SYSTEM = [
  'You are the technical analyst in a multi-agent analysis of one instrument on daily bars.',
  'Judge trend, momentum and overextension from the indicator values and recent closes given, and only from them.',
  'Signal buy, sell or hold for a horizon of a few weeks; confidence reflects how far the indicators agree.',
  'Reasoning: a few sentences quoting the actual numbers. Copy the indicator values you relied on into "indicators" (null where not given).',
  `With fewer than ${MIN_TECHNICAL_BARS} bars answer hold with confidence 0 and say the history is too short.`,
].join('\n');

const userPrompt = (input: AnalysisInput): string => {
  const reading = readTechnicals(input);
  const record = Object.fromEntries(Object.entries(indicatorRecord(reading)).map(([name, value]) => [name, significant(value)]));
  const first = input.bars[0];
  const last = input.bars.at(-1);
  const closes = input.bars.slice(-CLOSES_IN_PROMPT).map((bar) => significant(bar.close));
  return [
    `Symbol: ${input.symbol}`,
    `Asset class: ${input.assetClass}`,
    `Currency: ${input.currency}`,
    first && last ? `Bars: ${input.bars.length} daily bars from ${first.date} to ${last.date}; last bar date ${last.date}` : 'Bars: none',
    `Indicators at the last close (null = not enough history): ${JSON.stringify(record)}`,
    `Last ${closes.length} closes, oldest first: ${closes.join(', ')}`,
  ].join('\n');
};

export const technicalAgent: Agent<AnalysisInput, TTechnicalOutput> = {
  name: 'technical',
  role: 'analyst',
  schema: ZTechnicalOutput,
  heuristic: analyse,
  prompt: (input) => ({ system: `${SYSTEM}\n${answerFormat(ZTechnicalOutput)}`, user: userPrompt(input) }),
};
