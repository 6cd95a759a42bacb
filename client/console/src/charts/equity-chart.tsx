// A backtest's equity curve with its drawdown (equity over the running peak, minus one) in a
// second pane below, on lightweight-charts' canvas.
import { AreaSeries, createChart, LineSeries, type IChartApi, type ISeriesApi } from 'lightweight-charts';
import { useEffect, useRef } from 'react';
import type { TBacktestResult } from '@trading-service/client';
import { CHART_OPTIONS, schemeOptions, useChartPalette } from './theme.ts';

type TEquityPoint = TBacktestResult['equity_curve'][number];

/** Drawdown at each point as a fraction (0 at a new peak, negative below it). */
export const drawdownOf = (curve: readonly TEquityPoint[]): { date: string; drawdown: number }[] => {
  let peak = -Infinity;
  return curve.map((point) => {
    peak = Math.max(peak, point.equity);
    return { date: point.date, drawdown: peak > 0 ? point.equity / peak - 1 : 0 };
  });
};

/** `compact`: a shorter chart, beside other panels (the overview's). */
export const EquityChart = ({ curve, currency, testId = 'equity-chart', compact = false }: { curve: readonly TEquityPoint[]; currency: string; testId?: string; compact?: boolean }) => {
  const box = useRef<HTMLDivElement>(null);
  const parts = useRef<{ chart: IChartApi; equity: ISeriesApi<'Line'>; drawdown: ISeriesApi<'Area'> }>(undefined);
  const palette = useChartPalette();

  useEffect(() => {
    if (!box.current) return;
    const chart = createChart(box.current, CHART_OPTIONS);
    const equity = chart.addSeries(LineSeries, { lineWidth: 2, title: `equity ${currency}` }, 0);
    const drawdown = chart.addSeries(AreaSeries, { lineWidth: 1, title: 'drawdown %', priceFormat: { type: 'percent' } }, 1);
    parts.current = { chart, equity, drawdown };
    return () => {
      parts.current = undefined;
      chart.remove();
    };
  }, [currency]);

  // The scheme's colours, at creation and on every switch of the header's light/dark toggle.
  useEffect(() => {
    const current = parts.current;
    if (!current) return;
    current.chart.applyOptions(schemeOptions(palette));
    current.equity.applyOptions({ color: palette.line });
    current.drawdown.applyOptions({ lineColor: palette.drawdown, topColor: palette.drawdownTop, bottomColor: palette.drawdownBottom });
  }, [palette, currency]);

  useEffect(() => {
    const current = parts.current;
    if (!current) return;
    current.equity.setData(curve.map((point) => ({ time: point.date, value: point.equity })));
    current.drawdown.setData(drawdownOf(curve).map((point) => ({ time: point.date, value: point.drawdown * 100 })));
    current.chart.timeScale().fitContent();
  }, [curve, currency]);

  return <div ref={box} className={compact ? 'chart chart-compact' : 'chart chart-tall'} data-testid={testId} data-points={curve.length} data-currency={currency} />;
};
