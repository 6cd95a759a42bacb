// The shapes the analysis area is built from: what every agent reads (an instrument's daily bars up
// to the run's as-of date), what an agent is (a deterministic heuristic and a prompt asking an LLM
// for the same JSON), and what an LLM client answers.
import type { z } from 'zod';
import type { TAssetClass } from '../../contracts/common.ts';
import type { TickGrid } from '../instruments/ticks.ts';

/** One daily bar as the agents read it, oldest first in a series. */
export interface AnalysisBar {
  date: string;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
}

/** What every agent of one run sees. No bar is later than the run's as-of date. */
export interface AnalysisInput {
  assetClass: TAssetClass;
  symbol: string;
  currency: string;
  /** Oldest first; may be short or empty (an agent then says so, it never invents numbers). */
  bars: readonly AnalysisBar[];
  /** The instrument's price grid: every price level a report suggests lies on it. */
  tick: TickGrid;
}

export type TAgentName = 'technical' | 'intel' | 'risk' | 'bull' | 'bear' | 'decision';

/**
 * One agent. `heuristic` is the `heuristic` provider's answer: deterministic, from the numbers,
 * with its reasoning written from them. `prompt` asks an LLM for the same JSON, which the
 * orchestrator validates with `schema` (invalid output is retried once, then the agent fails).
 */
export interface Agent<TContext, TOutput> {
  name: TAgentName;
  /** The trace's `role`, e.g. `analyst`, `debater`, `decider`. */
  role: string;
  schema: z.ZodType<TOutput>;
  heuristic(context: TContext): TOutput;
  prompt(context: TContext): { system: string; user: string };
  /** What the run keeps of an answer, the heuristic's or a valid LLM's (e.g. its prices on the tick grid). */
  finish?(context: TContext, output: TOutput): TOutput;
}

/** One call to an LLM: a system and a user message, answered with text (the agents ask for JSON). */
export interface LlmCall {
  system: string;
  user: string;
  /** The cap on the answer's tokens. */
  maxOutputTokens: number;
  /** The wall-clock cap of the call, retries included. */
  timeoutMs: number;
  /** Aborts the call (the report's own wall-clock cap). */
  signal?: AbortSignal;
}

export interface LlmAnswer {
  text: string;
  tokensInput: number;
  tokensOutput: number;
  /** From the first request sent to the answer, retries included. */
  latencyMs: number;
  /** The exact model id the provider answered with. */
  model: string;
  costUsd: number;
  /** Requests sent, the first included. */
  attempts: number;
}

export type TLlmProviderName = 'openai' | 'anthropic';

export interface LlmClient {
  readonly provider: TLlmProviderName;
  readonly model: string;
  complete(call: LlmCall): Promise<LlmAnswer>;
}

/** Why a call failed, after its retries: the orchestrator records it and fails the agent. */
export class LlmError extends Error {
  override readonly name = 'LlmError';
  readonly kind: 'timeout' | 'aborted' | 'http' | 'network' | 'malformed';
  readonly status: number | undefined;
  /** Tokens spent by attempts that answered (a malformed body still costs). */
  readonly tokensInput: number;
  readonly tokensOutput: number;
  readonly costUsd: number;
  constructor(kind: LlmError['kind'], message: string, extra: { status?: number; tokensInput?: number; tokensOutput?: number; costUsd?: number } = {}) {
    super(message);
    this.kind = kind;
    this.status = extra.status;
    this.tokensInput = extra.tokensInput ?? 0;
    this.tokensOutput = extra.tokensOutput ?? 0;
    this.costUsd = extra.costUsd ?? 0;
  }
}

/** Prices per million tokens, by model id; a model without a price costs 0 (and says so in the report). */
export type TModelPrices = Record<string, { input: number; output: number }>;
