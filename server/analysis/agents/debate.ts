// The bull and bear debaters: each argues from the facts that favour its side (the bars and the
// analysts' views), answers the other side's last point in later rounds, and is as confident as
// its share of the facts allows.
import type { Agent, AnalysisInput } from '../types.ts';
import { formatNumber, formatPercent, formatShare, roundTo, significant } from './indicators.ts';
import { answerFormat, ZDebateOutput } from './schemas.ts';
import type { TDebateOutput, TIntelOutput, TRiskOutput, TStance, TTechnicalOutput } from './schemas.ts';
import { readTechnicals, RSI_OVERBOUGHT, RSI_OVERSOLD } from './technical.ts';

export interface DebateTurn {
  stance: TStance;
  argument: string;
}

export interface DebateContext {
  input: AnalysisInput;
  technical: TTechnicalOutput;
  intel: TIntelOutput | null;
  risk: TRiskOutput | null;
  /** Counts from 1. */
  round: number;
  /** The turns so far, oldest first. */
  transcript: DebateTurn[];
}

/** How much of the other side's last argument is quoted when answering it. */
const QUOTE_CHARS = 160;

/** Every fact in the context, sorted by the side it favours. */
const factsOf = ({ input, technical, intel, risk }: DebateContext): Record<TStance, string[]> => {
  const bull: string[] = [];
  const bear: string[] = [];
  const r = readTechnicals(input);

  if (technical.signal === 'buy') bull.push(`the technical read is buy (confidence ${technical.confidence.toFixed(2)})`);
  if (technical.signal === 'sell') bear.push(`the technical read is sell (confidence ${technical.confidence.toFixed(2)})`);
  if (technical.trend === 'up') bull.push('the trend is up');
  if (technical.trend === 'down') bear.push('the trend is down');
  if (technical.momentum === 'positive') bull.push('momentum is positive');
  if (technical.momentum === 'negative') bear.push('momentum is negative');
  if (r.close !== null && r.sma200 !== null) {
    if (r.close > r.sma200) bull.push(`the close ${formatNumber(r.close)} is above SMA200 ${formatNumber(r.sma200)}`);
    if (r.close < r.sma200) bear.push(`the close ${formatNumber(r.close)} is below SMA200 ${formatNumber(r.sma200)}`);
  }
  if (r.rsi14 !== null) {
    if (r.rsi14 > RSI_OVERBOUGHT) bear.push(`RSI14 ${r.rsi14.toFixed(1)} is overbought`);
    else if (r.rsi14 < RSI_OVERSOLD) bull.push(`RSI14 ${r.rsi14.toFixed(1)} is oversold, leaving room to rebound`);
    else bull.push(`RSI14 ${r.rsi14.toFixed(1)} is not overbought`);
  }
  if (r.macd !== null) {
    if (r.macd.histogram > 0) bull.push(`the MACD histogram is positive (${formatNumber(r.macd.histogram)})`);
    if (r.macd.histogram < 0) bear.push(`the MACD histogram is negative (${formatNumber(r.macd.histogram)})`);
  }
  if (r.return20d !== null) {
    if (r.return20d > 0) bull.push(`the 20-day return is ${formatPercent(r.return20d)}`);
    if (r.return20d < 0) bear.push(`the 20-day return is ${formatPercent(r.return20d)}`);
  }

  if (risk !== null) {
    if (risk.risk_level === 'low') bull.push('the risk analyst rates the risk low');
    if (risk.risk_level === 'high') bear.push('the risk analyst rates the risk high');
    for (const flag of risk.flags) {
      if (flag === 'high_volatility' && risk.volatility !== null) bear.push(`annualised volatility is ${formatShare(risk.volatility)}`);
      else if (flag === 'deep_drawdown' && risk.max_drawdown !== null) bear.push(`the drawdown reached ${formatPercent(risk.max_drawdown)}`);
      // The downtrend is already counted from the technical trend.
      else if (flag !== 'downtrend') bear.push(`the risk analyst flags ${flag.replaceAll('_', ' ')}`);
    }
    if (risk.veto_buy) bear.push('the risk analyst vetoes buying');
  }

  if (intel !== null && intel.confidence > 0) {
    if (intel.signal === 'buy') bull.push(`the intel read is buy (confidence ${intel.confidence.toFixed(2)})`);
    if (intel.signal === 'sell') bear.push(`the intel read is sell (confidence ${intel.confidence.toFixed(2)})`);
  }
  return { bull, bear };
};

const otherSide = (stance: TStance): TStance => (stance === 'bull' ? 'bear' : 'bull');

