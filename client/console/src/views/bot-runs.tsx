// The bot's runs and a run's drift report (GET /api/bot/runs, GET /api/bot/runs/{id}/drift): each
// start with its settings and how it ended; for one run, its bars replayed through the backtest
// engine beside what the bot did, each decision's fills side by side, and the return gap taken
// apart by cause. Shown once the bot has run.
import { Button, Group, NativeSelect, Table, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { TBotDrift, TBotRun } from '@trading-service/client';
import { trpc } from '../api.ts';
import { ErrorNotice } from '../feedback.tsx';
import { percent, when } from '../format.ts';
import { DataTable, Empty, Hint, KeyValues, ModeBadge, Panel, SideText } from './page-kit.tsx';

const RUNS_SIZE = 20;

/** The report's figures are in percent (points); the console's formatter takes fractions. */
const points = (value: number | null) => (value === null ? '–' : percent(value / 100));

const CAUSE_TEXT: Record<TBotDrift['rows'][number]['cause'], string> = {
  match: 'as replayed',
  price: 'price differs',
  fee: 'fee differs',
  missing_live: 'the bot did not trade',
  extra_live: 'the replay did not trade',
  unfilled: 'the bot’s order did not fill',
};

const endOf = (run: TBotRun) => (run.is_running ? 'running' : `${run.stopped_at ? when(run.stopped_at) : '–'}${run.stopped_by ? ` (${run.stopped_by})` : ''}`);

const DriftReport = ({ run }: { run: TBotRun }) => {
  const [symbol, setSymbol] = useState(run.symbols[0]!);
  const drift = useQuery(trpc.bot.drift.queryOptions({ run_id: run.run_id, symbol }));
  const report = drift.data;
  return (
    <Panel title={`Drift of run ${run.run_id}`} testId="bot-drift" wide aside={<Hint>The run’s bars replayed with {run.strategy_name}; fills side by side.</Hint>}>
      {run.symbols.length > 1 ? <NativeSelect label="Symbol" value={symbol} data={run.symbols} onChange={(event) => setSymbol(event.currentTarget.value)} className="field-half" /> : null}
      <ErrorNotice error={drift.error} />
      {report ? (
        <>
          <KeyValues
            rows={[
              ['Backtest return', points(report.backtest_return_pct)],
              ['Bot return', points(report.live_return_pct)],
              ['Gap', points(report.return_gap_pct), 'drift-gap'],
              ['of it: prices', points(report.gap_by_cause.price_pct)],
              ['of it: fees', points(report.gap_by_cause.fee_pct)],
              ['of it: trades made by one side only', points(report.gap_by_cause.trades_pct)],
              ['Bars replayed (warm-up)', `${report.bars} (${report.warmup_bars})`],
              ['Decisions differing', `${report.differing} of ${report.rows.length}`, 'drift-differing'],
            ]}
          />
          {report.rows.length === 0 ? <Empty testId="no-drift-rows">Neither the bot nor the replay traded on these bars.</Empty> : null}
          {report.rows.length > 0 ? (
            <DataTable label="Decisions, replayed and live" testId="drift-rows">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Decided at</Table.Th>
                  <Table.Th>Side</Table.Th>
                  <Table.Th className="pages-num">Backtest price</Table.Th>
                  <Table.Th className="pages-num">Bot price</Table.Th>
                  <Table.Th className="pages-num">Price gap</Table.Th>
                  <Table.Th className="pages-num">Effect</Table.Th>
                  <Table.Th>Cause</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {report.rows.map((row) => (
                  <Table.Tr key={`${row.bar_start}-${row.side}`} data-testid="drift-row" data-cause={row.cause}>
                    <Table.Td className="pages-nowrap">{when(row.bar_start)}</Table.Td>
                    <Table.Td>
                      <SideText side={row.side} />
                    </Table.Td>
                    <Table.Td className="pages-num">{row.backtest ? row.backtest.price : '–'}</Table.Td>
                    <Table.Td className="pages-num">{row.live ? row.live.price : '–'}</Table.Td>
                    <Table.Td className="pages-num">{points(row.price_gap_pct)}</Table.Td>
                    <Table.Td className="pages-num">{points(row.effect_pct)}</Table.Td>
                    <Table.Td>{CAUSE_TEXT[row.cause]}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </DataTable>
          ) : null}
        </>
      ) : null}
    </Panel>
  );
};

export const BotRuns = () => {
  const runs = useQuery(trpc.bot.runs.queryOptions({ page: 1, size: RUNS_SIZE }));
  const [chosen, setChosen] = useState<string>();
  const items = runs.data?.items ?? [];
  // Nothing to show before the bot's first run.
  if (items.length === 0) return <ErrorNotice error={runs.error} />;
  const shown = items.find((run) => run.run_id === chosen);
  return (
    <>
      <Panel title="Runs" testId="bot-runs" aside={<Hint>Each start, newest first; a run’s drift replays its bars.</Hint>}>
        <DataTable label="Runs of the bot" testId="bot-run-rows">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Started</Table.Th>
              <Table.Th>Ended</Table.Th>
              <Table.Th>Strategy</Table.Th>
              <Table.Th>Symbols</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {items.map((run) => (
              <Table.Tr key={run.run_id} data-testid="bot-run-row">
                <Table.Td className="pages-nowrap">{when(run.started_at)}</Table.Td>
                <Table.Td className="pages-nowrap">{endOf(run)}</Table.Td>
                <Table.Td>
                  <Group gap={6}>
                    <Text span size="sm">
                      {run.strategy_name} ({run.timeframe})
                    </Text>
                    <ModeBadge live={run.live_mode} />
                  </Group>
                </Table.Td>
                <Table.Td>{run.symbols.join(', ')}</Table.Td>
                <Table.Td>
                  <Button size="xs" variant="light" onClick={() => setChosen(run.run_id)} data-testid="bot-run-drift">
                    Drift
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </DataTable>
      </Panel>
      {shown ? <DriftReport key={shown.run_id} run={shown} /> : null}
    </>
  );
};
