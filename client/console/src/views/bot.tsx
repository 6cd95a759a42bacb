// The bot: start it (strategy and parameters with the registry's bounds, symbols, asset class,
// paper or live; checked with ZBotStartRequest), stop it, its status, signals and fills. The
// status, signals and fills follow /ws/live (bot_status, signal, trade frames); GET /api/trades
// backfills the fills.
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ZBotStartRequest, ZBotTimeframe, type TAssetClass, type TBotStatus, type TLiveFrame } from '@trading-service/client';
import { queryClient, trpc } from '../api.ts';
import { DoneNotice, ErrorNotice } from '../feedback.tsx';
import { fieldErrorsOf, fieldText, TextField, type TFieldErrors } from '../forms.tsx';
import { ASSET_CLASSES, money, price, quantity, when } from '../format.ts';
import { useInstrumentOf } from '../instrument-steps.ts';
import { LIVE_STATE_TEXT, useLiveFrames } from '../live-feed.ts';
import { AssetClassPicker } from '../pickers.tsx';
import { checkedParams, StrategyParamFields, StrategyPicker, strategiesFor, useStrategies } from '../strategy-fields.tsx';

const TRADES_SIZE = 20;
/** Signals have no backfill route: the page keeps the newest it saw. */
const KEPT_SIGNALS = 50;

type TSignalFrame = Extract<TLiveFrame, { type: 'signal' }>;

const ModeBadge = ({ live }: { live: boolean }) => (
  <span className={`badge ${live ? 'live' : 'paper'}`} data-testid="bot-mode">
    {live ? 'live' : 'paper'}
  </span>
);


const StatusCard = ({ status }: { status: TBotStatus }) => (
  <article className="card" data-testid="bot-status">
    <h2>
      Status: <span data-testid="bot-state">{status.is_halted ? 'halted' : status.is_running ? 'running' : 'stopped'}</span> <ModeBadge live={status.live_mode} />
    </h2>
    <dl>
      <dt>Strategy</dt>
      <dd>{status.strategy_name ?? '–'}</dd>
      <dt>Parameters</dt>
      <dd>
        <code>{JSON.stringify(status.strategy_params ?? {})}</code>
      </dd>
      <dt>Symbols</dt>
      <dd>{status.symbols.join(', ') || '–'}</dd>
      <dt>Asset class, bars</dt>
      <dd>
        {status.asset_class ?? '–'}, {status.timeframe ?? '–'}
      </dd>
      <dt>Started</dt>
      <dd>{status.started_at ? when(status.started_at) : '–'}</dd>
      <dt>Stopped</dt>
      <dd>{status.stopped_at ? `${when(status.stopped_at)} by ${status.stopped_by ?? '?'}` : '–'}</dd>
    </dl>
    {status.halt_reason ? <p className="notice error">Halted: {status.halt_reason}</p> : null}
  </article>
);

const StartForm = ({ running }: { running: boolean }) => {
  const [assetClass, setAssetClass] = useState<TAssetClass>('crypto');
  const [strategyName, setStrategyName] = useState('');
  const [errors, setErrors] = useState<TFieldErrors>({});
  const strategies = useStrategies();
  const available = strategiesFor(strategies.data, assetClass);
  const strategy = available.find((item) => item.name === strategyName) ?? available[0];
  const start = useMutation(trpc.bot.start.mutationOptions({ onSuccess: (status) => queryClient.setQueryData(trpc.bot.status.queryKey(), status) }));

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
    <>
      <form onSubmit={submit} noValidate data-testid="bot-form">
        <AssetClassPicker value={assetClass} onChange={setAssetClass} id="bot-asset-class" />
        <TextField name="symbols" label="Symbols" placeholder="BTC/USDT, ETH/USDT" errors={errors} />
        <ErrorNotice error={strategies.error} />
        <StrategyPicker strategies={available} value={strategy?.name ?? ''} onChange={setStrategyName} />
        <StrategyParamFields strategy={strategy} errors={errors} />
        <label>
          Bars{' '}
          <select name="timeframe" defaultValue="1m">
            {ZBotTimeframe.options.map((option) => (
              <option key={option} value={option}>
                {option}
              </option>
            ))}
          </select>
        </label>
        <label>
          Live account (every live gate must pass) <input type="checkbox" name="live_mode" />
        </label>
        <button type="submit" disabled={start.isPending || running}>
          {start.isPending ? 'Starting…' : 'Start bot'}
        </button>
      </form>
      <ErrorNotice error={start.error} />
      <DoneNotice text={start.data ? `Bot started: ${start.data.strategy_name} on ${start.data.symbols.join(', ')} (${start.data.live_mode ? 'live' : 'paper'})` : undefined} />
    </>
  );
};

