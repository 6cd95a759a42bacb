// Daily candles with fill markers and an optional live last price, on lightweight-charts'
// canvas (no inline script or style sheet: its sizes are set through the CSSOM, which the CSP
// allows). The container carries what it shows as data attributes, so tests read the DOM.
// The view is set when a history arrives (chart-view.ts: the last six months, or all of it), not
// on every tick or new fill, so a user's own zoom and scroll stay.
import { CandlestickSeries, createChart, createSeriesMarkers, LineStyle, type AutoscaleInfo, type CandlestickData, type IChartApi, type IPriceLine, type ISeriesApi, type ISeriesMarkersPluginApi, type SeriesMarker, type Time } from 'lightweight-charts';
import { useEffect, useRef } from 'react';
import { nonNegativeAutoscale, openingRange, PRICE_MARGINS, rightSpaceBars } from './chart-view.ts';
import { CHART_OPTIONS, schemeOptions, useChartPalette, type TChartPalette } from './theme.ts';

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
const markersOf = (fills: readonly TFillMarker[], palette: TChartPalette): SeriesMarker<Time>[] =>
  [...fills]
    .sort((a, b) => a.date.localeCompare(b.date))
    .map((fill) => ({
      time: fill.date,
      position: fill.side === 'buy' ? 'belowBar' : 'aboveBar',
      shape: fill.side === 'buy' ? 'arrowUp' : 'arrowDown',
      color: fill.side === 'buy' ? palette.up : palette.down,
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
  const palette = useChartPalette();

  useEffect(() => {
    if (!box.current) return;
    const chart = createChart(box.current, { ...CHART_OPTIONS, rightPriceScale: { ...CHART_OPTIONS.rightPriceScale, scaleMargins: PRICE_MARGINS } });
    const series = chart.addSeries(CandlestickSeries, {
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

  // The scheme's colours, at creation and on every switch of the header's light/dark toggle.
  useEffect(() => {
    const current = parts.current;
    if (!current) return;
    current.chart.applyOptions(schemeOptions(palette));
    current.series.applyOptions({ upColor: palette.up, downColor: palette.down, wickUpColor: palette.up, wickDownColor: palette.down });
    current.lastLine?.applyOptions({ color: palette.last });
  }, [palette]);

  useEffect(() => {
    const current = parts.current;
    if (!current) return;
    current.series.setData(candles.map(candleOf));
    current.markers.setMarkers(markersOf(fills, palette));
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
  }, [candles, fills, openDays, palette]);

  useEffect(() => {
    const current = parts.current;
    if (!current || last === undefined) return;
    if (current.lastLine) current.lastLine.applyOptions({ price: last });
    else current.lastLine = current.series.createPriceLine({ price: last, color: palette.last, lineStyle: LineStyle.Dashed, lineWidth: 1, axisLabelVisible: true, title: 'last' });
  }, [last, palette]);

  return <div ref={box} className="chart" data-testid={testId} data-bars={candles.length} data-markers={fills.length} data-last={last ?? ''} />;
};
