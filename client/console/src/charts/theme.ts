// The charts' common look: the console's palette, sized by the container (its CSS height), its
// ground, grid and text following the console's light or dark scheme (useChartScheme).
import { useComputedColorScheme } from '@mantine/core';
import { useEffect } from 'react';
import { ColorType, type DeepPartial, type ChartOptions, type IChartApi } from 'lightweight-charts';

export const COLORS = { up: '#1d7a35', down: '#b3261e', line: '#1f4fa3', drawdown: '#b3261e', last: '#9a6700', grid: '#eef1f5', text: '#1b1f24' } as const;

/** The scheme's ground (the panels' surface), grid and axis text. */
const SCHEMES: Record<'light' | 'dark', DeepPartial<ChartOptions>> = {
  light: { layout: { background: { type: ColorType.Solid, color: '#ffffff' }, textColor: COLORS.text }, grid: { vertLines: { color: COLORS.grid }, horzLines: { color: COLORS.grid } } },
  dark: { layout: { background: { type: ColorType.Solid, color: '#242424' }, textColor: '#c9c9c9' }, grid: { vertLines: { color: '#2e2e2e' }, horzLines: { color: '#2e2e2e' } } },
};

export const CHART_OPTIONS: DeepPartial<ChartOptions> = {
  autoSize: true,
  layout: { ...SCHEMES.light.layout, attributionLogo: false },
  grid: SCHEMES.light.grid,
  timeScale: { borderVisible: false },
  rightPriceScale: { borderVisible: false },
};

/** Keeps a chart in the console's scheme, now and when the trader switches it. */
export const useChartScheme = (chart: () => IChartApi | undefined): void => {
  const scheme = useComputedColorScheme('light');
  useEffect(() => {
    chart()?.applyOptions(SCHEMES[scheme]);
  }, [chart, scheme]);
};
