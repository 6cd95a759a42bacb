// The decider: weighs the technical view, the intel view and the debate into one score, lets the
// risk veto turn a buy into a hold, and draws buy, stop and target levels from the close and ATR,
// on the instrument's tick grid (levels.ts).
import type { Agent, AnalysisInput } from '../types.ts';
import { atr, columnsOf, formatNumber, roundTo, significant } from './indicators.ts';
import { ATR_STOP_MULTIPLE, atrStopOf, levelAtr, MAX_ATR_SHARE_FOR_LEVELS } from './risk.ts';
import { decisionOnGrid, levelsOnGrid } from './levels.ts';
import { answerFormat, ZDecisionOutput } from './schemas.ts';
import type { TDebateOutput, TDecisionOutput, TIntelOutput, TRiskOutput, TSignal, TTechnicalOutput } from './schemas.ts';

export interface DecisionContext {
  input: AnalysisInput;
  technical: TTechnicalOutput;
  intel: TIntelOutput | null;
  risk: TRiskOutput | null;
  /** The debate's turns, oldest first; empty when there was no debate. */
  debate: TDebateOutput[];
}

/** How much each view counts; a view that is absent (or holds no confidence) is left out and the rest renormalised. */
const WEIGHTS = { technical: 0.6, intel: 0.2, debate: 0.2 } as const;
/** The score from which the decision is buy (or, negated, sell). */
const SIGNAL_THRESHOLD = 0.2;
/** A hold forced by the veto is a rule, not a weak read: it carries this confidence. */
const VETO_HOLD_CONFIDENCE = 0.5;
/** With no range measurable at all (one flat bar), levels are drawn with this share of the close. */
const FALLBACK_RANGE_SHARE = 0.02;
const IDEAL_BUY_ATR = 0.5;
const SECONDARY_BUY_ATR = 1.5;
const TAKE_PROFIT_ATR = 3;

const directionOf = (signal: TSignal): number => (signal === 'buy' ? 1 : signal === 'sell' ? -1 : 0);

interface Component {
  name: string;
  weight: number;
  value: number;
  note: string;
}

const componentsOf = ({ technical, intel, debate }: DecisionContext): { counted: Component[]; notes: string[] } => {
  const counted: Component[] = [
    {
      name: 'technical',
      weight: WEIGHTS.technical,
      value: directionOf(technical.signal) * technical.confidence,
      note: `technical ${technical.signal} at confidence ${technical.confidence.toFixed(2)} (trend ${technical.trend}, momentum ${technical.momentum})`,
    },
  ];
  const notes: string[] = [];
  if (intel === null) notes.push('no intel view');
  else if (intel.confidence === 0) notes.push(`intel ${intel.signal} at confidence 0, not counted`);
  else {
    counted.push({ name: 'intel', weight: WEIGHTS.intel, value: directionOf(intel.signal) * intel.confidence, note: `intel ${intel.signal} at confidence ${intel.confidence.toFixed(2)}` });
  }
  if (debate.length === 0) notes.push('no debate');
  else {
    const meanOf = (stance: 'bull' | 'bear'): number => {
      const turns = debate.filter((turn) => turn.stance === stance);
      return turns.length === 0 ? 0 : turns.reduce((sum, turn) => sum + turn.confidence, 0) / turns.length;
    };
    const bull = meanOf('bull');
    const bear = meanOf('bear');
    counted.push({
      name: 'debate',
      weight: WEIGHTS.debate,
      value: bull - bear,
      note: `debate bull ${bull.toFixed(2)} against bear ${bear.toFixed(2)} over ${debate.length} turn${debate.length === 1 ? '' : 's'}`,
    });
  }
  return { counted, notes };
};

interface Levels {
  ideal_buy: number;
  secondary_buy: number;
  stop_loss: number;
  take_profit: number;
  explanation: string;
}

