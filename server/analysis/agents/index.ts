// The analysis agents and the version of their prompts, which every report records.
export { technicalAgent, readTechnicals, MIN_TECHNICAL_BARS } from './technical.ts';
export type { TechnicalReading } from './technical.ts';
export { intelAgent, MAX_INTEL_ITEMS } from './intel.ts';
export type { IntelContext, IntelItem, IntelSource } from './intel.ts';
export { riskAgent, readRisk } from './risk.ts';
export type { RiskContext, TRiskFlag } from './risk.ts';
export { bullAgent, bearAgent } from './debate.ts';
export type { DebateContext, DebateTurn } from './debate.ts';
export { decisionAgent } from './decision.ts';
export type { DecisionContext } from './decision.ts';
export * from './schemas.ts';

/** Bumped whenever a prompt's wording or a schema changes, so a report says which prompts it ran on. */
export const PROMPT_VERSION = '2026-11-23.1';
