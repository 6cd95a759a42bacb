// One run of the agents on one symbol, in the order its mode asks for (quick: technical then
// decision; standard: technical, intel, risk, decision; full: standard with a bull/bear debate
// before the decision), each step recorded as a trace as it ends. Every run is bounded: tokens
// per call and per report, and a wall-clock cap; the first cap reached ends the run and is named.
import type { TAnalysisMode } from '../../contracts/analysis.ts';
import { systemClock, wakeAt, type Clock } from '../clock.ts';
import { bearAgent, bullAgent, decisionAgent, intelAgent, riskAgent, technicalAgent } from './agents/index.ts';
import type { IntelItem } from './agents/intel.ts';
import type { TDebateOutput, TDecisionOutput, TIntelOutput, TRiskOutput, TTechnicalOutput } from './agents/schemas.ts';
import { LlmError, type Agent, type AnalysisInput, type LlmClient, type TAgentName } from './types.ts';

export interface RunCaps {
  tokensPerCall: number;
  tokensPerReport: number;
  /** The wall-clock cap of the whole run. */
  reportTimeoutMs: number;
  /** One call's cap, retries included. */
  callTimeoutMs: number;
}

export interface TraceStep {
  stepIndex: number;
  agentName: TAgentName;
  role: string;
  content: string;
  tokensInput: number;
  tokensOutput: number;
  latencyMs: number;
  /** The agent's last step: it answered, or failed for good (an invalid first answer is asked again). */
  agentDone: boolean;
}

/** Agent steps a mode plans: quick technical + decision; standard adds intel and risk; full a bull and a bear each debate round. */
export const plannedAgentSteps = (mode: TAnalysisMode, debateRounds: number): number => (mode === 'quick' ? 2 : mode === 'standard' ? 4 : 4 + 2 * debateRounds);

export interface RunOptions {
  input: AnalysisInput;
  mode: TAnalysisMode;
  debateRounds: number;
  /** Undefined: the heuristic provider (each agent's deterministic rules). */
  llm: LlmClient | undefined;
  /** What the news and fundamentals source found; null when none is configured. */
  intel: IntelItem[] | null;
  caps: RunCaps;
  /** What the report's cap is measured on (the service's clock; the system's by default). */
  clock?: Clock;
  /** Called as each step ends (the traces are written as the run goes). */
  onStep: (step: TraceStep) => Promise<void>;
}

export interface RunOutcome {
  technical: TTechnicalOutput | null;
  intel: TIntelOutput | null;
  risk: TRiskOutput | null;
  debate: TDebateOutput[];
  decision: TDecisionOutput | null;
  /** Agents that gave no valid answer, with why. */
  failures: { agent: TAgentName; reason: string }[];
  /** The cap that ended the run early, if one did. */
  capReached: 'tokens_per_report' | 'wall_clock' | null;
  tokensInput: number;
  tokensOutput: number;
  costUsd: number;
  /** The exact model id that answered (the configured one until a call answers). */
  model: string | null;
}

class CapReached extends Error {
  readonly cap: 'tokens_per_report' | 'wall_clock';
  constructor(cap: 'tokens_per_report' | 'wall_clock') {
    super(cap === 'wall_clock' ? 'the report reached its wall-clock cap' : 'the report reached its token cap');
    this.cap = cap;
  }
}

/** The JSON object in an answer: the whole text, or the outermost {...} in it (models add prose or fences). */
const jsonIn = (text: string): unknown => {
  const trimmed = text.trim();
  for (const candidate of [trimmed, trimmed.slice(trimmed.indexOf('{'), trimmed.lastIndexOf('}') + 1)]) {
    try {
      return JSON.parse(candidate);
    } catch {
      // try the next form
    }
  }
  return undefined;
};

