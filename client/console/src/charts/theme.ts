// The charts' look in the console's two schemes: the theme's gain, loss and accent colours, the
// panel's surface as the background, the grid and text as quiet as the tables'. lightweight-charts
// draws on a canvas, so it gets colours as values, not CSS variables; the palettes mirror
// theme/theme.ts (light: the console's own gain/loss; dark: Mantine's teal-4, red-4, blue-4 on dark-7).
import { useComputedColorScheme } from '@mantine/core';
import { ColorType, type ChartOptions, type DeepPartial } from 'lightweight-charts';

export type TChartScheme = 'light' | 'dark';

export interface TChartPalette {
  up: string;
  down: string;
  line: string;
  drawdown: string;
  /** The drawdown area's fill, faint at its top line and stronger at the bottom. */
  drawdownTop: string;
  drawdownBottom: string;
  last: string;
  grid: string;
  text: string;
  background: string;
  border: string;
}

export const PALETTES: Record<TChartScheme, TChartPalette> = {
  light: {
    up: '#1d7a35',
    down: '#b3261e',
    line: '#1971c2',
    drawdown: '#b3261e',
    drawdownTop: 'rgba(179, 38, 30, 0.05)',
    drawdownBottom: 'rgba(179, 38, 30, 0.3)',
    last: '#9a6700',
    grid: '#eef1f5',
    text: '#343a40',
    background: '#ffffff',
    border: '#dee2e6',
  },
  dark: {
    up: '#38d9a9',
    down: '#ff8787',
    line: '#4dabf7',
    drawdown: '#ff8787',
    drawdownTop: 'rgba(255, 135, 135, 0.04)',
    drawdownBottom: 'rgba(255, 135, 135, 0.28)',
    last: '#ffd43b',
    grid: '#2e2e2e',
    text: '#c9c9c9',
    background: '#242424',
    border: '#424242',
  },
};

/** The light palette, for code that draws before it knows the scheme. */
export const COLORS = PALETTES.light;

/** The options that follow the scheme; applied at creation and again on a switch. */
export const schemeOptions = (palette: TChartPalette): DeepPartial<ChartOptions> => ({
  layout: { background: { type: ColorType.Solid, color: palette.background }, textColor: palette.text, attributionLogo: false },
  grid: { vertLines: { color: palette.grid }, horzLines: { color: palette.grid } },
  crosshair: { vertLine: { labelBackgroundColor: palette.line }, horzLine: { labelBackgroundColor: palette.line } },
});

export const CHART_OPTIONS: DeepPartial<ChartOptions> = {
  autoSize: true,
  ...schemeOptions(COLORS),
  timeScale: { borderVisible: false },
  rightPriceScale: { borderVisible: false },
};

/** The palette of the scheme the page shows now (the <html> attribute Mantine keeps), following the header's switch. */
export const useChartPalette = (): TChartPalette => PALETTES[useComputedColorScheme('light')];