/**
 * The point the other side last made: the first of its facts its argument names (a heuristic
 * argument lists its facts verbatim, leading with its own case), else the opening of its argument
 * (an LLM's words), shortened to a quote. Null before the other side has spoken.
 */
const lastPointOf = (transcript: readonly DebateTurn[], stance: TStance, theirFacts: readonly string[]): string | null => {
  const last = transcript.findLast((turn) => turn.stance === stance);
  if (!last) return null;
  const named = theirFacts
    .map((fact) => ({ fact, at: last.argument.indexOf(fact) }))
    .filter(({ at }) => at >= 0)
    .sort((a, b) => a.at - b.at)[0];
  if (named) return named.fact;
  const text = last.argument.trim().replaceAll(/\s+/g, ' ');
  const opening = /^.*?[.!?](?:\s|$)/.exec(text)?.[0].trim() ?? text;
  return `"${opening.length > QUOTE_CHARS ? `${opening.slice(0, QUOTE_CHARS - 1)}…` : opening}"`;
};

const argue = (stance: TStance, context: DebateContext): TDebateOutput => {
  const facts = factsOf(context);
  const other = otherSide(stance);
  const own = facts[stance];
  const against = facts[other];
  const total = own.length + against.length;
  const confidence = total === 0 ? 0 : roundTo(own.length / total, 2);
  // Each later round leads with a different fact, so the debate does not repeat itself verbatim.
  const shift = own.length === 0 ? 0 : Math.max(0, context.round - 1) % own.length;
  const ordered = [...own.slice(shift), ...own.slice(0, shift)];
  const side = stance === 'bull' ? 'buying' : 'staying out of';
  // The own case comes first, so the other side can find this side's lead fact at the start.
  const sentences = [
    ordered.length > 0 ? `The case for ${side} ${context.input.symbol}: ${ordered.join('; ')}.` : `No fact in the numbers favours ${side} ${context.input.symbol}.`,
  ];
  const theirPoint = lastPointOf(context.transcript, other, against);
  if (theirPoint !== null) {
    const counter = ordered[0];
    if (against.length === 0) sentences.push(`The ${other} has no fact in the numbers to set against this case.`);
    else if (counter === undefined) sentences.push(`The ${other}'s point that ${theirPoint} stands: the numbers give nothing to set against it.`);
    else {
      const more = ordered.length - 1;
      sentences.push(`To the ${other}'s point that ${theirPoint}: ${counter}${more > 0 ? `, with ${more} more fact${more > 1 ? 's' : ''} on the ${stance} side` : ''}.`);
    }
  }
  sentences.push(`${own.length} of ${total} facts favour the ${stance} side.`);
  return { stance, argument: sentences.join(' '), confidence };
};

const systemOf = (stance: TStance): string =>
  [
    `You are the ${stance} debater in a multi-agent analysis of one instrument: you argue the case ${stance === 'bull' ? 'for buying' : 'against buying (for holding off or selling)'}.`,
    'Argue only from the facts given in the user message (the technical, intel and risk views and their numbers); invent nothing.',
    `If the ${otherSide(stance)} has spoken, answer their last point directly before making your own.`,
    `stance must be "${stance}". confidence is how strongly the facts support your side, honestly: low when they mostly favour the other side.`,
  ].join('\n');

const userPrompt = (context: DebateContext): string => {
  const r = readTechnicals(context.input);
  const numbers = { close: significant(r.close), sma200: significant(r.sma200), rsi14: significant(r.rsi14, 4), return_20d: significant(r.return20d, 4) };
  return [
    `Symbol: ${context.input.symbol}`,
    `Asset class: ${context.input.assetClass}`,
    `Last bar date: ${context.input.bars.at(-1)?.date ?? 'none'}`,
    `Round: ${context.round}`,
    `Key numbers: ${JSON.stringify(numbers)}`,
    `Technical view: ${JSON.stringify(context.technical)}`,
    `Intel view: ${context.intel === null ? 'none (not run)' : JSON.stringify(context.intel)}`,
    `Risk view: ${context.risk === null ? 'none (not run)' : JSON.stringify(context.risk)}`,
    `Transcript so far (oldest first): ${context.transcript.length === 0 ? 'empty, you speak first' : JSON.stringify(context.transcript)}`,
  ].join('\n');
};

const debater = (stance: TStance): Agent<DebateContext, TDebateOutput> => ({
  name: stance,
  role: 'debater',
  schema: ZDebateOutput,
  heuristic: (context) => argue(stance, context),
  prompt: (context) => ({ system: `${systemOf(stance)}\n${answerFormat(ZDebateOutput)}`, user: userPrompt(context) }),
});

export const bullAgent = debater('bull');
export const bearAgent = debater('bear');
