// The bot: start it (strategy and parameters with the registry's bounds, symbols, asset class,
// paper or live; checked with ZBotStartRequest), stop it, its status, signals and fills, and its
// runs with their drift reports (bot-runs.tsx). The
// status, signals and fills follow /ws/live (bot_status, signal, trade frames); GET /api/trades
// backfills the fills.
import { Badge, Button, Code, Group, Stack, Table, Text } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { ZBotStartRequest, ZBotTimeframe, type TAssetClass, type TBotStatus, type TLiveFrame } from '@trading-service/client';
import { queryClient, trpc } from '../api.ts';
import { DoneNotice, ErrorNotice } from '../feedback.tsx';
import { fieldErrorsOf, fieldText, type TFieldErrors } from '../forms.tsx';
import { ASSET_CLASSES, money, price, quantity, when } from '../format.ts';
import { useInstrumentOf } from '../instrument-steps.ts';
import { LIVE_STATE_TEXT, useLiveFrames } from '../live-feed.ts';
import { checkedParams, StrategyParamFields, StrategyPicker, strategiesFor, useStrategies } from '../strategy-fields.tsx';
import { BotRuns } from './bot-runs.tsx';
import { AssetClassField, ChoiceField, DataTable, Empty, Field, Hint, KeyValues, ModeBadge, Page, Panel, SideText, SwitchField } from './page-kit.tsx';

const TRADES_SIZE = 20;
/** Signals have no backfill route: the page keeps the newest it saw. */
const KEPT_SIGNALS = 50;

type TSignalFrame = Extract<TLiveFrame, { type: 'signal' }>;

const STATE_COLORS = { running: 'green', halted: 'red', stopped: 'gray' } as const;

const stateOf = (status: TBotStatus): keyof typeof STATE_COLORS => (status.is_halted ? 'halted' : status.is_running ? 'running' : 'stopped');

const StatusPanel = ({ status, stopButton }: { status: TBotStatus | undefined; stopButton: ReactNode }) => (
  <Panel
    title="Status"
    testId="bot-status"
    aside={
      status ? (
        <Group gap={6}>
          <Badge component="span" variant="light" color={STATE_COLORS[stateOf(status)]} data-testid="bot-state">
            {stateOf(status)}
          </Badge>
          <ModeBadge live={status.live_mode} testId="bot-mode" />
        </Group>
      ) : null
    }
  >
    {status ? (
      <Stack gap="sm">
        <KeyValues
          rows={[
            ['Strategy', status.strategy_name ?? '–'],
            ['Parameters', <Code className="pages-code">{JSON.stringify(status.strategy_params ?? {})}</Code>],
            ['Symbols', status.symbols.join(', ') || '–'],
            ['Asset class, bars', `${status.asset_class ?? '–'}, ${status.timeframe ?? '–'}`],
            ['Started', status.started_at ? when(status.started_at) : '–'],
            ['Stopped', status.stopped_at ? `${when(status.stopped_at)} by ${status.stopped_by ?? '?'}` : '–'],
          ]}
        />
        {status.halt_reason ? <p className="notice error">Halted: {status.halt_reason}</p> : null}
        <div className="pages-actions">{stopButton}</div>
      </Stack>
    ) : (
      <Empty>Loading…</Empty>
    )}
  </Panel>
);

const StartForm = ({ running }: { running: boolean }) => {
  const [assetClass, setAssetClass] = useState<TAssetClass>('crypto');
  const [strategyName, setStrategyName] = useState('');
  const [errors, setErrors] = useState<TFieldErrors>({});
  const strategies = useStrategies();
  const available = strategiesFor(strategies.data, assetClass);
  const strategy = available.find((item) => item.name === strategyName) ?? available[0];
  const start = useMutation(
    trpc.bot.start.mutationOptions({
      onSuccess: (status) => {
        queryClient.setQueryData(trpc.bot.status.queryKey(), status);
        void queryClient.invalidateQueries(trpc.bot.runs.pathFilter());
      },
    }),
  );

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const params = checkedParams(form, strategy);
    const symbols = fieldText(form, 'symbols')
      .split(',')
      .map((symbol) => symbol.trim())
      .filter(Boolean);
    const checked = ZBotStartRequest.safeParse({
      asset_class: assetClass,
      symbols,
      strategy_name: strategy?.name ?? '',
      ...(params.ok && params.params ? { strategy_params: params.params } : {}),
      live_mode: form.get('live_mode') === 'on',
      timeframe: fieldText(form, 'timeframe'),
    });
    setErrors({ ...(checked.success ? {} : fieldErrorsOf(checked.error.issues)), ...(params.ok ? {} : params.errors) });
    if (checked.success && params.ok) start.mutate(checked.data);
  };

  return (
    <Panel title="Start the bot" testId="bot-start">
      <form className="pages-form" onSubmit={submit} noValidate data-testid="bot-form">
        <div className="pages-fields">
          <AssetClassField value={assetClass} onChange={setAssetClass} id="bot-asset-class" />
          <Field name="symbols" label="Symbols" placeholder="BTC/USDT, ETH/USDT" errors={errors} />
          <StrategyPicker strategies={available} value={strategy?.name ?? ''} onChange={setStrategyName} />
          <ChoiceField name="timeframe" label="Bars" choices={ZBotTimeframe.options.map((option) => ({ value: option, label: option }))} defaultValue="1m" />
          {strategies.error ? (
            <div className="pages-wide">
              <ErrorNotice error={strategies.error} />
            </div>
          ) : null}
          <StrategyParamFields strategy={strategy} errors={errors} />
        </div>
        <SwitchField name="live_mode" label="Live account (every live gate must pass)" />
        <div className="pages-actions">
          <Button type="submit" disabled={running} loading={start.isPending}>
            {start.isPending ? 'Starting…' : 'Start bot'}
          </Button>
          {running ? <Hint>The bot runs: stop it to start it again with other settings.</Hint> : null}
        </div>
      </form>
      <ErrorNotice error={start.error} />
      <DoneNotice text={start.data ? `Bot started: ${start.data.strategy_name} on ${start.data.symbols.join(', ')} (${start.data.live_mode ? 'live' : 'paper'})` : undefined} />
    </Panel>
  );
};

