// Daily candles with fill markers and an optional live last price, on lightweight-charts'
// canvas (no inline script or style sheet: its sizes are set through the CSSOM, which the CSP
// allows). The container carries what it shows as data attributes, so tests read the DOM.
import { CandlestickSeries, createChart, createSeriesMarkers, LineStyle, type CandlestickData, type IChartApi, type IPriceLine, type ISeriesApi, type ISeriesMarkersPluginApi, type SeriesMarker, type Time } from 'lightweight-charts';
import { useEffect, useRef } from 'react';
import { CHART_OPTIONS, COLORS } from './theme.ts';

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

export const PriceChart = ({ candles, fills, last, testId = 'price-chart' }: { candles: readonly TCandle[]; fills: readonly TFillMarker[]; last?: number | undefined; testId?: string }) => {
  const box = useRef<HTMLDivElement>(null);
  const parts = useRef<{ chart: IChartApi; series: ISeriesApi<'Candlestick'>; markers: ISeriesMarkersPluginApi<Time>; lastLine?: IPriceLine }>(undefined);

  useEffect(() => {
    if (!box.current) return;
    const chart = createChart(box.current, CHART_OPTIONS);
    const series = chart.addSeries(CandlestickSeries, { upColor: COLORS.up, downColor: COLORS.down, wickUpColor: COLORS.up, wickDownColor: COLORS.down, borderVisible: false });
    parts.current = { chart, series, markers: createSeriesMarkers(series, []) };
    return () => {
      parts.current = undefined;
      chart.remove();
    };
  }, []);

  useEffect(() => {
    const current = parts.current;
    if (!current) return;
    current.series.setData(candles.map(candleOf));
    current.markers.setMarkers(markersOf(fills));
    current.chart.timeScale().fitContent();
  }, [candles, fills]);

  useEffect(() => {
    const current = parts.current;
    if (!current || last === undefined) return;
    if (current.lastLine) current.lastLine.applyOptions({ price: last });
    else current.lastLine = current.series.createPriceLine({ price: last, color: COLORS.last, lineStyle: LineStyle.Dashed, lineWidth: 1, axisLabelVisible: true, title: 'last' });
  }, [last]);

  return <div ref={box} className="chart" data-testid={testId} data-bars={candles.length} data-markers={fills.length} data-last={last ?? ''} />;
};
