// The charts' common look: the console's palette, sized by the container (its CSS height).
import { ColorType, type DeepPartial, type ChartOptions } from 'lightweight-charts';

export const COLORS = { up: '#1d7a35', down: '#b3261e', line: '#1f4fa3', drawdown: '#b3261e', last: '#9a6700', grid: '#eef1f5', text: '#1b1f24' } as const;

export const CHART_OPTIONS: DeepPartial<ChartOptions> = {
  autoSize: true,
  layout: { background: { type: ColorType.Solid, color: '#ffffff' }, textColor: COLORS.text, attributionLogo: false },
  grid: { vertLines: { color: COLORS.grid }, horzLines: { color: COLORS.grid } },
  timeScale: { borderVisible: false },
  rightPriceScale: { borderVisible: false },
};
