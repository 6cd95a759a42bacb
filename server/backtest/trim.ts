// What an answer holds of a long run: the equity curve cut to MAX_EQUITY_POINTS, evenly spaced
// but always with the first and last point and the curve's peak and trough (the points a reader
// of the curve looks for), and the first MAX_TRADES fills.
import { MAX_EQUITY_POINTS } from '../../contracts/backtest.ts';

/** The indices of the points to keep, ascending. */
export const curveIndices = (equity: Float64Array, max = MAX_EQUITY_POINTS): number[] => {
  const n = equity.length;
  if (n <= max) return Array.from({ length: n }, (_, i) => i);
  let peak = 0;
  let trough = 0;
  for (let i = 1; i < n; i++) {
    if (equity[i]! > equity[peak]!) peak = i;
    if (equity[i]! < equity[trough]!) trough = i;
  }
  const must = [...new Set([0, n - 1, peak, trough])];
  // Evenly spaced over the rest of the budget; the must-keep points replace their neighbours.
  const kept = new Set(must);
  const spaced = max - must.length;
  for (let k = 0; kept.size < max && k < spaced; k++) kept.add(Math.round(((k + 1) * (n - 1)) / (spaced + 1)));
  return [...kept].sort((a, b) => a - b);
};