export const Bot = () => {
  const status = useQuery(trpc.bot.status.queryOptions());
  const trades = useQuery(trpc.bot.trades.queryOptions({ page: 1, size: TRADES_SIZE }));
  const [signals, setSignals] = useState<TSignalFrame[]>([]);
  // Every price on this page names its quote currency and follows its instrument's tick, from the registry.
  const instrumentOf = useInstrumentOf();
  const currencyOf = (assetClass: TAssetClass, symbol: string) => instrumentOf(assetClass, symbol)?.currency ?? '';
  const stop = useMutation(
    trpc.bot.stop.mutationOptions({
      onSuccess: (next) => {
        queryClient.setQueryData(trpc.bot.status.queryKey(), next);
        void queryClient.invalidateQueries(trpc.bot.runs.pathFilter());
      },
    }),
  );
  const socket = useLiveFrames((frame) => {
    if (frame.type === 'signal') setSignals((current) => [frame, ...current].slice(0, KEPT_SIGNALS));
    else if (frame.type === 'trade') void queryClient.invalidateQueries(trpc.bot.trades.pathFilter());
    else if (frame.type === 'bot_status') {
      // The frame has the state; the settings come with the next read.
      queryClient.setQueryData(trpc.bot.status.queryKey(), (current: TBotStatus | undefined) => current && { ...current, is_running: frame.is_running, is_halted: frame.is_halted, halt_reason: frame.halt_reason });
      void queryClient.invalidateQueries(trpc.bot.status.pathFilter());
      // A start or an end is a run's news too.
      void queryClient.invalidateQueries(trpc.bot.runs.pathFilter());
    }
  });
  const live = status.data?.live_mode ?? false;

  const stopButton = (
    <Button variant="light" color="red" onClick={() => stop.mutate()} disabled={!status.data?.is_running} loading={stop.isPending}>
      Stop bot
    </Button>
  );

  return (
    <Page
      title="Bot"
      aside={
        <Text size="xs" c="dimmed" data-testid="live-state">
          bot socket: {LIVE_STATE_TEXT[socket]}
        </Text>
      }
    >
      <ErrorNotice error={status.error} />
      <ErrorNotice error={stop.error} />
      <DoneNotice text={stop.data ? `Bot stopped (${stop.data.live_mode ? 'live' : 'paper'})` : undefined} />
      <div className="pages-split">
        <StatusPanel status={status.data} stopButton={stopButton} />
        <StartForm running={status.data?.is_running ?? false} />
      </div>

      <Panel title="Signals" testId="bot-signals" aside={<Hint>Newest first, since this page opened.</Hint>}>
        {signals.length === 0 ? <Empty testId="no-signals">No signals since this page opened.</Empty> : null}
        <ul className="pages-list" data-testid="signals">
          {signals.map((signal) => (
            <li key={signal.event_id} data-testid="signal-row">
              <Text span size="xs" c="dimmed">
                {when(signal.ts)}
              </Text>{' '}
              <SideText side={signal.direction} /> {signal.symbol} ({Math.round(signal.confidence * 100)} %), stop {price(signal.stop_loss, currencyOf(signal.asset_class, signal.symbol), instrumentOf(signal.asset_class, signal.symbol))}, take profit{' '}
              {price(signal.take_profit, currencyOf(signal.asset_class, signal.symbol), instrumentOf(signal.asset_class, signal.symbol))} <ModeBadge live={live} />
            </li>
          ))}
        </ul>
      </Panel>

      <BotRuns />

      <Panel title="Fills of the bot" testId="bot-fills" aside={<Hint>Fills of the bot's account ({live ? 'live' : 'paper'}); asset classes {ASSET_CLASSES.join(', ')}.</Hint>}>
        <ErrorNotice error={trades.error} />
        {trades.data && trades.data.items.length === 0 ? <Empty testId="no-bot-trades">No fills yet.</Empty> : null}
        {trades.data && trades.data.items.length > 0 ? (
          <DataTable label="Fills of the bot" testId="bot-trades">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Time</Table.Th>
                <Table.Th>Symbol</Table.Th>
                <Table.Th>Side</Table.Th>
                <Table.Th className="pages-num">Amount</Table.Th>
                <Table.Th className="pages-num">Price</Table.Th>
                <Table.Th className="pages-num">Fee</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {trades.data.items.map((trade) => (
                <Table.Tr key={`${trade.client_order_id}-${trade.ts}`} data-testid="bot-trade-row">
                  <Table.Td className="pages-nowrap">{when(trade.ts)}</Table.Td>
                  <Table.Td>{trade.symbol}</Table.Td>
                  <Table.Td>
                    <SideText side={trade.side} />
                  </Table.Td>
                  <Table.Td className="pages-num">{quantity(trade.amount, instrumentOf(trade.asset_class, trade.symbol))}</Table.Td>
                  <Table.Td className="pages-num">{price(trade.price, currencyOf(trade.asset_class, trade.symbol), instrumentOf(trade.asset_class, trade.symbol))}</Table.Td>
                  <Table.Td className="pages-num">{money(trade.fee, currencyOf(trade.asset_class, trade.symbol))}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </DataTable>
        ) : null}
      </Panel>
    </Page>
  );
};