export const runAgents = async (options: RunOptions): Promise<RunOutcome> => {
  const { input, mode, llm, caps, onStep, clock = systemClock() } = options;
  const outcome: RunOutcome = { technical: null, intel: null, risk: null, debate: [], decision: null, failures: [], capReached: null, tokensInput: 0, tokensOutput: 0, costUsd: 0, model: null };
  const deadline = new AbortController();
  const cancelDeadline = wakeAt(clock, new Date(clock.now().getTime() + caps.reportTimeoutMs), () => deadline.abort());
  let stepIndex = 0;

  const record = (agent: Agent<never, unknown>, content: string, usage: { tokensInput: number; tokensOutput: number; latencyMs: number }, agentDone = true) =>
    onStep({ stepIndex: stepIndex++, agentName: agent.name, role: agent.role, content, ...usage, agentDone });

  /** One agent's answer: its rules, or an LLM's JSON validated by its schema (an invalid answer is asked again once). */
  const step = async <TContext, TOutput>(agent: Agent<TContext, TOutput>, context: TContext): Promise<TOutput | null> => {
    if (deadline.signal.aborted) throw new CapReached('wall_clock');
    const finish = (output: TOutput): TOutput => (agent.finish ? agent.finish(context, output) : output);
    if (!llm) {
      const started = performance.now();
      const output = finish(agent.heuristic(context));
      await record(agent, JSON.stringify(output), { tokensInput: 0, tokensOutput: 0, latencyMs: Math.round(performance.now() - started) });
      return output;
    }
    const { system, user } = agent.prompt(context);
    let problem = '';
    for (let attempt = 1; attempt <= 2; attempt++) {
      const left = caps.tokensPerReport - outcome.tokensInput - outcome.tokensOutput;
      if (left <= 0) throw new CapReached('tokens_per_report');
      const retryNote = attempt === 1 ? '' : `\n\nYour previous answer was not valid: ${problem}. Answer again with only the JSON object.`;
      try {
        const answer = await llm.complete({ system, user: user + retryNote, maxOutputTokens: Math.min(caps.tokensPerCall, left), timeoutMs: caps.callTimeoutMs, signal: deadline.signal });
        outcome.tokensInput += answer.tokensInput;
        outcome.tokensOutput += answer.tokensOutput;
        outcome.costUsd += answer.costUsd;
        outcome.model = answer.model;
        const parsed = agent.schema.safeParse(jsonIn(answer.text));
        const usage = { tokensInput: answer.tokensInput, tokensOutput: answer.tokensOutput, latencyMs: answer.latencyMs };
        if (parsed.success) {
          const output = finish(parsed.data);
          await record(agent, JSON.stringify(output), usage);
          return output;
        }
        problem = parsed.error.issues
          .slice(0, 3)
          .map((issue) => `${issue.path.join('.') || 'answer'}: ${issue.message}`)
          .join('; ');
        await record(agent, answer.text, usage, attempt === 2);
      } catch (error) {
        if (!(error instanceof LlmError)) throw error;
        outcome.tokensInput += error.tokensInput;
        outcome.tokensOutput += error.tokensOutput;
        outcome.costUsd += error.costUsd;
        if (error.kind === 'aborted' && deadline.signal.aborted) throw new CapReached('wall_clock');
        await record(agent, `call failed (${error.kind}${error.status ? ` ${error.status}` : ''}): ${error.message}`, {
          tokensInput: error.tokensInput,
          tokensOutput: error.tokensOutput,
          latencyMs: 0,
        });
        outcome.failures.push({ agent: agent.name, reason: `${error.kind}: ${error.message}` });
        return null;
      }
    }
    outcome.failures.push({ agent: agent.name, reason: `invalid answer twice (${problem})` });
    return null;
  };

  try {
    outcome.technical = await step(technicalAgent, input);
    if (!outcome.technical) return outcome;
    if (mode !== 'quick') {
      outcome.intel = await step(intelAgent, { input, items: options.intel });
      outcome.risk = await step(riskAgent, { input, technical: outcome.technical });
    }
    if (mode === 'full') {
      for (let round = 1; round <= options.debateRounds; round++) {
        for (const agent of [bullAgent, bearAgent]) {
          const transcript = outcome.debate.map(({ stance, argument }) => ({ stance, argument }));
          const said = await step(agent, { input, technical: outcome.technical, intel: outcome.intel, risk: outcome.risk, round, transcript });
          if (said) outcome.debate.push(said);
        }
      }
    }
    outcome.decision = await step(decisionAgent, { input, technical: outcome.technical, intel: outcome.intel, risk: outcome.risk, debate: outcome.debate });
  } catch (error) {
    if (!(error instanceof CapReached)) throw error;
    outcome.capReached = error.cap;
  } finally {
    cancelDeadline();
  }
  return outcome;
};
