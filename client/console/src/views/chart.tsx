// The chart: daily candles of one instrument (GET /api/market-data/ohlcv), the user's own fills
// in it as markers (GET /api/equity/orders, filled), and the last price from /ws/live ticks
// moving the last candle. It opens on the last six months (OPEN_DAYS); scroll back for the rest.
import { Paper, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useCallback, useMemo, useState } from 'react';
import { errorCodeOf, type TAssetClass, type TInstrument, type TOrderResponse, type TTickFrame } from '@trading-service/client';
import { trpc } from '../api.ts';
import { OPEN_DAYS } from '../charts/chart-view.ts';
import { PriceChart, type TCandle, type TFillMarker } from '../charts/price-chart.tsx';
import { ErrorNotice } from '../feedback.tsx';
import { price, quantity, when } from '../format.ts';
import { LIVE_STATE_TEXT, useLiveFrames } from '../live-feed.ts';
import { AssetClassPicker } from '../pickers.tsx';
import { SymbolPicker } from '../symbol-picker.tsx';

/** Fills shown as markers: the newest filled orders of the asset class (the list's largest page). */
const FILLS_PAGE = 100;

const modeOf = (order: TOrderResponse) => (order.metadata.live === true ? 'live' : 'paper');

const fillOf = (order: TOrderResponse, instrument: TInstrument | undefined): TFillMarker | undefined =>
  order.avg_fill_price === null
    ? undefined
    : {
        date: order.updated_at.slice(0, 10),
        side: order.side,
        price: order.avg_fill_price,
        text: `${order.side} ${quantity(order.filled_qty, instrument)} @ ${price(order.avg_fill_price, order.currency, instrument)} (${modeOf(order)})`,
      };

/** The bars with a tick folded into the last one (or starting a new day's candle). */
export const withTick = (bars: readonly TCandle[], tick: TTickFrame | undefined): readonly TCandle[] => {
  const lastBar = bars.at(-1);
  if (!tick || !lastBar) return bars;
  const day = tick.ts.slice(0, 10);
  if (day < lastBar.date) return bars;
  if (day === lastBar.date) return [...bars.slice(0, -1), { ...lastBar, high: Math.max(lastBar.high, tick.last), low: Math.min(lastBar.low, tick.last), close: tick.last }];
  return [...bars, { date: day, open: lastBar.close, high: Math.max(lastBar.close, tick.last), low: Math.min(lastBar.close, tick.last), close: tick.last }];
};

export const Chart = () => {
  const [assetClass, setAssetClass] = useState<TAssetClass>('crypto');
  const [symbol, setSymbol] = useState('');
  const [tick, setTick] = useState<TTickFrame>();
  const [instrument, setInstrument] = useState<TInstrument>();
  const chooseSymbol = useCallback((next: string, chosen: TInstrument | undefined) => (setSymbol(next), setInstrument(chosen), setTick(undefined)), []);

  const ohlcv = useQuery(trpc.marketData.ohlcv.queryOptions({ asset_class: assetClass, symbol }, { enabled: symbol !== '', retry: false }));
  const orders = useQuery(trpc.equity.listOrders.queryOptions({ asset_class: assetClass, status: 'filled', page: 1, size: FILLS_PAGE }, { enabled: symbol !== '', retry: false }));
  const socket = useLiveFrames((frame) => {
    if (frame.type === 'tick' && frame.asset_class === assetClass && frame.symbol === symbol) setTick(frame);
  });

  const candles = useMemo(() => withTick(ohlcv.data?.bars ?? [], tick), [ohlcv.data, tick]);
  const fills = useMemo(() => (orders.data?.items ?? []).filter((order) => order.symbol === symbol).flatMap((order) => fillOf(order, instrument) ?? []), [orders.data, symbol, instrument]);
  const currency = ohlcv.data?.currency ?? '';
  const lastClose = candles.at(-1)?.close;

  return (
    <section>
      <Title order={1} mb="md">
        Chart
      </Title>
      <div className="filters">
        <AssetClassPicker value={assetClass} onChange={(next) => (setAssetClass(next), setSymbol(''), setInstrument(undefined), setTick(undefined))} />
        <SymbolPicker assetClass={assetClass} value={symbol} onChange={chooseSymbol} />
        <Text component="span" size="xs" className={`feed feed-${socket}`} data-testid="live-state">
          ticks: {LIVE_STATE_TEXT[socket]}
        </Text>
      </div>
      <ErrorNotice error={ohlcv.error} />
      {/* Without a broker the order list is refused: the candles still show, without fills. */}
      {orders.error && errorCodeOf(orders.error) !== 'BROKER_NOT_CONFIGURED' ? <ErrorNotice error={orders.error} /> : null}
      <Paper withBorder p="md" className="panel">
        <Text size="sm" mb="xs" data-testid="chart-summary">
          {symbol} daily, {candles.length} bars{currency ? `, prices in ${currency}` : ''}; last{' '}
          <strong className="num" data-testid="chart-last">
            {lastClose === undefined ? '–' : price(lastClose, currency, instrument)}
          </strong>
          {tick ? ` (tick ${when(tick.ts)})` : ' (last daily close)'}; your fills: <span data-testid="chart-fills">{fills.length}</span> (paper unless marked live)
        </Text>
        {ohlcv.data && ohlcv.data.bars.length === 0 ? (
          <Text size="sm" c="dimmed" data-testid="no-bars">
            No daily bars loaded for {symbol}.
          </Text>
        ) : null}
        <PriceChart candles={candles} fills={fills} last={tick?.last} openDays={OPEN_DAYS} />
      </Paper>
    </section>
  );
};
