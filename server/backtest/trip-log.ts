// The round trips of one run, kept as columns while it runs: a whipsaw strategy closes tens of
// thousands per million bars, and as many objects kept to the end of the run cost the garbage
// collector more than the loop that makes them. Metrics read the column of cash results; the
// objects are made only when read.
import { withRoom } from './column-growth.ts';
import type { RoundTrip } from './types.ts';

const FIRST_CAPACITY = 256;

export class TripLog {
  private count = 0;
  /** Trip k's entry bar at 2k, its exit bar at 2k + 1. */
  private bars = new Int32Array(2 * FIRST_CAPACITY);
  private pnl = new Float64Array(FIRST_CAPACITY);
  /** Why each trip ended: an index of TRADE_REASONS (contracts/backtest.ts). */
  private exit = new Uint8Array(FIRST_CAPACITY);

  add(entryIndex: number, exitIndex: number, pnl: number, exit: number): void {
    const at = this.count;
    if (at === this.pnl.length) this.grow();
    this.bars[2 * at] = entryIndex;
    this.bars[2 * at + 1] = exitIndex;
    this.pnl[at] = pnl;
    this.exit[at] = exit;
    this.count = at + 1;
  }

  /** Each trip's cash result, oldest first: a view of the column, not a copy. */
  pnls(): Float64Array {
    return this.pnl.subarray(0, this.count);
  }

  /** Why each trip ended (indices of TRADE_REASONS), oldest first: a view of the column, not a copy. */
  exits(): Uint8Array {
    return this.exit.subarray(0, this.count);
  }

  /** Every trip as an object, oldest first. */
  list(): RoundTrip[] {
    const out: RoundTrip[] = [];
    for (let i = 0; i < this.count; i++) out.push({ entryIndex: this.bars[2 * i]!, exitIndex: this.bars[2 * i + 1]!, pnl: this.pnl[i]! });
    return out;
  }

  private grow(): void {
    const size = this.pnl.length * 4;
    this.bars = withRoom(this.bars, 2 * size);
    this.pnl = withRoom(this.pnl, size);
    this.exit = withRoom(this.exit, size);
  }
}