export const Bot = () => {
  const status = useQuery(trpc.bot.status.queryOptions());
  const trades = useQuery(trpc.bot.trades.queryOptions({ page: 1, size: TRADES_SIZE }));
  const [signals, setSignals] = useState<TSignalFrame[]>([]);
  // Every price on this page names its quote currency and follows its instrument's tick, from the registry.
  const instrumentOf = useInstrumentOf();
  const currencyOf = (assetClass: TAssetClass, symbol: string) => instrumentOf(assetClass, symbol)?.currency ?? '';
  const stop = useMutation(trpc.bot.stop.mutationOptions({ onSuccess: (next) => queryClient.setQueryData(trpc.bot.status.queryKey(), next) }));
  const socket = useLiveFrames((frame) => {
    if (frame.type === 'signal') setSignals((current) => [frame, ...current].slice(0, KEPT_SIGNALS));
    else if (frame.type === 'trade') void queryClient.invalidateQueries(trpc.bot.trades.pathFilter());
    else if (frame.type === 'bot_status') {
      // The frame has the state; the settings come with the next read.
      queryClient.setQueryData(trpc.bot.status.queryKey(), (current: TBotStatus | undefined) => current && { ...current, is_running: frame.is_running, is_halted: frame.is_halted, halt_reason: frame.halt_reason });
      void queryClient.invalidateQueries(trpc.bot.status.pathFilter());
    }
  });
  const live = status.data?.live_mode ?? false;

  return (
    <section>
      <h1>Bot</h1>
      <p className="hint" data-testid="live-state">
        bot socket: {LIVE_STATE_TEXT[socket]}
      </p>
      <ErrorNotice error={status.error} />
      {status.data ? <StatusCard status={status.data} /> : null}
      <button type="button" onClick={() => stop.mutate()} disabled={stop.isPending || !status.data?.is_running}>
        Stop bot
      </button>
      <ErrorNotice error={stop.error} />
      <DoneNotice text={stop.data ? `Bot stopped (${stop.data.live_mode ? 'live' : 'paper'})` : undefined} />
      <StartForm running={status.data?.is_running ?? false} />

      <h2>Signals</h2>
      {signals.length === 0 ? <p data-testid="no-signals">No signals since this page opened.</p> : null}
      <ul data-testid="signals">
        {signals.map((signal) => (
          <li key={signal.event_id} data-testid="signal-row">
            {when(signal.ts)} {signal.direction} {signal.symbol} ({Math.round(signal.confidence * 100)} %), stop {price(signal.stop_loss, currencyOf(signal.asset_class, signal.symbol), instrumentOf(signal.asset_class, signal.symbol))}, take profit{' '}
            {price(signal.take_profit, currencyOf(signal.asset_class, signal.symbol), instrumentOf(signal.asset_class, signal.symbol))} <ModeBadge live={live} />
          </li>
        ))}
      </ul>

      <h2>Fills of the bot</h2>
      <ErrorNotice error={trades.error} />
      {trades.data && trades.data.items.length === 0 ? <p data-testid="no-bot-trades">No fills yet.</p> : null}
      {trades.data && trades.data.items.length > 0 ? (
        <table data-testid="bot-trades">
          <thead>
            <tr>
              <th>Time</th>
              <th>Symbol</th>
              <th>Side</th>
              <th>Amount</th>
              <th>Price</th>
              <th>Fee</th>
            </tr>
          </thead>
          <tbody>
            {trades.data.items.map((trade) => (
              <tr key={`${trade.client_order_id}-${trade.ts}`} data-testid="bot-trade-row">
                <td>{when(trade.ts)}</td>
                <td>{trade.symbol}</td>
                <td>{trade.side}</td>
                <td>{quantity(trade.amount, instrumentOf(trade.asset_class, trade.symbol))}</td>
                <td>{price(trade.price, currencyOf(trade.asset_class, trade.symbol), instrumentOf(trade.asset_class, trade.symbol))}</td>
                <td>{money(trade.fee, currencyOf(trade.asset_class, trade.symbol))}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <p className="hint">Asset classes: {ASSET_CLASSES.join(', ')}; fills are of the bot's account ({live ? 'live' : 'paper'}).</p>
    </section>
  );
};
