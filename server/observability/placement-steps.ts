// The steps of an order's placement, published on a diagnostics channel for whoever listens (the
// order bench's BENCH_ORDERS_STEPS), so that where an order's time goes can be read without a
// profiler: from the placement's start through its gates, the books' queue and transaction, to
// its answer. Nothing is built or published while no one subscribes.
import diagnosticsChannel from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';

export const PLACEMENT_STEPS_CHANNEL = 'trading-service:placement-steps';

/**
 * `received` the placement began; `gated` its first four gates passed; `queued` it waits for a
 * transaction of the simulator's books; `began` that transaction began; `committed` it committed;
 * `answered` the placement answers with its order (a refusal, thrown, ends the steps where it
 * came). Orders of other brokers are neither queued nor in the books' transaction.
 */
export type TPlacementStep = 'received' | 'gated' | 'queued' | 'began' | 'committed' | 'answered';

export interface PlacementStep {
  userId: number;
  clientOrderId: string;
  step: TPlacementStep;
  /** performance.now() when the step was reached, ms. */
  at: number;
}

const channel = diagnosticsChannel.channel(PLACEMENT_STEPS_CHANNEL);

export const placementStep = (userId: number, clientOrderId: string, step: TPlacementStep): void => {
  if (!channel.hasSubscribers) return;
  const message: PlacementStep = { userId, clientOrderId, step, at: performance.now() };
  channel.publish(message);
};
