// The overview: the paper account of each asset class (equity, cash, buying power, today's P&L
// against the kill switch's lines, open orders), the equity curve of one of them, the bot, the
// latest fills and the signals heard since the page opened.
import { Group, Paper, Table, Text, Title } from '@mantine/core';
import { useQueries, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { TAssetClass, TLiveFrame } from '@trading-service/client';
import { trpc } from '../api.ts';
import { TableScroll } from '../table-scroll.tsx';
import { AccountReadNotice, ErrorNotice } from '../feedback.tsx';
import { ASSET_CLASS_NAMES, ASSET_CLASSES, money, percent, percentDirection, pnlPercent, price, quantity, when } from '../format.ts';
import { useInstrumentOf } from '../instrument-steps.ts';
import { newestFirst } from '../newest-first.ts';
import { useLiveFrames } from '../live-feed.ts';
import { ModeBadge } from '../pickers.tsx';
import { EquityPanel } from './overview-equity.tsx';

const LATEST_FILLS = 5;
const KEPT_SIGNALS = 5;

/** Today's P&L as the account's metadata says it (fractions), and where it stands against the lines. */
const DayPnl = ({ metadata }: { metadata: Record<string, unknown> }) => {
  const pct = metadata.day_pnl_pct;
  if (pct === undefined || pct === null) return <dd data-testid="day-pnl">– (no fill yet today)</dd>;
  const value = Number(pct);
  const lock = Number(metadata.day_pnl_lock_pct ?? -0.05);
  const alert = Number(metadata.day_pnl_alert_pct ?? -0.04);
  const line = value <= lock ? 'at the lock line' : value <= alert ? 'past the alert line' : `alert at ${percent(alert)}, lock at ${percent(lock)}`;
  return (
    <dd data-testid="day-pnl" className={value <= alert ? `warning ${percentDirection(value)}` : percentDirection(value)}>
      {pnlPercent(value)} <span className="stats-note">({line})</span>
    </dd>
  );
};

const AccountCard = ({ assetClass, mode }: { assetClass: TAssetClass; mode: 'paper' | 'live' }) => {
  const account = useQuery(trpc.equity.account.queryOptions({ asset_class: assetClass, mode }, { retry: false }));
  const open = useQuery(trpc.equity.listOrders.queryOptions({ asset_class: assetClass, status: 'open', mode, page: 1, size: 1 }, { enabled: account.isSuccess }));
  return (
    <Paper component="article" withBorder p="md" className="panel" data-testid={mode === 'paper' ? `account-${assetClass}` : `account-${assetClass}-live`}>
      <Group gap={8} mb="xs" wrap="nowrap">
        <Title order={2} size="h4">
          {ASSET_CLASS_NAMES[assetClass]}
        </Title>
        <ModeBadge mode={mode} />
      </Group>
      {account.isPending ? (
        <Text size="sm" c="dimmed">
          Loading…
        </Text>
      ) : null}
      <AccountReadNotice error={account.error} mode={mode} />
      {account.data ? (
        <dl className="stats">
          <dt className="stats-hero-label">Equity</dt>
          <dd className="stats-hero" data-testid="equity">
            {money(account.data.equity, account.data.currency)}
          </dd>
          <dt>Cash</dt>
          <dd data-testid="cash">{money(account.data.cash, account.data.currency)}</dd>
          <dt>Buying power</dt>
          <dd data-testid="buying-power">{money(account.data.buying_power, account.data.currency)}</dd>
          <dt>Today</dt>
          <DayPnl metadata={account.data.metadata} />
          <dt>Open orders</dt>
          <dd data-testid="open-orders">{open.data ? open.data.total : '…'}</dd>
        </dl>
      ) : null}
    </Paper>
  );
};

const BotCard = () => {
  const bot = useQuery(trpc.bot.status.queryOptions());
  const data = bot.data;
  return (
    <Paper component="article" withBorder p="md" className="panel" data-testid="overview-bot">
      <Title order={2} size="h4" mb="xs">
        Bot
      </Title>
      <ErrorNotice error={bot.error} />
      {data ? (
        <Text size="sm" data-testid="overview-bot-state">
          {data.is_running
            ? `running ${data.strategy_name ?? ''} on ${data.symbols.join(', ')} (${data.asset_class ? ASSET_CLASS_NAMES[data.asset_class] : ''}, ${data.live_mode ? 'live' : 'paper'}) since ${when(data.started_at ?? data.ts)}`
            : data.is_halted
              ? `halted: ${data.halt_reason ?? 'by the kill switch'}`
              : 'stopped'}
        </Text>
      ) : null}
    </Paper>
  );
};

/**
 * The newest filled paper orders of every asset class, newest first across the classes: each
 * class's newest few, merged by their last update (the fill), as the blotter shows them.
 */
const LatestFills = () => {
  const instrumentOf = useInstrumentOf();
  const filled = useQueries({
    queries: ASSET_CLASSES.map((assetClass) => trpc.equity.listOrders.queryOptions({ asset_class: assetClass, status: 'filled', mode: 'paper', page: 1, size: LATEST_FILLS }, { retry: false })),
  });
  const newest = newestFirst(
    filled.map((list) => list.data?.items ?? []),
    LATEST_FILLS,
  );
  // A row saying so when there is none: a table of headers alone leaves a screen reader nothing to
  // read them against (axe's th-has-data-cells). Only once every list has answered (a refused one too), not while loading.
  const loaded = filled.every((list) => !list.isPending);
  return (
    <>
      {loaded && newest.length === 0 ? (
        <Table.Tr data-testid="no-fills">
          <Table.Td colSpan={6} c="dimmed">
            No fills yet.
          </Table.Td>
        </Table.Tr>
      ) : null}
      {newest.map((order) => {
        const instrument = instrumentOf(order.asset_class, order.symbol);
        return (
          <Table.Tr key={`${order.asset_class}:${order.broker_order_id}`} data-testid="latest-fill" data-updated-at={order.updated_at}>
            <Table.Td className="nowrap time-cell">{when(order.updated_at)}</Table.Td>
            <Table.Td fw={500}>{order.symbol}</Table.Td>
            <Table.Td className={`side-${order.side}`}>{order.side}</Table.Td>
            <Table.Td className="num">{quantity(order.filled_qty, instrument)}</Table.Td>
            <Table.Td className="num">{price(order.avg_fill_price, order.currency, instrument)}</Table.Td>
            <Table.Td>paper</Table.Td>
          </Table.Tr>
        );
      })}
    </>
  );
};

const SignalsCard = () => {
  const [signals, setSignals] = useState<Extract<TLiveFrame, { type: 'signal' }>[]>([]);
  useLiveFrames((frame) => {
    if (frame.type === 'signal') setSignals((kept) => [frame, ...kept].slice(0, KEPT_SIGNALS));
  });
  return (
    <Paper component="article" withBorder p="md" className="panel" data-testid="overview-signals">
      <Title order={2} size="h4" mb="xs">
        Signals
      </Title>
      {signals.length === 0 ? (
        <Text size="sm" c="dimmed">
          None since this page opened (the bot's signals arrive here live).
        </Text>
      ) : null}
      <ul className="plain-list">
        {signals.map((signal) => (
          <li key={signal.event_id}>
            {when(signal.ts)} {signal.direction} {signal.symbol} ({Math.round(signal.confidence * 100)} %)
          </li>
        ))}
      </ul>
    </Paper>
  );
};

export const Overview = () => {
  // A live account shows beside the paper one once the user trades the asset class live.
  const live = useQuery(trpc.live.status.queryOptions());
  return (
    <section>
      <Title order={1} mb="md">
        Overview
      </Title>
      <div className="panel-grid">
        {ASSET_CLASSES.map((assetClass) => (
          <AccountCard key={assetClass} assetClass={assetClass} mode="paper" />
        ))}
        {ASSET_CLASSES.filter((assetClass) => live.data?.[assetClass].live_enabled).map((assetClass) => (
          <AccountCard key={`${assetClass}-live`} assetClass={assetClass} mode="live" />
        ))}
      </div>
      <div className="overview-equity">
        <EquityPanel />
      </div>
      <div className="overview-lower">
        <Paper withBorder className="panel table-panel">
          <Title order={2} size="h4" px="md" pt="md" pb="xs">
            Latest fills
          </Title>
          <TableScroll label="Latest fills">
            <Table data-testid="latest-fills" highlightOnHover>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Time</Table.Th>
                  <Table.Th>Symbol</Table.Th>
                  <Table.Th>Side</Table.Th>
                  <Table.Th className="num">Quantity</Table.Th>
                  <Table.Th className="num">Price</Table.Th>
                  <Table.Th>Mode</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                <LatestFills />
              </Table.Tbody>
            </Table>
          </TableScroll>
        </Paper>
        <div className="overview-side">
          <BotCard />
          <SignalsCard />
        </div>
      </div>
    </section>
  );
};
