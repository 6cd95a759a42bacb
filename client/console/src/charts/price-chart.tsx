// Daily candles with fill markers and an optional live last price, on lightweight-charts'
// canvas (no inline script or style sheet: its sizes are set through the CSSOM, which the CSP
// allows). The container carries what it shows as data attributes, so tests read the DOM.
// The view is set when a history arrives (chart-view.ts: the last six months, or all of it), not
// on every tick or new fill, so a user's own zoom and scroll stay.
import { CandlestickSeries, createChart, createSeriesMarkers, LineStyle, type AutoscaleInfo, type CandlestickData, type IChartApi, type IPriceLine, type ISeriesApi, type ISeriesMarkersPluginApi, type SeriesMarker, type Time } from 'lightweight-charts';
import { useCallback, useEffect, useRef } from 'react';
import { nonNegativeAutoscale, openingRange, PRICE_MARGINS, rightSpaceBars } from './chart-view.ts';
import { CHART_OPTIONS, COLORS, useChartScheme } from './theme.ts';

export interface TCandle {
  /** YYYY-MM-DD */
  date: string;
  open: number;
  high: number;
  low: number;
  close: number;
}

export interface TFillMarker {
  date: string;
  side: 'buy' | 'sell';
  price: number;
  /** e.g. `buy 0.01 @ 50,000 USDT` */
  text: string;
}

const candleOf = (bar: TCandle): CandlestickData<Time> => ({ time: bar.date, open: bar.open, high: bar.high, low: bar.low, close: bar.close });

/** Markers sorted by time (the library needs that), snapped to the chart's bars by their date. */
const markersOf = (fills: readonly TFillMarker[]): SeriesMarker<Time>[] =>
  [...fills]
    .sort((a, b) => a.date.localeCompare(b.date))
    .map((fill) => ({
      time: fill.date,
      position: fill.side === 'buy' ? 'belowBar' : 'aboveBar',
      shape: fill.side === 'buy' ? 'arrowUp' : 'arrowDown',
      color: fill.side === 'buy' ? COLORS.up : COLORS.down,
      text: fill.text,
    }));

/**
 * `openDays`: open on the bars of the last that many days (the chart page); without it, on the
 * whole history (a backtest's run).
 */
export const PriceChart = ({ candles, fills, last, openDays, testId = 'price-chart' }: { candles: readonly TCandle[]; fills: readonly TFillMarker[]; last?: number | undefined; openDays?: number; testId?: string }) => {
  const box = useRef<HTMLDivElement>(null);
  const parts = useRef<{ chart: IChartApi; series: ISeriesApi<'Candlestick'>; markers: ISeriesMarkersPluginApi<Time>; lastLine?: IPriceLine }>(undefined);
  /** The first bar's date of the history the view was set for: another one is a new history. */
  const viewSetFor = useRef<string>(undefined);

  useEffect(() => {
    if (!box.current) return;
    const chart = createChart(box.current, { ...CHART_OPTIONS, rightPriceScale: { ...CHART_OPTIONS.rightPriceScale, scaleMargins: PRICE_MARGINS } });
    const series = chart.addSeries(CandlestickSeries, {
      upColor: COLORS.up,
      downColor: COLORS.down,
      wickUpColor: COLORS.up,
      wickDownColor: COLORS.down,
      borderVisible: false,
      autoscaleInfoProvider: (base: () => AutoscaleInfo | null) => nonNegativeAutoscale(base()),
    });
    parts.current = { chart, series, markers: createSeriesMarkers(series, []) };
    return () => {
      parts.current = undefined;
      // A chart made again (React's development remount) has no view yet.
      viewSetFor.current = undefined;
      chart.remove();
    };
  }, []);

  useEffect(() => {
    const current = parts.current;
    if (!current) return;
    current.series.setData(candles.map(candleOf));
    current.markers.setMarkers(markersOf(fills));
    const first = candles[0]?.date;
    if (first === viewSetFor.current) return;
    viewSetFor.current = first;
    if (first === undefined) return;
    const range = openDays === undefined ? undefined : openingRange(candles.map((bar) => bar.date), openDays);
    if (range) {
      current.chart.timeScale().setVisibleLogicalRange(range);
    } else {
      current.chart.timeScale().applyOptions({ rightOffset: rightSpaceBars(candles.length) });
      current.chart.timeScale().fitContent();
    }
  }, [candles, fills, openDays]);

  useChartScheme(useCallback(() => parts.current?.chart, []));

  useEffect(() => {
    const current = parts.current;
    if (!current || last === undefined) return;
    if (current.lastLine) current.lastLine.applyOptions({ price: last });
    else current.lastLine = current.series.createPriceLine({ price: last, color: COLORS.last, lineStyle: LineStyle.Dashed, lineWidth: 1, axisLabelVisible: true, title: 'last' });
  }, [last]);

  return <div ref={box} className="chart" data-testid={testId} data-bars={candles.length} data-markers={fills.length} data-last={last ?? ''} />;
};
