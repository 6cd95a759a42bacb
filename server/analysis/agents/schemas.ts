// The JSON every analysis agent answers with: the heuristic builds these shapes and an LLM's answer
// is validated against them. Field names are the report's wire names (technical_output,
// intel_output, risk_output, decision_output); extra fields carry the numbers an answer rests on.
import { z } from 'zod';

export const ZSignal = z.enum(['buy', 'sell', 'hold']);
export type TSignal = z.infer<typeof ZSignal>;

const ZConfidence = z.number().min(0).max(1).describe('0 = no confidence, 1 = certain');
const ZReasoning = z.string().min(1).describe('sentences citing the actual numbers or items given; never invented facts');
/** A price level, or null when there is no price at all to derive it from. */
const ZLevel = z.number().nullable();

export const ZTechnicalOutput = z.object({
  signal: ZSignal,
  confidence: ZConfidence,
  reasoning: ZReasoning,
  indicators: z.record(z.string(), z.number().nullable()).describe('the indicator values used, by name; null when not computable'),
  trend: z.enum(['up', 'down', 'sideways']),
  momentum: z.enum(['positive', 'negative', 'neutral']),
});
export type TTechnicalOutput = z.infer<typeof ZTechnicalOutput>;

export const ZIntelOutput = z.object({
  signal: ZSignal,
  confidence: ZConfidence,
  reasoning: ZReasoning,
  sources: z.array(z.string()).describe('headlines or URLs of the items used; empty when none'),
});
export type TIntelOutput = z.infer<typeof ZIntelOutput>;

export const ZRiskLevel = z.enum(['low', 'medium', 'high']);
export type TRiskLevel = z.infer<typeof ZRiskLevel>;

export const ZRiskOutput = z.object({
  risk_level: ZRiskLevel,
  veto_buy: z.boolean().describe('true forbids a buy decision'),
  flags: z.array(z.string()).describe('e.g. high_volatility, deep_drawdown, low_liquidity, short_history, downtrend'),
  volatility: z.number().nullable().describe('annualised volatility of daily log returns, a fraction'),
  max_drawdown: z.number().nullable().describe('deepest fall from a peak over the window, a negative fraction'),
  atr: z.number().nullable().describe('Wilder ATR(14) in price units'),
  atr_stop: z.number().nullable().describe('last close − 2 × ATR'),
  avg_daily_value: z.number().nullable().optional().describe('mean close × volume over 20 days, in the instrument currency'),
  reasoning: ZReasoning,
});
export type TRiskOutput = z.infer<typeof ZRiskOutput>;

export const ZStance = z.enum(['bull', 'bear']);
export type TStance = z.infer<typeof ZStance>;

export const ZDebateOutput = z.object({
  stance: ZStance,
  argument: z.string().min(1).describe('the case for this side from the facts given, answering the other side’s last point'),
  confidence: ZConfidence,
});
export type TDebateOutput = z.infer<typeof ZDebateOutput>;

export const ZDecisionOutput = z.object({
  signal: ZSignal,
  confidence: ZConfidence,
  score: z.number().min(-1).max(1).describe('−1 strong sell … 0 neutral … 1 strong buy'),
  ideal_buy: ZLevel,
  secondary_buy: ZLevel,
  stop_loss: ZLevel,
  take_profit: ZLevel,
  currency: z.string().min(1),
  reasoning: ZReasoning,
});
export type TDecisionOutput = z.infer<typeof ZDecisionOutput>;

/**
 * The closing instruction of every prompt: answer with one JSON object matching the agent's own
 * schema. The schema is rendered from the zod object, so the prompt cannot drift from validation.
 */
export const answerFormat = (schema: z.ZodType): string => {
  const { $schema: _dialect, ...shape } = z.toJSONSchema(schema);
  return [
    'Answer with exactly one JSON object and nothing else: no markdown fences, no text before or after it.',
    `It must match this JSON Schema: ${JSON.stringify(shape)}`,
  ].join('\n');
};
