// The report's readable summary (dashboard_md): the decision and its levels, each agent's view,
// the risks, the data it rested on, and who wrote it at what cost.
import type { TAnalysisMode, TReportStatus } from '../../contracts/analysis.ts';
import type { RunOutcome } from './orchestrator.ts';

export interface DashboardFacts {
  symbol: string;
  assetClass: string;
  mode: TAnalysisMode;
  status: TReportStatus;
  outcome: RunOutcome;
  provider: string;
  model: string;
  promptVersion: string;
  dataFrom: string | null;
  dataTo: string | null;
  bars: number;
  asOf: string | null;
  errorMessage: string | null;
}

const level = (value: number | null | undefined, currency: string) => (value == null ? 'n/a' : `${value} ${currency}`);
const percent = (value: number) => `${Math.round(value * 100)} %`;

export const dashboardOf = (facts: DashboardFacts): string => {
  const { outcome } = facts;
  const lines: string[] = [`# ${facts.symbol} (${facts.assetClass}): ${facts.mode} analysis`, ''];
  const decision = outcome.decision;
  if (decision) {
    lines.push(
      `**Decision: ${decision.signal.toUpperCase()}** (confidence ${percent(decision.confidence)}, score ${decision.score.toFixed(2)})`,
      '',
      '| level | price |',
      '|---|---|',
      `| ideal buy | ${level(decision.ideal_buy, decision.currency)} |`,
      `| secondary buy | ${level(decision.secondary_buy, decision.currency)} |`,
      `| stop loss | ${level(decision.stop_loss, decision.currency)} |`,
      `| take profit | ${level(decision.take_profit, decision.currency)} |`,
      '',
      decision.reasoning,
      '',
    );
  } else {
    lines.push(`**No decision** (status ${facts.status}).`, '');
  }
  if (facts.errorMessage) lines.push(`> ${facts.errorMessage}`, '');
  lines.push('## What each agent saw', '');
  if (outcome.technical) lines.push(`- **Technical** (${outcome.technical.signal}, ${percent(outcome.technical.confidence)}): ${outcome.technical.reasoning}`);
  if (outcome.intel) lines.push(`- **Intel** (${outcome.intel.signal}, ${percent(outcome.intel.confidence)}): ${outcome.intel.reasoning}`);
  if (outcome.risk) lines.push(`- **Risk** (${outcome.risk.risk_level}${outcome.risk.veto_buy ? ', buy vetoed' : ''}): ${outcome.risk.reasoning}`);
  for (const said of outcome.debate) lines.push(`- **${said.stance === 'bull' ? 'Bull' : 'Bear'}** (${percent(said.confidence)}): ${said.argument}`);
  for (const failure of outcome.failures) lines.push(`- **${failure.agent}** failed: ${failure.reason}`);
  lines.push('');
  if (outcome.risk && outcome.risk.flags.length > 0) lines.push('## Risks', '', ...outcome.risk.flags.map((flag) => `- ${flag}`), '');
  lines.push(
    '## What it rests on',
    '',
    `- Daily bars: ${facts.bars}${facts.dataFrom ? `, ${facts.dataFrom} to ${facts.dataTo}` : ''}${facts.asOf ? ` (point in time: as of ${facts.asOf})` : ''}`,
    `- Provider: ${facts.provider}, model ${facts.model}, prompt version ${facts.promptVersion}`,
    `- Tokens: ${outcome.tokensInput} in, ${outcome.tokensOutput} out; cost ${outcome.costUsd.toFixed(6)} USD`,
    '',
  );
  return lines.join('\n');
};
