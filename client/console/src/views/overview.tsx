// The overview: the paper account of each asset class (equity, cash, buying power, today's P&L
// against the kill switch's lines, open orders), the bot, the latest fills and the signals heard
// since the page opened.
import { useQueries, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { errorCodeOf, type TAssetClass, type TLiveFrame } from '@trading-service/client';
import { trpc } from '../api.ts';
import { ErrorNotice } from '../feedback.tsx';
import { ASSET_CLASS_NAMES, ASSET_CLASSES, money, percent, percentDirection, pnlPercent, price, quantity, when } from '../format.ts';
import { useInstrumentOf } from '../instrument-steps.ts';
import { newestFirst } from '../newest-first.ts';
import { useLiveFrames } from '../live-feed.ts';
import { PaperBadge } from '../pickers.tsx';

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
      {pnlPercent(value)} ({line})
    </dd>
  );
};

const AccountCard = ({ assetClass, mode }: { assetClass: TAssetClass; mode: 'paper' | 'live' }) => {
  const account = useQuery(trpc.equity.account.queryOptions({ asset_class: assetClass, mode }, { retry: false }));
  const open = useQuery(trpc.equity.listOrders.queryOptions({ asset_class: assetClass, status: 'open', mode, page: 1, size: 1 }, { enabled: account.isSuccess }));
  const notConfigured = errorCodeOf(account.error) === 'BROKER_NOT_CONFIGURED';
  return (
    <article className="card" data-testid={mode === 'paper' ? `account-${assetClass}` : `account-${assetClass}-live`}>
      <h2>
        {ASSET_CLASS_NAMES[assetClass]}{' '}
        {mode === 'paper' ? (
          <PaperBadge />
        ) : (
          <span className="badge live" data-testid="mode">
            live
          </span>
        )}
      </h2>
      {account.isPending ? <p>Loading…</p> : null}
      {notConfigured ? <p>No {mode} key registered for this asset class: add one under Exchange keys.</p> : account.error ? <ErrorNotice error={account.error} /> : null}
      {account.data ? (
        <dl>
          <dt>Equity</dt>
          <dd data-testid="equity">{money(account.data.equity, account.data.currency)}</dd>
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
    </article>
  );
};

const BotCard = () => {
  const bot = useQuery(trpc.bot.status.queryOptions());
  const data = bot.data;
  return (
    <article className="card" data-testid="overview-bot">
      <h2>Bot</h2>
      <ErrorNotice error={bot.error} />
      {data ? (
        <p data-testid="overview-bot-state">
          {data.is_running
            ? `running ${data.strategy_name ?? ''} on ${data.symbols.join(', ')} (${data.asset_class ? ASSET_CLASS_NAMES[data.asset_class] : ''}, ${data.live_mode ? 'live' : 'paper'}) since ${when(data.started_at ?? data.ts)}`
            : data.is_halted
              ? `halted: ${data.halt_reason ?? 'by the kill switch'}`
              : 'stopped'}
        </p>
      ) : null}
    </article>
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
        <tr data-testid="no-fills">
          <td colSpan={6}>No fills yet.</td>
        </tr>
      ) : null}
      {newest.map((order) => {
        const instrument = instrumentOf(order.asset_class, order.symbol);
        return (
          <tr key={`${order.asset_class}:${order.broker_order_id}`} data-testid="latest-fill" data-updated-at={order.updated_at}>
            <td>{when(order.updated_at)}</td>
            <td>{order.symbol}</td>
            <td>{order.side}</td>
            <td>{quantity(order.filled_qty, instrument)}</td>
            <td>{price(order.avg_fill_price, order.currency, instrument)}</td>
            <td>paper</td>
          </tr>
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
    <article className="card" data-testid="overview-signals">
      <h2>Signals</h2>
      {signals.length === 0 ? <p className="hint">None since this page opened (the bot's signals arrive here live).</p> : null}
      <ul>
        {signals.map((signal) => (
          <li key={signal.event_id}>
            {when(signal.ts)} {signal.direction} {signal.symbol} ({Math.round(signal.confidence * 100)} %)
          </li>
        ))}
      </ul>
    </article>
  );
};

export const Overview = () => {
  // A live account shows beside the paper one once the user trades the asset class live.
  const live = useQuery(trpc.live.status.queryOptions());
  return (
    <section>
      <h1>Overview</h1>
      <div className="cards">
        {ASSET_CLASSES.map((assetClass) => (
          <AccountCard key={assetClass} assetClass={assetClass} mode="paper" />
        ))}
        {ASSET_CLASSES.filter((assetClass) => live.data?.[assetClass].live_enabled).map((assetClass) => (
          <AccountCard key={`${assetClass}-live`} assetClass={assetClass} mode="live" />
        ))}
        <BotCard />
        <SignalsCard />
      </div>
      <h2>Latest fills</h2>
      <table data-testid="latest-fills">
        <thead>
          <tr>
            <th>Time</th>
            <th>Symbol</th>
            <th>Side</th>
            <th>Quantity</th>
            <th>Price</th>
            <th>Mode</th>
          </tr>
        </thead>
        <tbody>
          <LatestFills />
        </tbody>
      </table>
    </section>
  );
};