/** The range levels are drawn with: ATR14, else the ATR of the bars there are, else a share of the close. */
const rangeOf = (input: AnalysisInput, close: number): { range: number; label: string } => {
  const { closes, highs, lows } = columnsOf(input.bars);
  const full = atr(highs, lows, closes, 14);
  if (full !== null && full > 0) return { range: full, label: `ATR14 ${formatNumber(full)}` };
  const period = Math.min(14, closes.length - 1);
  const short = period >= 1 ? atr(highs, lows, closes, period) : null;
  if (short !== null && short > 0) return { range: short, label: `ATR${period} ${formatNumber(short)} (too few bars for ATR14)` };
  const last = input.bars.at(-1);
  const span = last ? last.high - last.low : 0;
  if (Number.isFinite(span) && span > 0) return { range: span, label: `the last bar's range ${formatNumber(span)} (too few bars for an ATR)` };
  const share = close * FALLBACK_RANGE_SHARE;
  return { range: share, label: `${FALLBACK_RANGE_SHARE * 100}% of the close, ${formatNumber(share)} (no range measurable)` };
};

const levelsOf = (input: AnalysisInput, close: number, risk: TRiskOutput | null): Levels => {
  const { range, label } = rangeOf(input, close);
  const a = levelAtr(close, range);
  const secondary = close - SECONDARY_BUY_ATR * a;
  // The risk agent's stop is taken when it is a price below the secondary buy; an LLM's risk view
  // could carry anything, and a stop above the buys would close the position on entry.
  const riskStop = risk?.atr_stop;
  const useRiskStop = typeof riskStop === 'number' && Number.isFinite(riskStop) && riskStop > 0 && riskStop < secondary;
  const stop = useRiskStop ? riskStop : atrStopOf(close, range);
  const levels = levelsOnGrid({ ideal_buy: close - IDEAL_BUY_ATR * a, secondary_buy: secondary, stop_loss: stop, take_profit: close + TAKE_PROFIT_ATR * a }, input.tick);
  const capped = a < range ? `, capped at ${MAX_ATR_SHARE_FOR_LEVELS * 100}% of the close` : '';
  const explanation =
    `Levels from close ${formatNumber(close)} and ${label}${capped}: ideal buy ${formatNumber(levels.ideal_buy)} (close − ${IDEAL_BUY_ATR} × ATR), ` +
    `secondary buy ${formatNumber(levels.secondary_buy)} (close − ${SECONDARY_BUY_ATR} × ATR), stop loss ${formatNumber(levels.stop_loss)} ` +
    `(${useRiskStop ? "the risk agent's ATR stop" : `close − ${ATR_STOP_MULTIPLE} × ATR`}), take profit ${formatNumber(levels.take_profit)} (close + ${TAKE_PROFIT_ATR} × ATR), in ${input.currency}.`;
  return { ...levels, explanation };
};

/** A close levels can be drawn from: there, finite and positive. */
const isPrice = (close: number | undefined): close is number => close !== undefined && Number.isFinite(close) && close > 0;

const formatSigned = (x: number): string => (x > 0 ? `+${x.toFixed(2)}` : x.toFixed(2));

const decide = (context: DecisionContext): TDecisionOutput => {
  const { input, risk } = context;
  const close = input.bars.at(-1)?.close;
  if (!isPrice(close)) {
    const why = close === undefined ? `No daily bars are available for ${input.symbol}` : `The last close of ${input.symbol} is not a usable price`;
    return {
      signal: 'hold',
      confidence: 0,
      score: 0,
      ideal_buy: null,
      secondary_buy: null,
      stop_loss: null,
      take_profit: null,
      currency: input.currency,
      reasoning: `${why}, so there is no price to decide on or draw levels from: hold with confidence 0 and no levels.`,
    };
  }

  const { counted, notes } = componentsOf(context);
  const totalWeight = counted.reduce((sum, c) => sum + c.weight, 0);
  const raw = counted.reduce((sum, c) => sum + c.weight * c.value, 0) / totalWeight;
  const score = roundTo(Math.min(1, Math.max(-1, raw)), 2);
  const scored: TSignal = score >= SIGNAL_THRESHOLD ? 'buy' : score <= -SIGNAL_THRESHOLD ? 'sell' : 'hold';
  const vetoed = scored === 'buy' && risk?.veto_buy === true;
  const signal: TSignal = vetoed ? 'hold' : scored;
  const confidence = roundTo(vetoed ? VETO_HOLD_CONFIDENCE : signal === 'hold' ? 0.5 * (1 - Math.abs(score) / SIGNAL_THRESHOLD) : Math.min(1, Math.abs(score)), 2);

  const weighed = counted.map((c) => `${c.note}, weight ${(c.weight / totalWeight).toFixed(2)}`).join('; ');
  const sentences = [`Weighed: ${weighed}${notes.length > 0 ? `; ${notes.join('; ')}` : ''}. Score ${formatSigned(score)} reads ${scored}.`];
  if (risk === null) sentences.push('No risk view was given.');
  else {
    const flags = risk.flags.length > 0 ? risk.flags.join(', ') : 'no flags';
    sentences.push(
      vetoed
        ? `Risk is ${risk.risk_level} (${flags}) and vetoes buying, so the buy becomes a hold.`
        : `Risk is ${risk.risk_level} (${flags})${risk.veto_buy ? `; it vetoes buying, which leaves a ${scored} unchanged` : ''}.`,
    );
  }
  sentences.push(`Decision: ${signal} at confidence ${confidence.toFixed(2)}.`);
  const levels = levelsOf(input, close, risk);
  sentences.push(levels.explanation);

  return {
    signal,
    confidence,
    score,
    ideal_buy: levels.ideal_buy,
    secondary_buy: levels.secondary_buy,
    stop_loss: levels.stop_loss,
    take_profit: levels.take_profit,
    currency: input.currency,
    reasoning: sentences.join(' '),
  };
};

const SYSTEM = [
  "You are the decider in a multi-agent analysis of one instrument: you turn the analysts' views into one decision.",
  'Weigh the technical view most, then the intel view and the debate; use only what the user message gives.',
  'score runs from −1 (strong sell) through 0 to 1 (strong buy). If the risk view has veto_buy true, the signal must not be buy (hold instead).',
  "Levels from the last close and ATR: ideal_buy ≈ close − 0.5 × ATR, secondary_buy ≈ close − 1.5 × ATR, stop_loss = the risk view's atr_stop (else close − 2 × ATR), take_profit ≈ close + 3 × ATR; all null when there is no price.",
  "currency is the instrument's currency given below. Reasoning cites the inputs it rests on.",
].join('\n');

const userPrompt = (context: DecisionContext): string => {
  const { input } = context;
  const { closes, highs, lows } = columnsOf(input.bars);
  const close = closes.at(-1) ?? null;
  const last = input.bars.at(-1)?.close;
  const reference = isPrice(last) ? levelsOf(input, last, context.risk) : null;
  const formulaLevels =
    reference === null
      ? 'none (no price)'
      : JSON.stringify({ ideal_buy: reference.ideal_buy, secondary_buy: reference.secondary_buy, stop_loss: reference.stop_loss, take_profit: reference.take_profit });
  return [
    `Symbol: ${input.symbol}`,
    `Asset class: ${input.assetClass}`,
    `Currency: ${input.currency}`,
    `Last bar date: ${input.bars.at(-1)?.date ?? 'none'}`,
    `Last close: ${significant(close) ?? 'none'}; ATR14: ${significant(atr(highs, lows, closes, 14)) ?? 'n/a'}`,
    `Levels by the formulas above (on the instrument's tick grid: buys rounded down, stop and target up): ${formulaLevels}`,
    `Technical view: ${JSON.stringify(context.technical)}`,
    `Intel view: ${context.intel === null ? 'none (not run)' : JSON.stringify(context.intel)}`,
    `Risk view: ${context.risk === null ? 'none (not run)' : JSON.stringify(context.risk)}`,
    `Debate (oldest first): ${context.debate.length === 0 ? 'none' : JSON.stringify(context.debate)}`,
  ].join('\n');
};

export const decisionAgent: Agent<DecisionContext, TDecisionOutput> = {
  name: 'decision',
  role: 'decider',
  schema: ZDecisionOutput,
  heuristic: decide,
  prompt: (context) => ({ system: `${SYSTEM}\n${answerFormat(ZDecisionOutput)}`, user: userPrompt(context) }),
  finish: (context, decision) => decisionOnGrid(decision, context.input.tick),
};
